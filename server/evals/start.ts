import { and, desc, eq, inArray } from 'drizzle-orm';
import { evalRuns, evaluations, promptLabels, promptVersions } from '@/db/schema';
import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { AppError, notFound } from '../errors';
import { isId, newId } from '../ids';
import { recordAudit } from '../audit/service';
import { authorizePromptRead, authorizePromptWrite, type PromptRow } from '../access/organization';
import { can } from '../auth/schemas';
import { resolveScoringPolicy } from '../prompts/scoring';
import { casesOf, datasetOf } from '../datasets/service';
import type { DraftContent, ScoringPolicy } from '../prompts/schemas';
import { inputWarnings } from '../datasets/case-input';
import { enqueueRuns } from './engine/queue';
import { prepareRun, unusableRoute } from './engine/execute';
import { checkEligibility, evaluationEligibility } from './eligibility';
import { creditBalance } from '../billing/state';
import { casesDigestOf, digestOf, freezeCases, insertRun, reuseKeyOf, type FrozenCase } from './freeze';
import { toEvaluation } from './serialize';
import { quickCases, type Estimate, type Evaluation, type EvaluationScope, type StartEvaluationInput } from './schemas';

type Plan = {
  candidate: { versionId: string; content: unknown };
  production: { versionId: string; content: unknown } | null;
  scoring: ScoringPolicy;
  datasetSize: number;
  cases: FrozenCase[];
  casesDigest: string;
  reusedRunId: string | null;
};

async function versionOf(ctx: ServiceContext, prompt: PromptRow, versionId: string) {
  if (!isId('ver', versionId)) throw notFound('Version');
  const [row] = await ctx.db
    .select({ id: promptVersions.id, content: promptVersions.content })
    .from(promptVersions)
    .where(
      and(
        eq(promptVersions.id, versionId),
        eq(promptVersions.promptId, prompt.id),
        eq(promptVersions.organizationId, prompt.organizationId),
      ),
    );
  if (!row) throw notFound('Version');
  return row;
}

// The first cases of the ordered dataset (quick), or all of them (comprehensive).
export function selectCases<T>(cases: T[], scope: EvaluationScope): T[] {
  return scope === 'quick' ? cases.slice(0, quickCases) : cases;
}

// Everything a comparison would freeze, read in the caller's transaction: the candidate version,
// production as the label points now, the ordered cases, the scoring policy, and the most recent
// completed production evidence with the same reuse key (unless rerunBoth).
async function planComparison(ctx: ServiceContext, prompt: PromptRow, input: StartEvaluationInput): Promise<Plan> {
  const candidate = await versionOf(ctx, prompt, input.versionId);
  const [label] = await ctx.db
    .select({ versionId: promptLabels.versionId, content: promptVersions.content })
    .from(promptLabels)
    .innerJoin(promptVersions, eq(promptVersions.id, promptLabels.versionId))
    .where(and(eq(promptLabels.promptId, prompt.id), eq(promptLabels.label, 'production')));
  const all = await casesOf(ctx.db, (await datasetOf(ctx.db, prompt)).id);
  const cases = freezeCases(selectCases(all, input.scope));
  const casesDigest = casesDigestOf(cases);
  const scoring = resolveScoringPolicy(prompt.scoring);
  let reusedRunId: string | null = null;
  if (label && !input.rerunBoth && cases.length) {
    const [evidence] = await ctx.db
      .select({ id: evalRuns.id })
      .from(evalRuns)
      .where(
        and(
          eq(evalRuns.organizationId, prompt.organizationId),
          eq(evalRuns.promptId, prompt.id),
          eq(evalRuns.reuseKey, reuseKeyOf(label.versionId, casesDigest, scoring)),
          eq(evalRuns.status, 'completed'),
        ),
      )
      .orderBy(desc(evalRuns.completedAt), desc(evalRuns.id))
      .limit(1);
    reusedRunId = evidence?.id ?? null;
  }
  return {
    candidate: { versionId: candidate.id, content: candidate.content },
    production: label ? { versionId: label.versionId, content: label.content } : null,
    scoring,
    datasetSize: all.length,
    cases,
    casesDigest,
    reusedRunId,
  };
}

function assertActive(prompt: PromptRow): void {
  if (prompt.state !== 'active') {
    throw new AppError(
      'invalid_state',
      'Initialize the prompt’s baseline first: comparisons need a published production version.',
      { state: prompt.state },
    );
  }
}

function assertCases(plan: Plan): void {
  if (!plan.cases.length)
    throw new AppError('invalid_state', 'Add at least one case to the dataset before evaluating.', {
      state: 'empty_dataset',
    });
}

// What identifies "the same start": the same candidate, pinned production, frozen cases, scoring, scope and rerunBoth.
function startDigest(plan: Plan, input: StartEvaluationInput): string {
  return digestOf([
    'comparison',
    plan.candidate.versionId,
    plan.production?.versionId ?? null,
    plan.casesDigest,
    plan.scoring,
    input.scope,
    input.rerunBoth,
  ]);
}

/**
 * Starts a comparison of a saved version against the pinned production version. Never executes
 * twice: starts of one prompt serialize on the prompt row, and a start identical to an unfinished
 * (pending, running or paused) evaluation the same user started returns that evaluation (201)
 * instead of creating another. With an Idempotency-Key the edge replays the first answer as well.
 */
export async function startEvaluation(
  ctx: ServiceContext,
  input: OperationInput<'start_evaluation'>,
): Promise<Evaluation> {
  const { organizationId, promptId } = input;
  const { prompt } = await authorizePromptWrite(ctx, organizationId, promptId, { lock: true });
  assertActive(prompt);
  const plan = await planComparison(ctx, prompt, input);
  await checkEligibility(ctx, { organizationId, scope: input.scope, action: 'start' });
  assertCases(plan);
  if (!plan.production)
    throw new AppError('invalid_state', 'The production label points at no version.', { state: 'no_production' });

  const digest = startDigest(plan, input);
  const [running] = await ctx.db
    .select()
    .from(evaluations)
    .where(
      and(
        eq(evaluations.promptId, prompt.id),
        eq(evaluations.kind, 'comparison'),
        eq(evaluations.createdBy, ctx.actor.userId),
        eq(evaluations.snapshotDigest, digest),
        inArray(evaluations.status, ['pending', 'running', 'paused']),
      ),
    )
    .orderBy(desc(evaluations.id))
    .limit(1);
  if (running) return toEvaluation(ctx, running);

  const now = new Date();
  const base = {
    organizationId,
    promptId: prompt.id,
    scoring: plan.scoring,
    cases: plan.cases,
    casesDigest: plan.casesDigest,
    createdAt: now,
  };
  const candidateRunId = await insertRun(ctx, {
    ...base,
    versionId: plan.candidate.versionId,
    content: plan.candidate.content,
  });
  const productionRunId =
    plan.reusedRunId ??
    (await insertRun(ctx, { ...base, versionId: plan.production.versionId, content: plan.production.content }));
  const [row] = await ctx.db
    .insert(evaluations)
    .values({
      id: newId('eval'),
      organizationId,
      promptId: prompt.id,
      kind: 'comparison',
      status: 'pending',
      scope: input.scope,
      versionId: plan.candidate.versionId,
      productionVersionId: plan.production.versionId,
      candidateRunId,
      productionRunId,
      scoring: plan.scoring,
      datasetSize: plan.datasetSize,
      totalCases: plan.cases.length,
      rerunBoth: input.rerunBoth,
      snapshotDigest: digest,
      createdBy: ctx.actor.userId,
      createdByClient: ctx.actor.clientId,
      createdByHuman: ctx.actor.human,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  await recordAudit(ctx, {
    organizationId,
    operation: 'evaluation.start',
    targetType: 'evaluation',
    targetId: row.id,
    details: {
      promptId: prompt.id,
      versionId: plan.candidate.versionId,
      productionVersionId: plan.production.versionId,
      scope: input.scope,
      rerunBoth: input.rerunBoth,
      totalCases: plan.cases.length,
      reusedProductionRunId: plan.reusedRunId,
    },
  });
  enqueueRuns(ctx, plan.reusedRunId ? [candidateRunId] : [candidateRunId, productionRunId]);
  return toEvaluation(ctx, row);
}

// What one side's run would be charged: one credit per case, except the cases that error before any
// model call, uncharged (an input its content cannot take; every case when its model or judge route
// cannot be called here). `warnings` names the incompatible inputs.
export function sideCharge(content: DraftContent, scoring: ScoringPolicy, cases: FrozenCase[]) {
  const warnings = inputWarnings(content, cases);
  const side = { content, scoring };
  const uncharged = unusableRoute(side, prepareRun(side)) === null ? warnings.length : cases.length;
  return { credits: cases.length - uncharged, warnings };
}

// What a start would run now and what it would cost; `allowed`/`reason` say whether it would be accepted.
export async function estimateEvaluation(
  ctx: ServiceContext,
  input: OperationInput<'estimate_evaluation'>,
): Promise<Estimate> {
  const { organizationId, promptId } = input;
  const { membership, prompt } = await authorizePromptRead(ctx, organizationId, promptId);
  const plan = await planComparison(ctx, prompt, input);
  const candidateCases = plan.cases.length;
  const productionCases = plan.production && !plan.reusedRunId ? candidateCases : 0;
  const candidate = sideCharge(plan.candidate.content as DraftContent, plan.scoring, plan.cases);
  const productionCredits =
    plan.production && productionCases
      ? sideCharge(plan.production.content as DraftContent, plan.scoring, plan.cases).credits
      : 0;
  let reason: string | null = null;
  if (!can(membership.role, 'prompts.write')) reason = 'forbidden';
  else if (membership.organization.readOnly) reason = 'read_only';
  else if (prompt.state !== 'active') reason = 'invalid_state';
  else {
    const eligibility = await evaluationEligibility(ctx, { organizationId, scope: input.scope, action: 'start' });
    if (!eligibility.allowed) reason = eligibility.reason.code;
    else if (!candidateCases || !plan.production) reason = 'invalid_state';
  }
  return {
    scope: input.scope,
    datasetSize: plan.datasetSize,
    totalCases: candidateCases,
    candidateCases,
    productionCases,
    reusedProductionRunId: plan.reusedRunId,
    credits: candidate.credits + productionCredits,
    creditsRemaining: (await creditBalance(ctx.db, organizationId)).remaining,
    allowed: reason === null,
    reason,
    incompatibleCases: candidate.warnings.length,
    warnings: candidate.warnings,
  };
}
