import type { Metadata } from 'next';
import { EvaluationsPage } from '@/components/evals/EvaluationsPage';

export const metadata: Metadata = { title: 'Evaluations' };

export default async function Page({ params }: { params: Promise<{ orgId: string; promptId: string }> }) {
  const { orgId, promptId } = await params;
  return <EvaluationsPage organizationId={orgId} promptId={promptId} />;
}
