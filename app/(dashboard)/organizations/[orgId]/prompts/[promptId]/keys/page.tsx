import type { Metadata } from 'next';
import { RetrievalKeysPage } from '@/components/retrieval-keys/RetrievalKeysPage';

export const metadata: Metadata = { title: 'Retrieval keys' };

export default async function Page({ params }: { params: Promise<{ orgId: string; promptId: string }> }) {
  const { orgId, promptId } = await params;
  return <RetrievalKeysPage organizationId={orgId} promptId={promptId} />;
}
