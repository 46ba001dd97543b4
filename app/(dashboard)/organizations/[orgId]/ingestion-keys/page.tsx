import type { Metadata } from 'next';
import { IngestionKeysPage } from '@/components/ingestion-keys/IngestionKeysPage';

export const metadata: Metadata = { title: 'Ingestion keys' };

export default async function Page({ params }: { params: Promise<{ orgId: string }> }) {
  const { orgId } = await params;
  return <IngestionKeysPage organizationId={orgId} />;
}
