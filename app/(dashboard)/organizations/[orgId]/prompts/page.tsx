import type { Metadata } from 'next';
import { PromptListPage } from '@/components/prompts/PromptListPage';

export const metadata: Metadata = { title: 'Prompts' };

// Dynamic (it awaits params), so the list's useSearchParams needs no Suspense boundary.
export default async function Page({ params }: { params: Promise<{ orgId: string }> }) {
  const { orgId } = await params;
  return <PromptListPage organizationId={orgId} />;
}
