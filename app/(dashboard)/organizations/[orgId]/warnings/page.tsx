import type { Metadata } from 'next';
import { WarningsPage } from '@/components/warnings/WarningsPage';

export const metadata: Metadata = { title: 'Warnings' };

export default async function Page({ params }: { params: Promise<{ orgId: string }> }) {
  const { orgId } = await params;
  return <WarningsPage organizationId={orgId} />;
}
