import type { Metadata } from 'next';
import { Suspense } from 'react';
import { PromptListPage } from '@/components/prompts/PromptListPage';

export const metadata: Metadata = { title: 'Prompts' };

export default async function Page({ params }: { params: Promise<{ orgId: string }> }) {
  const { orgId } = await params;
  return (
    <Suspense>
      <PromptListPage organizationId={orgId} />
    </Suspense>
  );
}
