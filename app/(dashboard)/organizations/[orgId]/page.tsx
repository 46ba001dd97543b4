import type { Metadata } from 'next';
import { OrganizationOverview } from '@/components/organizations/OrganizationOverview';

export const metadata: Metadata = { title: 'Overview' };

export default async function Page({ params }: { params: Promise<{ orgId: string }> }) {
  const { orgId } = await params;
  return <OrganizationOverview organizationId={orgId} />;
}
