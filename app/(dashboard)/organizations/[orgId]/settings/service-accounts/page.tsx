import type { Metadata } from 'next';
import { ServiceAccountsPage } from '@/components/service-accounts/ServiceAccountsPage';

export const metadata: Metadata = { title: 'Service accounts' };

export default async function Page({ params }: { params: Promise<{ orgId: string }> }) {
  const { orgId } = await params;
  return <ServiceAccountsPage organizationId={orgId} />;
}
