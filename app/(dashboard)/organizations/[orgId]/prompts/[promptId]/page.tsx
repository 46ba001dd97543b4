import type { Metadata } from 'next';
import { PromptEditorPage } from '@/components/prompts/editor/PromptEditorPage';

export const metadata: Metadata = { title: 'Prompt editor' };

export default async function Page({ params }: { params: Promise<{ orgId: string; promptId: string }> }) {
  const { orgId, promptId } = await params;
  return <PromptEditorPage organizationId={orgId} promptId={promptId} />;
}
