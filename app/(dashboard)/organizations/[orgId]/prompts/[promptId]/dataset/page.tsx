import type { Metadata } from 'next';
import { DatasetPage } from '@/components/datasets/DatasetPage';

export const metadata: Metadata = { title: 'Dataset' };

export default async function Page({ params }: { params: Promise<{ orgId: string; promptId: string }> }) {
  const { orgId, promptId } = await params;
  return <DatasetPage organizationId={orgId} promptId={promptId} />;
}
