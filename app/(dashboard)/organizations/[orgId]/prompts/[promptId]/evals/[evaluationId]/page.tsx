import type { Metadata } from 'next';
import { EvaluationPage } from '@/components/evals/EvaluationPage';

export const metadata: Metadata = { title: 'Evaluation' };

export default async function Page({
  params,
}: {
  params: Promise<{ orgId: string; promptId: string; evaluationId: string }>;
}) {
  const { orgId, promptId, evaluationId } = await params;
  return <EvaluationPage organizationId={orgId} promptId={promptId} evaluationId={evaluationId} />;
}
