// Contract shapes of the evaluation and version routers (docs: /work/shared/API.md, M4 contract).
// Written out here so every component agrees on them; tRPC's inferred outputs are checked against
// these at each call site.
import type { ScoringMethod, ScoringPolicy } from '@/server/prompts/schemas';

export type { ScoringMethod, ScoringPolicy };

export type EvaluationStatus = 'pending' | 'running' | 'paused' | 'completed' | 'failed' | 'cancelled';
export type Side = 'candidate' | 'production';
export type Scope = 'quick' | 'comprehensive';
export type ResultStatus = 'pending' | 'scored' | 'pending_review' | 'error';
export type ReviewDecision = 'accept_generated' | 'accept_corrected' | 'mark_correct' | 'mark_incorrect';

export type SideSummary = {
  status: EvaluationStatus;
  scoredCases: number;
  passedCases: number;
  failedCases: number;
  pendingReviewCases: number;
  errorCases: number;
  pendingCases: number;
  passRate: number;
};

export type Evaluation = {
  id: string;
  promptId: string;
  kind: 'comparison' | 'baseline';
  versionId: string | null;
  version: number | null;
  status: EvaluationStatus;
  scope: Scope;
  totalCases: number;
  datasetSize: number;
  scoredCases: number;
  pendingReviewCases: number;
  passedCases: number;
  failedCases: number;
  errorCases: number;
  pendingCases: number;
  passRate: number;
  productionRunId: string | null;
  productionVersionId: string | null;
  candidateRunId: string;
  production: SideSummary | null;
  candidate: SideSummary;
  scoring: ScoringPolicy;
  createdAt: string;
  completedAt: string | null;
  error: string | null;
};

export type Assertion = { name: string; passed: boolean; message: string | null };

export type Review = { decision: ReviewDecision; correctedOutput: string | null; userId: string | null; clientId: string | null; human: boolean };

export type EvalResult = {
  id: string;
  caseId: string;
  position: number;
  side: Side;
  status: ResultStatus;
  input: string;
  output: string | null;
  expectedOutput: string;
  passed: boolean | null;
  score: number | null;
  assertions: Assertion[];
  error: string | null;
  review: Review | null;
  judgeReasoning?: string | null;
  latencyMs: number | null;
  inputTokens: number | null;
  outputTokens: number | null;
  costUsdNanos: number | null;
};

export type Estimate = {
  scope: Scope;
  datasetSize: number;
  totalCases: number;
  candidateCases: number;
  productionCases: number;
  reusedProductionRunId: string | null;
  credits: number;
  allowed: boolean;
  reason: string | null;
};

export type { Version, LabelItem as Label, LabelHistoryItem, ScoringPolicyView } from '@/server/prompts/schemas';

export const activeStatuses: EvaluationStatus[] = ['pending', 'running'];

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
