import { inArray, or, sql } from 'drizzle-orm';
import { evalResults, evalRuns, evaluations, promptVersions } from '@/db/schema';
import type { DbContext } from '../context';
import type { Evaluation, EvaluationSide, Result, ReviewRecord, SideSummary } from './schemas';

export type EvaluationRow = typeof evaluations.$inferSelect;
export type ResultRow = typeof evalResults.$inferSelect;

type RunCounts = {
  runId: string;
  status: SideSummary['status'];
  createdAt: Date;
  total: number;
  pending: number;
  scored: number;
  passed: number;
  pendingReview: number;
  error: number;
};

// One aggregate query for every run of the given evaluations (no query per evaluation in lists).
async function countsByRun(ctx: DbContext, runIds: string[]): Promise<Map<string, RunCounts>> {
  const byRun = new Map<string, RunCounts>();
  if (!runIds.length) return byRun;
  const rows = await ctx.db
    .select({
      runId: evalRuns.id,
      status: evalRuns.status,
      createdAt: evalRuns.createdAt,
      total: sql<number>`count(${evalResults.id})::int`,
      pending: sql<number>`count(*) filter (where ${evalResults.status} in ('pending', 'running'))::int`,
      scored: sql<number>`count(*) filter (where ${evalResults.status} = 'scored')::int`,
      passed: sql<number>`count(*) filter (where ${evalResults.status} = 'scored' and ${evalResults.passed})::int`,
      pendingReview: sql<number>`count(*) filter (where ${evalResults.status} = 'pending_review')::int`,
      error: sql<number>`count(*) filter (where ${evalResults.status} = 'error')::int`,
    })
    .from(evalRuns)
    .leftJoin(evalResults, sql`${evalResults.runId} = ${evalRuns.id}`)
    .where(inArray(evalRuns.id, runIds))
    .groupBy(evalRuns.id, evalRuns.status, evalRuns.createdAt);
  for (const row of rows) byRun.set(row.runId, row);
  return byRun;
}

function summary(runId: string, counts: RunCounts | undefined, reused: boolean): SideSummary {
  const c = counts ?? {
    runId,
    status: 'pending' as const,
    createdAt: new Date(0),
    total: 0,
    pending: 0,
    scored: 0,
    passed: 0,
    pendingReview: 0,
    error: 0,
  };
  return {
    runId,
    reused,
    status: c.status,
    totalCases: c.total,
    scoredCases: c.scored,
    passedCases: c.passed,
    failedCases: c.scored - c.passed,
    pendingReviewCases: c.pendingReview,
    errorCases: c.error,
    pendingCases: c.pending,
    passRate: c.scored ? c.passed / c.scored : 0,
  };
}

// Version numbers: the candidate's and pinned production's, and a baseline's published version 1.
async function versionsFor(
  ctx: DbContext,
  rows: EvaluationRow[],
): Promise<{ byId: Map<string, number>; bySource: Map<string, { id: string; number: number }> }> {
  const ids = [
    ...new Set(rows.flatMap((r) => [r.versionId, r.productionVersionId]).filter((v): v is string => Boolean(v))),
  ];
  const baselines = rows.filter((r) => r.kind === 'baseline').map((r) => r.id);
  const byId = new Map<string, number>();
  const bySource = new Map<string, { id: string; number: number }>();
  if (!ids.length && !baselines.length) return { byId, bySource };
  const conditions = [];
  if (ids.length) conditions.push(inArray(promptVersions.id, ids));
  if (baselines.length) conditions.push(inArray(promptVersions.sourceEvaluationId, baselines));
  const versions = await ctx.db
    .select({
      id: promptVersions.id,
      number: promptVersions.number,
      sourceEvaluationId: promptVersions.sourceEvaluationId,
    })
    .from(promptVersions)
    .where(or(...conditions));
  for (const v of versions) {
    byId.set(v.id, v.number);
    if (v.sourceEvaluationId) bySource.set(v.sourceEvaluationId, { id: v.id, number: v.number });
  }
  return { byId, bySource };
}

// Fresh runs are inserted with the evaluation's own creation time; reused evidence is older.
function isReused(row: EvaluationRow, counts: RunCounts | undefined): boolean {
  return counts !== undefined && counts.createdAt.getTime() < row.createdAt.getTime();
}

export async function toEvaluations(ctx: DbContext, rows: EvaluationRow[]): Promise<Evaluation[]> {
  const runIds = rows.flatMap((r) => (r.productionRunId ? [r.candidateRunId, r.productionRunId] : [r.candidateRunId]));
  const [counts, versions] = await Promise.all([countsByRun(ctx, runIds), versionsFor(ctx, rows)]);
  return rows.map((row) => {
    const candidate = summary(row.candidateRunId, counts.get(row.candidateRunId), false);
    const production = row.productionRunId
      ? summary(row.productionRunId, counts.get(row.productionRunId), isReused(row, counts.get(row.productionRunId)))
      : null;
    const published = row.kind === 'baseline' ? versions.bySource.get(row.id) : undefined;
    const versionId = row.versionId ?? published?.id ?? null;
    return {
      id: row.id,
      promptId: row.promptId,
      kind: row.kind,
      versionId,
      version: row.version ?? (versionId ? (versions.byId.get(versionId) ?? published?.number ?? null) : null),
      status: row.status,
      scope: row.scope,
      rerunBoth: row.rerunBoth,
      totalCases: candidate.totalCases,
      datasetSize: row.datasetSize,
      scoredCases: candidate.scoredCases,
      pendingReviewCases: candidate.pendingReviewCases,
      passedCases: candidate.passedCases,
      failedCases: candidate.failedCases,
      errorCases: candidate.errorCases,
      pendingCases: candidate.pendingCases,
      passRate: candidate.passRate,
      productionRunId: row.productionRunId,
      productionVersionId: row.productionVersionId,
      productionVersion: row.productionVersionId ? (versions.byId.get(row.productionVersionId) ?? null) : null,
      candidateRunId: row.candidateRunId,
      candidate,
      production,
      scoring: row.scoring as Evaluation['scoring'],
      createdAt: row.createdAt.toISOString(),
      completedAt: row.completedAt?.toISOString() ?? null,
      error: row.error,
    };
  });
}

export async function toEvaluation(ctx: DbContext, row: EvaluationRow): Promise<Evaluation> {
  return (await toEvaluations(ctx, [row]))[0];
}

type StoredAssertion = { name?: unknown; passed?: unknown; message?: unknown };

export function toResult(row: ResultRow, side: EvaluationSide): Result {
  const assertions = Array.isArray(row.assertions) ? (row.assertions as StoredAssertion[]) : [];
  return {
    id: row.id,
    caseId: row.caseId,
    position: row.position,
    side,
    status: row.status === 'running' ? 'pending' : row.status,
    input: row.input,
    output: row.output,
    expectedOutput: row.expectedOutput,
    inputFormat: row.inputFormat,
    referenceFormat: row.referenceFormat,
    passed: row.passed,
    score: row.score,
    assertions: assertions.map((a) => ({
      name: String(a.name ?? ''),
      passed: a.passed === true,
      message: typeof a.message === 'string' ? a.message : null,
    })),
    judgeReasoning: row.judgeReasoning,
    error: row.error,
    review: (row.review as ReviewRecord | null) ?? null,
    latencyMs: row.latencyMs,
    inputTokens: row.inputTokens,
    outputTokens: row.outputTokens,
    costUsdNanos: row.costUsdNanos,
  };
}
