import { and, eq, inArray, sql } from 'drizzle-orm';
import { evalResults, evalRuns, evaluations } from '@/db/schema';
import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { AppError } from '../errors';
import { recordAudit } from '../audit/service';
import { resolveWarning } from '../warnings/service';
import { assertNotArchived, authorizeOrganizationWrite, loadPrompt, type PromptRow } from '../access/organization';
import { enqueueRuns } from './engine/queue';
import { checkEligibility } from './eligibility';
import { loadEvaluation } from './queries';
import { toEvaluation, type EvaluationRow } from './serialize';
import type { Evaluation } from './schemas';
import { archivePrompt } from '../prompts/service';
import type { Prompt } from '../prompts/schemas';

// State operations on one evaluation: cancel, resume, retry a side. Start, initialize, review and
// the reads live in start.ts, initialize.ts, review.ts and queries.ts.

const unfinished = ['pending', 'running', 'paused'] as const;

/**
 * Every write to an evaluation: editor or admin, a writable organization, the evaluation (locked,
 * so writes to it and the engine's refresh serialize), and its prompt (locked too, so an archive
 * waits for the write or the write sees the archive), which must not be archived unless the
 * operation only stops work.
 */
export async function authorizeEvaluationWrite(
  ctx: ServiceContext,
  organizationId: string,
  evaluationId: string,
  options: { allowArchived?: boolean } = {},
): Promise<{ evaluation: EvaluationRow; prompt: PromptRow }> {
  await authorizeOrganizationWrite(ctx, organizationId, 'prompts.write');
  const evaluation = await loadEvaluation(ctx, organizationId, evaluationId, { lock: true });
  // FOR UPDATE, not SHARE: a write here may go on to publish a baseline, which updates the prompt.
  const prompt = await loadPrompt(ctx, organizationId, evaluation.promptId, { lock: true });
  if (!options.allowArchived) assertNotArchived(prompt);
  return { evaluation, prompt };
}

async function pendingReviews(ctx: ServiceContext, evaluation: EvaluationRow): Promise<number> {
  const [row] = await ctx.db
    .select({ count: sql<number>`count(*)::int` })
    .from(evalResults)
    .where(and(inArray(evalResults.runId, runIdsOf(evaluation)), eq(evalResults.status, 'pending_review')));
  return row.count;
}

function runIdsOf(evaluation: EvaluationRow): string[] {
  return evaluation.productionRunId
    ? [evaluation.candidateRunId, evaluation.productionRunId]
    : [evaluation.candidateRunId];
}

/**
 * Stops an unfinished evaluation: it and its unfinished runs become cancelled; pending results stay
 * pending and are never claimed, finished ones are kept (a call already in flight may still land).
 * Reused production evidence is completed and untouched. A completed evaluation with results still
 * awaiting review has pending work too (a review-scored baseline publishes only with its last
 * review): it can be cancelled, which drops it without publishing; its runs keep their results.
 * Allowed on archived prompts: stopping spending never needs a writable prompt.
 */
export async function cancelEvaluation(
  ctx: ServiceContext,
  { organizationId, evaluationId }: OperationInput<'cancel_evaluation'>,
): Promise<Evaluation> {
  const { evaluation } = await authorizeEvaluationWrite(ctx, organizationId, evaluationId, { allowArchived: true });
  const awaitingReview = evaluation.status === 'completed' && (await pendingReviews(ctx, evaluation)) > 0;
  if (!(unfinished as readonly string[]).includes(evaluation.status) && !awaitingReview) {
    throw new AppError(
      'invalid_state',
      `This evaluation is ${evaluation.status}; only pending, running or paused evaluations, or completed ones with results awaiting review, can be cancelled.`,
      {
        state: evaluation.status,
      },
    );
  }
  const now = new Date();
  await ctx.db
    .update(evalRuns)
    .set({ status: 'cancelled', completedAt: now, updatedAt: now })
    .where(and(inArray(evalRuns.id, runIdsOf(evaluation)), inArray(evalRuns.status, [...unfinished])));
  const [row] = await ctx.db
    .update(evaluations)
    .set({ status: 'cancelled', completedAt: now, updatedAt: now })
    .where(eq(evaluations.id, evaluation.id))
    .returning();
  await recordAudit(ctx, {
    organizationId,
    operation: 'evaluation.cancel',
    targetType: 'evaluation',
    targetId: evaluation.id,
    details: { from: evaluation.status },
  });
  await resolveWarning(ctx.db, { organizationId, kind: 'evaluation_paused', subjectId: evaluation.id });
  return toEvaluation(ctx, row);
}

/**
 * Archives a prompt (prompts/service.ts) and cancels its evaluations that are still pending, running
 * or paused, in the same transaction: an archived prompt is read-only, so their results could never
 * be reviewed or promoted, and they would go on spending credits. Each cancel is audited as usual.
 */
export async function archivePromptStoppingEvaluations(
  ctx: ServiceContext,
  input: OperationInput<'archive_prompt'>,
): Promise<Prompt> {
  const prompt = await archivePrompt(ctx, input);
  const open = await ctx.db
    .select({ id: evaluations.id })
    .from(evaluations)
    .where(
      and(
        eq(evaluations.organizationId, input.organizationId),
        eq(evaluations.promptId, input.promptId),
        inArray(evaluations.status, [...unfinished]),
      ),
    )
    .orderBy(evaluations.id);
  for (const { id } of open) await cancelEvaluation(ctx, { organizationId: input.organizationId, evaluationId: id });
  return prompt;
}

/**
 * Resumes a paused evaluation (answered 202) when the plan and usage allow it now. Its paused runs
 * go back to pending with their original frozen inputs; finished cases are never repeated.
 */
export async function resumeEvaluation(
  ctx: ServiceContext,
  { organizationId, evaluationId }: OperationInput<'resume_evaluation'>,
): Promise<Evaluation> {
  const { evaluation } = await authorizeEvaluationWrite(ctx, organizationId, evaluationId);
  if (evaluation.status !== 'paused') {
    throw new AppError(
      'invalid_state',
      `This evaluation is ${evaluation.status}; only a paused evaluation can be resumed.`,
      { state: evaluation.status },
    );
  }
  await checkEligibility(ctx, { organizationId, scope: evaluation.scope, action: 'resume' });
  const now = new Date();
  const resumed = await ctx.db
    .update(evalRuns)
    .set({ status: 'pending', updatedAt: now })
    .where(and(inArray(evalRuns.id, runIdsOf(evaluation)), eq(evalRuns.status, 'paused')))
    .returning({ id: evalRuns.id });
  const [row] = await ctx.db
    .update(evaluations)
    // The pause's reason is no longer the evaluation's state.
    .set({ status: 'running', error: null, updatedAt: now })
    .where(eq(evaluations.id, evaluation.id))
    .returning();
  await recordAudit(ctx, {
    organizationId,
    operation: 'evaluation.resume',
    targetType: 'evaluation',
    targetId: evaluation.id,
    details: { runIds: resumed.map((r) => r.id) },
  });
  await resolveWarning(ctx.db, { organizationId, kind: 'evaluation_paused', subjectId: evaluation.id });
  enqueueRuns(
    ctx,
    resumed.map((r) => r.id),
  );
  return toEvaluation(ctx, row);
}

/**
 * Re-runs one failed or cancelled side with its exact frozen inputs and the pinned production
 * version: the run goes back to pending, its error, pending and unfinished results to pending;
 * scored results, charges and the other side's evidence are kept. Reused production evidence
 * belongs to an earlier evaluation and cannot be retried here (start with rerunBoth instead).
 * A cancelled baseline never publishes, so it cannot be retried; a failed one can while the
 * prompt is in setup and no other baseline is in progress.
 */
export async function retryEvaluationSide(
  ctx: ServiceContext,
  { organizationId, evaluationId, side }: OperationInput<'retry_evaluation_side'>,
): Promise<Evaluation> {
  const { db } = ctx;
  const { evaluation, prompt } = await authorizeEvaluationWrite(ctx, organizationId, evaluationId);
  const runId = side === 'candidate' ? evaluation.candidateRunId : evaluation.productionRunId;
  if (!runId)
    throw new AppError('invalid_state', 'A baseline has no production side.', { state: 'no_production_side' });
  const [run] = await db.select().from(evalRuns).where(eq(evalRuns.id, runId)).for('update');
  if (side === 'production' && run.createdAt.getTime() < evaluation.createdAt.getTime()) {
    throw new AppError(
      'invalid_state',
      'The production side reused earlier evidence; start a new comparison with rerunBoth to run it again.',
      {
        state: 'reused_evidence',
        runId,
      },
    );
  }
  if (run.status !== 'failed' && run.status !== 'cancelled') {
    throw new AppError(
      'invalid_state',
      `The ${side} side is ${run.status}; only a failed or cancelled side can be retried.`,
      { state: run.status, side },
    );
  }
  if (evaluation.kind === 'baseline') await assertBaselineRetryable(ctx, evaluation, prompt, run.status);
  await checkEligibility(ctx, { organizationId, scope: evaluation.scope, action: 'start' });

  const now = new Date();
  await db
    .update(evalRuns)
    .set({ status: 'pending', error: null, completedAt: null, updatedAt: now })
    .where(eq(evalRuns.id, run.id));
  const reset = await db
    .update(evalResults)
    .set({
      status: 'pending',
      output: null,
      passed: null,
      score: null,
      judgeReasoning: null,
      assertions: [],
      error: null,
      workerId: null,
      claimedAt: null,
      finishedAt: null,
    })
    .where(and(eq(evalResults.runId, run.id), inArray(evalResults.status, ['pending', 'running', 'error'])))
    .returning({ id: evalResults.id });
  const [row] = await db
    .update(evaluations)
    .set({ status: 'running', error: null, completedAt: null, updatedAt: now })
    .where(eq(evaluations.id, evaluation.id))
    .returning();
  await recordAudit(ctx, {
    organizationId,
    operation: 'evaluation.retry',
    targetType: 'evaluation',
    targetId: evaluation.id,
    details: { side, runId: run.id, from: run.status, resetResults: reset.length },
  });
  enqueueRuns(ctx, [run.id]);
  return toEvaluation(ctx, row);
}

async function assertBaselineRetryable(
  ctx: ServiceContext,
  evaluation: EvaluationRow,
  prompt: PromptRow,
  runStatus: string,
): Promise<void> {
  if (runStatus === 'cancelled' || evaluation.status === 'cancelled') {
    throw new AppError('invalid_state', 'A cancelled baseline cannot publish; initialize again instead.', {
      state: 'cancelled',
    });
  }
  // Serializes with initialize, which holds the same lock while it checks for a baseline in progress.
  const locked = await loadPrompt(ctx, prompt.organizationId, prompt.id, { lock: true });
  if (locked.state !== 'setup')
    throw new AppError('invalid_state', 'This prompt’s baseline is already published.', { state: locked.state });
  const [other] = await ctx.db
    .select({ id: evaluations.id })
    .from(evaluations)
    .where(
      and(
        eq(evaluations.promptId, prompt.id),
        eq(evaluations.kind, 'baseline'),
        inArray(evaluations.status, [...unfinished, 'completed']),
      ),
    );
  if (other && other.id !== evaluation.id) {
    throw new AppError('invalid_state', 'Another baseline is in progress for this prompt.', {
      state: 'baseline_in_progress',
      evaluationId: other.id,
    });
  }
}
