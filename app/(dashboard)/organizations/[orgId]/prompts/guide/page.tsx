import type { Metadata } from 'next';
import { ImportGuidePage } from '@/components/imports/ImportGuidePage';

export const metadata: Metadata = { title: 'Coming from OpenAI prompts or Langfuse' };

export default async function Page({ params }: { params: Promise<{ orgId: string }> }) {
  const { orgId } = await params;
  return <ImportGuidePage organizationId={orgId} />;
}
