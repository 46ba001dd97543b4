import { and, eq, sql } from 'drizzle-orm';
import { evalResults, evaluations } from '@/db/schema';
import type { DbContext } from '../context';
import { AppError, notFound } from '../errors';
import { isId } from '../ids';
import { toEvaluation, type EvaluationRow } from '../evals/serialize';
import { percentagePoints } from '@/lib/words';
import { pendingReviewReason, type PromotionBlockedDetails, type ReleasePolicy } from './schemas';

// The promotion gate (API.md "Safe releases"): what a move of a protected label to a version it
// never pointed at must prove. Called by moveLabel inside the move's transaction, after the label's
// row is locked, so two racing moves are checked one after the other against what the label
// points at when each commits.

const passRateEpsilon = 1e-9;

// The evaluation named by a move: of this prompt, else 404 (with the gate on or off).
export async function loadMoveEvaluation(
  ctx: DbContext,
  prompt: { id: string; organizationId: string },
  evaluationId: string,
): Promise<EvaluationRow> {
  if (!isId('eval', evaluationId)) throw notFound('Evaluation');
  const [evaluation] = await ctx.db
    .select()
    .from(evaluations)
    .where(
      and(
        eq(evaluations.id, evaluationId),
        eq(evaluations.promptId, prompt.id),
        eq(evaluations.organizationId, prompt.organizationId),
      ),
    );
  if (!evaluation) throw notFound('Evaluation');
  return evaluation;
}

// Cases that passed on the production side and did not pass on the candidate side (scored as failed,
// or an error), in case order. A candidate case still pending review is undecided: not counted here,
// it blocks on its own.
async function regressedCases(ctx: DbContext, evaluation: EvaluationRow): Promise<string[]> {
  if (!evaluation.productionRunId) return [];
  const rows = await ctx.db
    .select({ caseId: evalResults.caseId })
    .from(evalResults)
    .where(
      and(
        eq(evalResults.runId, evaluation.candidateRunId),
        sql`(${evalResults.status} = 'error' or (${evalResults.status} = 'scored' and ${evalResults.passed} is not true))`,
        sql`exists (select 1 from eval_results p where p.run_id = ${evaluation.productionRunId}
          and p.case_id = ${evalResults.caseId} and p.status = 'scored' and p.passed is true)`,
      ),
    )
    .orderBy(evalResults.position);
  return rows.map((r) => r.caseId);
}

function blocked(details: PromotionBlockedDetails): AppError {
  const message =
    details.reasons.length === 1
      ? `The release policy blocks this move: ${details.reasons[0]}`
      : `The release policy blocks this move (${details.reasons.length} reasons): ${details.reasons.join(' ')}`;
  return new AppError('promotion_blocked', message, { ...details });
}

/**
 * Throws 409 promotion_blocked unless `evaluation` justifies pointing the label at `newVersionIds`
 * (the versions of the move the label never pointed at) while it points at `currentVersionIds`.
 */
export async function enforceGate(
  ctx: DbContext,
  input: {
    policy: ReleasePolicy;
    label: string;
    newVersions: { id: string; number: number }[];
    currentVersionIds: string[];
    // Whose versions those are: the label's own, or production's while the label points at nothing.
    baselineLabel: string;
    evaluation: EvaluationRow | null;
  },
): Promise<void> {
  const { policy, label, newVersions, evaluation, baselineLabel } = input;
  const reasons: string[] = [];
  const details: PromotionBlockedDetails = {
    reasons,
    evaluationId: evaluation?.id ?? null,
    candidatePassRate: null,
    productionPassRate: null,
    regressions: [],
  };
  const names = newVersions.map((v) => `v${v.number}`).join(', ');
  if (newVersions.length > 1)
    reasons.push(
      `The split adds ${newVersions.length} versions "${label}" never pointed at (${names}); one evaluation can justify only one of them.`,
    );
  if (!evaluation) {
    reasons.push(
      `"${label}" is protected and requires an evaluation: compare ${names} with the version "${baselineLabel}" points at now, then pass its evaluationId.`,
    );
    throw blocked(details);
  }
  const view = await toEvaluation(ctx, evaluation);
  details.candidatePassRate = view.candidate.passRate;
  details.productionPassRate = view.production?.passRate ?? null;
  if (evaluation.kind !== 'comparison') reasons.push('The evaluation is a baseline, not a comparison.');
  if (evaluation.status !== 'completed')
    reasons.push(`The evaluation is ${evaluation.status}; only a completed comparison can justify a promotion.`);
  const target = newVersions.length === 1 ? newVersions[0] : null;
  if (target && evaluation.versionId !== target.id)
    reasons.push(`The evaluation’s candidate is another version than v${target.number}.`);
  if (!evaluation.productionVersionId || !input.currentVersionIds.includes(evaluation.productionVersionId))
    reasons.push(
      `The evaluation compared against another version than the one "${baselineLabel}" points at now; run a new comparison.`,
    );
  const pendingReview = pendingReviewReason(
    view.candidate.pendingReviewCases,
    view.production?.pendingReviewCases ?? 0,
  );
  if (pendingReview) reasons.push(pendingReview);
  // The figures of an evaluation still running, failed or cancelled are reported, not judged: its
  // pass rates and regressions are partial, and "not completed" is already the reason.
  const judged = evaluation.status === 'completed';
  if (
    judged &&
    details.productionPassRate !== null &&
    details.candidatePassRate < details.productionPassRate - policy.maxPassRateDrop - passRateEpsilon
  )
    reasons.push(
      `The candidate’s pass rate (${percent(details.candidatePassRate)}) is more than ${percentagePoints(policy.maxPassRateDrop)} below production’s (${percent(details.productionPassRate)}).`,
    );
  details.regressions = await regressedCases(ctx, evaluation);
  if (judged && details.regressions.length > policy.maxRegressions)
    reasons.push(
      `${details.regressions.length} case${details.regressions.length === 1 ? '' : 's'} regressed (passed on production, not on the candidate); the policy allows ${policy.maxRegressions}.`,
    );
  if (reasons.length) throw blocked(details);
}

function percent(fraction: number): string {
  return `${Math.round(fraction * 1000) / 10}%`;
}
