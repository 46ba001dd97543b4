import { eq, inArray, sql } from 'drizzle-orm';
import { evalResults, evalRuns, evaluations } from '@/db/schema';
import type { Actor, DbContext } from '@/server/context';
import { withTransaction } from '@/server/context';
import { AppError } from '@/server/errors';
import { log } from '@/server/log';
import { publishBaselineVersion } from '@/server/prompts/versions';
import { emitEvent } from '@/server/webhooks/outbox';
import type { ScoringPolicy } from '@/server/prompts/schemas';
import { reuseKeyOf } from '../freeze';
import { toEvaluation } from '../serialize';
import type { EvaluationStatus } from '../schemas';
import { rowsOf } from '@/db/client';

// Run and evaluation status, recomputed from the results (M4 contract "Run model"):
// a run is pending → running → completed (every result scored or pending_review) | failed (nothing
// pending or running, at least one error); cancelled and paused are set by the operations (and by
// the engine when eligibility refuses) and kept here. The evaluation follows its runs.

type Counts = { total: number; pending: number; running: number; scored: number; review: number; error: number };

async function countsOf(ctx: DbContext, runIds: string[]): Promise<Map<string, Counts>> {
  const rows = await ctx.db
    .select({
      runId: evalResults.runId,
      total: sql<number>`count(*)::int`,
      pending: sql<number>`(count(*) filter (where ${evalResults.status} = 'pending'))::int`,
      running: sql<number>`(count(*) filter (where ${evalResults.status} = 'running'))::int`,
      scored: sql<number>`(count(*) filter (where ${evalResults.status} = 'scored'))::int`,
      review: sql<number>`(count(*) filter (where ${evalResults.status} = 'pending_review'))::int`,
      error: sql<number>`(count(*) filter (where ${evalResults.status} = 'error'))::int`,
    })
    .from(evalResults)
    .where(inArray(evalResults.runId, runIds))
    .groupBy(evalResults.runId);
  return new Map(rows.map((r) => [r.runId, r]));
}

const empty: Counts = { total: 0, pending: 0, running: 0, scored: 0, review: 0, error: 0 };

// The status a pending or running run has now; other statuses are kept as they are.
function runStatusFrom(current: EvaluationStatus, c: Counts): EvaluationStatus {
  if (current !== 'pending' && current !== 'running') return current;
  if (c.pending + c.running > 0)
    return current === 'running' || c.running + c.scored + c.review + c.error > 0 ? 'running' : 'pending';
  return c.error > 0 ? 'failed' : 'completed';
}

function evaluationStatusFrom(current: EvaluationStatus, runs: EvaluationStatus[]): EvaluationStatus {
  if (current === 'cancelled') return 'cancelled';
  if (runs.includes('paused')) return 'paused';
  if (runs.some((s) => s === 'pending' || s === 'running'))
    return current === 'pending' && runs.every((s) => s === 'pending' || s === 'completed') ? 'pending' : 'running';
  if (runs.includes('cancelled')) return 'cancelled';
  if (runs.includes('failed')) return 'failed';
  return 'completed';
}

function failureMessage(c: Counts): string {
  return `${c.error} of ${c.total} case${c.total === 1 ? '' : 's'} could not be executed.`;
}

/**
 * Recomputes the evaluation's runs and status (in the caller's transaction when there is one) and,
 * when a baseline has completed with every case scored, no review pending and no execution error,
 * publishes its frozen draft as version 1 in the same transaction, acting as its creator.
 * The engine's transaction owner: the job runner calls it on the root handle (it opens one); cancel
 * and resume call it inside their edge's transaction (it joins that one).
 */
export async function refreshEvaluation(ctx: DbContext, evaluationId: string): Promise<void> {
  await withTransaction(ctx, async (txCtx) => {
    const tx = txCtx.db;
    const [evaluation] = await tx.select().from(evaluations).where(eq(evaluations.id, evaluationId)).for('update');
    if (!evaluation) return;
    const runIds = [evaluation.candidateRunId, evaluation.productionRunId].filter((id): id is string => Boolean(id));
    const runs = await tx
      .select()
      .from(evalRuns)
      .where(inArray(evalRuns.id, runIds))
      .orderBy(evalRuns.id)
      .for('update');
    const counts = await countsOf(txCtx, runIds);
    const now = new Date();
    const statuses: EvaluationStatus[] = [];
    for (const run of runs) {
      const c = counts.get(run.id) ?? empty;
      const status = runStatusFrom(run.status, c);
      statuses.push(status);
      if (status !== run.status) {
        const finished = status === 'completed' || status === 'failed';
        await tx
          .update(evalRuns)
          .set({
            status,
            updatedAt: now,
            completedAt: finished ? now : null,
            error: status === 'failed' ? failureMessage(c) : null,
          })
          .where(eq(evalRuns.id, run.id));
      }
    }
    const status = evaluationStatusFrom(evaluation.status, statuses);
    const changes: Partial<typeof evaluations.$inferInsert> = {};
    if (status !== evaluation.status) {
      changes.status = status;
      changes.completedAt = status === 'completed' || status === 'failed' ? now : null;
      if (status === 'failed') {
        const failedRun = runs.find((r, i) => statuses[i] === 'failed');
        changes.error = failureMessage(counts.get(failedRun!.id) ?? empty);
      } else if (status === 'running' || status === 'completed') changes.error = null;
    }
    const candidate = counts.get(evaluation.candidateRunId) ?? empty;
    if (
      evaluation.kind === 'baseline' &&
      status === 'completed' &&
      !evaluation.versionId &&
      candidate.total > 0 &&
      candidate.scored === candidate.total &&
      evaluation.draftRevision !== null
    ) {
      const run = runs.find((r) => r.id === evaluation.candidateRunId)!;
      const actor: Actor = {
        userId: evaluation.createdBy,
        clientId: evaluation.createdByClient,
        human: evaluation.createdByHuman,
      };
      try {
        // A savepoint: a refused publish (the prompt left setup another way) keeps the status update.
        const version = await tx.transaction((sp) =>
          publishBaselineVersion(
            { ...txCtx, db: sp, actor },
            {
              organizationId: evaluation.organizationId,
              promptId: evaluation.promptId,
              content: run.content,
              draftUserId: evaluation.createdBy,
              draftRevision: evaluation.draftRevision!,
              evaluationId: evaluation.id,
            },
          ),
        );
        changes.versionId = version.id;
        changes.version = version.number;
        // The run executed exactly version 1's content: production evidence a first comparison reuses.
        await tx
          .update(evalRuns)
          .set({
            versionId: version.id,
            reuseKey: reuseKeyOf(version.id, run.casesDigest, run.scoring as ScoringPolicy),
          })
          .where(eq(evalRuns.id, run.id));
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        log.warn({ evaluationId, code: error.code }, 'baseline not published');
        changes.error = `Version 1 was not published: ${error.message}`;
      }
    }
    if (!Object.keys(changes).length) return;
    const [updated] = await tx
      .update(evaluations)
      .set({ ...changes, updatedAt: now })
      .where(eq(evaluations.id, evaluation.id))
      .returning();
    // evaluation.completed / evaluation.failed, once per transition (a refresh that finds the
    // status unchanged writes none), with the evaluation as it reads after this refresh.
    if (changes.status === 'completed' || changes.status === 'failed')
      await emitEvent(txCtx, {
        organizationId: updated.organizationId,
        type: changes.status === 'completed' ? 'evaluation.completed' : 'evaluation.failed',
        data: await toEvaluation(txCtx, updated),
      });
  });
}

type Snapshot = {
  evaluationId: string;
  evaluationStatus: EvaluationStatus;
  kind: 'comparison' | 'baseline';
  published: boolean;
  runId: string;
  runStatus: EvaluationStatus;
} & Counts;

/**
 * After a case finished (the engine): one unlocked read of every evaluation using the run, with
 * one aggregate per run; only an evaluation whose status would change (or a baseline that may now
 * publish) is refreshed under its locks. Most cases change nothing, so this stays cheap.
 */
export async function refreshRun(ctx: DbContext, runId: string): Promise<void> {
  const rows = rowsOf<Snapshot>(
    await ctx.db.execute(sql`
      select e.id as "evaluationId", e.status as "evaluationStatus", e.kind, e.version_id is not null as published,
        run.id as "runId", run.status as "runStatus", c.*
      from evaluations e
      join eval_runs run on run.id = e.candidate_run_id or run.id = e.production_run_id
      cross join lateral (
        select count(*)::int as total,
          (count(*) filter (where r.status = 'pending'))::int as pending,
          (count(*) filter (where r.status = 'running'))::int as running,
          (count(*) filter (where r.status = 'scored'))::int as scored,
          (count(*) filter (where r.status = 'pending_review'))::int as review,
          (count(*) filter (where r.status = 'error'))::int as error
        from eval_results r where r.run_id = run.id
      ) c
      where e.candidate_run_id = ${runId} or e.production_run_id = ${runId}`),
  );
  const byEvaluation = new Map<string, Snapshot[]>();
  for (const row of rows) byEvaluation.set(row.evaluationId, [...(byEvaluation.get(row.evaluationId) ?? []), row]);
  for (const [evaluationId, runs] of byEvaluation) {
    const statuses = runs.map((r) => runStatusFrom(r.runStatus, r));
    const changed =
      runs.some((r, i) => statuses[i] !== r.runStatus) ||
      evaluationStatusFrom(runs[0].evaluationStatus, statuses) !== runs[0].evaluationStatus;
    const mayPublish = runs[0].kind === 'baseline' && !runs[0].published && runs[0].evaluationStatus === 'completed';
    if (changed || mayPublish) await refreshEvaluation(ctx, evaluationId);
  }
}
