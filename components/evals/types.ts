// Contract shapes of the evaluation and version routers are owned by server/evals/schemas.ts and
// server/prompts/schemas.ts; the dashboard re-exports them (types only).
import type { ScoringMethod } from '@/server/prompts/schemas';

export type { ScoringMethod };

export type {
  Evaluation,
  EvaluationStatus,
  ReviewDecision,
  SideSummary,
  Estimate,
  Result as EvalResult,
} from '@/server/evals/schemas';
export type { EvaluationScope as Scope, EvaluationSide as Side } from '@/server/evals/schemas';
import type { EvaluationStatus } from '@/server/evals/schemas';
export type ResultStatus = 'pending' | 'scored' | 'pending_review' | 'error';

export type { Version, LabelItem as Label, LabelHistoryItem } from '@/server/prompts/schemas';

const activeStatuses: EvaluationStatus[] = ['pending', 'running'];

export function isActive(status: EvaluationStatus): boolean {
  return activeStatuses.includes(status);
}

export const scoringLabels: Record<ScoringMethod, string> = {
  expected: 'Expected output',
  judge: 'Model judge',
  review: 'Human review',
};

export function percent(rate: number | null | undefined): string {
  if (rate === null || rate === undefined || Number.isNaN(rate)) return '—';
  return `${Math.round(rate * 1000) / 10}%`;
}

// A side that was cancelled or failed: the cases it still counts as pending will not run.
export function stoppedSide(summary: { status: EvaluationStatus } | null): boolean {
  return summary !== null && (summary.status === 'cancelled' || summary.status === 'failed');
}
