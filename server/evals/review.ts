import { and, eq, inArray, ne, sql } from 'drizzle-orm';
import { datasetCases, datasets, evalResults } from '@/db/schema';
import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { AppError, invalidRequest } from '../errors';
import { recordAudit } from '../audit/service';
import { jsonTextProblem } from '../input-hygiene';
import { datasetOf } from '../datasets/service';
import { scoreExpected } from './engine/scoring';
import { refreshEvaluation } from './engine/progress';
import { authorizeEvaluationWrite } from './service';
import { loadEvaluation } from './queries';
import { toEvaluation } from './serialize';
import type { Evaluation, ReviewItemInput, ReviewRecord } from './schemas';

type ResultRow = typeof evalResults.$inferSelect;
// `frozen`: the case's input and expectation as the result holds them (what the run used, or the last
// calibration): a case changed since then in the dataset keeps its newer content.
type Calibration = {
  caseId: string;
  resultId: string;
  expectedOutput: string;
  frozen: { input: string; expectedOutput: string };
};

// The expectation a calibration decision sets, or null for a scored decision (mark_*).
function calibratedExpectation(item: ReviewItemInput, result: ResultRow, index: number): string | null {
  if (item.decision === 'accept_generated') {
    const output = result.output ?? '';
    if (result.referenceFormat === 'json' && jsonTextProblem(output)) {
      throw new AppError(
        'invalid_state',
        'This case expects JSON and the generated output is not JSON; accept a corrected output instead.',
        {
          state: 'output_not_json',
          resultId: result.id,
        },
      );
    }
    return output;
  }
  if (item.decision === 'accept_corrected') {
    const corrected = item.correctedOutput ?? '';
    const problem = result.referenceFormat === 'json' ? jsonTextProblem(corrected) : '';
    if (problem)
      throw invalidRequest('The corrected output is not valid JSON for this case.', [
        { path: `reviews.${index}.correctedOutput`, message: problem },
      ]);
    return corrected;
  }
  return null;
}

// accept_generated: the output is the expectation, so it passes. accept_corrected: the corrected text
// becomes the expectation and the output passes only if it already says the same.
function verdictFor(item: ReviewItemInput, result: ResultRow, expectation: string | null): boolean {
  switch (item.decision) {
    case 'accept_generated':
    case 'mark_correct':
      return true;
    case 'mark_incorrect':
      return false;
    case 'accept_corrected':
      return scoreExpected(result.output ?? '', expectation ?? '', result.referenceFormat).passed;
  }
}

/**
 * Records review decisions on results of one evaluation (1 to 100, all or nothing). Each result must
 * be pending_review or scored (a re-review replaces the decision). Calibration decisions
 * (accept_generated, accept_corrected) make the accepted text the case's expectation, on the
 * result and on the dataset case if it still exists (one dataset revision per request). Who
 * decided is taken from the verified caller: user, OAuth client, and `human` false for agents.
 * The evaluation is refreshed in the same transaction, so a baseline publishes with its last review.
 */
export async function reviewResults(
  ctx: ServiceContext,
  { organizationId, evaluationId, reviews }: OperationInput<'review_evaluation_results'>,
): Promise<Evaluation> {
  const { db } = ctx;
  const { evaluation, prompt } = await authorizeEvaluationWrite(ctx, organizationId, evaluationId);
  // Cancel stops pending work, results awaiting review included: they stay unreviewed.
  if (evaluation.status === 'cancelled')
    throw new AppError('invalid_state', 'This evaluation is cancelled; its results can no longer be reviewed.', {
      state: 'cancelled',
    });
  const runIds = evaluation.productionRunId
    ? [evaluation.candidateRunId, evaluation.productionRunId]
    : [evaluation.candidateRunId];
  const ids = reviews.map((r) => r.resultId);
  const rows = await db
    .select()
    .from(evalResults)
    .where(
      and(
        inArray(evalResults.id, ids),
        inArray(evalResults.runId, runIds),
        eq(evalResults.organizationId, organizationId),
      ),
    )
    .for('update');
  const byId = new Map(rows.map((r) => [r.id, r]));

  const at = new Date().toISOString();
  const calibrations: Calibration[] = [];
  for (const [index, item] of reviews.entries()) {
    const result = byId.get(item.resultId);
    if (!result) throw new AppError('not_found', 'Result not found in this evaluation.', { resultId: item.resultId });
    if (result.status !== 'pending_review' && result.status !== 'scored') {
      throw new AppError(
        'invalid_state',
        `This result is ${result.status === 'running' ? 'pending' : result.status}; only results awaiting review or scored can be reviewed.`,
        {
          state: result.status === 'running' ? 'pending' : result.status,
          resultId: result.id,
        },
      );
    }
    const expectation = calibratedExpectation(item, result, index);
    const passed = verdictFor(item, result, expectation);
    const review: ReviewRecord = {
      decision: item.decision,
      correctedOutput: item.decision === 'accept_corrected' ? (item.correctedOutput ?? '') : null,
      userId: ctx.actor.userId,
      clientId: ctx.actor.clientId,
      human: ctx.actor.human,
      at,
    };
    await db
      .update(evalResults)
      .set({
        status: 'scored',
        passed,
        score: passed ? 1 : 0,
        review,
        ...(expectation !== null ? { expectedOutput: expectation } : {}),
      })
      .where(eq(evalResults.id, result.id));
    if (expectation !== null)
      calibrations.push({
        caseId: result.caseId,
        resultId: result.id,
        expectedOutput: expectation,
        frozen: { input: result.input, expectedOutput: result.expectedOutput },
      });
  }

  const calibratedCases = await calibrateDataset(ctx, prompt, calibrations);
  await recordAudit(ctx, {
    organizationId,
    operation: 'evaluation.review',
    targetType: 'evaluation',
    targetId: evaluation.id,
    details: {
      reviews: reviews.map((r) => ({ resultId: r.resultId, decision: r.decision })),
      human: ctx.actor.human,
      calibratedCases,
    },
  });
  await refreshEvaluation(ctx, evaluation.id);
  return toEvaluation(ctx, await loadEvaluation(ctx, organizationId, evaluation.id));
}

/**
 * Writes calibrated expectations into the dataset cases that still exist as the run froze them,
 * bumping the dataset revision once (open editors then see a conflict instead of overwriting). A
 * case edited since keeps its edit; a case whose new
 * (input, expectedOutput) pair would duplicate another case is left as it is.
 */
async function calibrateDataset(
  ctx: ServiceContext,
  prompt: Parameters<typeof datasetOf>[1],
  calibrations: Calibration[],
): Promise<string[]> {
  if (!calibrations.length) return [];
  const tx = ctx.db;
  const dataset = await datasetOf(tx, prompt, { lock: true });
  const updated: string[] = [];
  for (const { caseId, resultId, expectedOutput, frozen } of calibrations) {
    const [current] = await tx
      .select()
      .from(datasetCases)
      .where(and(eq(datasetCases.id, caseId), eq(datasetCases.datasetId, dataset.id)));
    if (!current || current.expectedOutput === expectedOutput) continue;
    // Edited since the run froze it: the newer edit stands (the review still scores the result).
    if (current.input !== frozen.input || current.expectedOutput !== frozen.expectedOutput) continue;
    const [duplicate] = await tx
      .select({ id: datasetCases.id })
      .from(datasetCases)
      .where(
        and(
          eq(datasetCases.datasetId, dataset.id),
          eq(datasetCases.input, current.input),
          eq(datasetCases.expectedOutput, expectedOutput),
          ne(datasetCases.id, caseId),
        ),
      );
    // The pair would repeat another case's: refused like a duplicate add or update (the whole request
    // rolls back), never a 200 that records a calibration the dataset does not hold.
    if (duplicate)
      throw new AppError(
        'invalid_state',
        'Accepting this expectation would make the case a duplicate of another case with the same input and expected output. Mark the output correct instead, or change or delete the other case first.',
        { state: 'duplicate', caseId: duplicate.id, resultId },
      );
    await tx.update(datasetCases).set({ expectedOutput }).where(eq(datasetCases.id, caseId));
    updated.push(caseId);
  }
  if (updated.length) {
    await tx
      .update(datasets)
      .set({ revision: sql`${datasets.revision} + 1`, updatedAt: new Date() })
      .where(eq(datasets.id, dataset.id));
  }
  return updated;
}
