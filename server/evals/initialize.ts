import { and, desc, eq, notInArray } from 'drizzle-orm';
import { drafts, evaluations } from '@/db/schema';
import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { AppError, zodIssues, type Issue } from '../errors';
import { newId } from '../ids';
import { recordAudit } from '../audit/service';
import { authorizePromptRead, authorizePromptWrite } from '../access/organization';
import { can } from '../auth/schemas';
import { creditBalance } from '../billing/state';
import { emptySetupContent } from '../prompts/drafts';
import { latestVersionContent } from '../prompts/service';
import { resolveScoringPolicy, setScoringPolicy } from '../prompts/scoring';
import { draftContentInput, type DraftContent, type ScoringPolicy } from '../prompts/schemas';
import { findRoute } from '../models/routes';
import { casesOf, datasetOf } from '../datasets/service';
import { enqueueRuns } from './engine/queue';
import { checkEligibility, evaluationEligibility } from './eligibility';
import { casesDigestOf, digestOf, freezeCases, insertRun } from './freeze';
import { selectCases, sideCharge } from './start';
import { toEvaluation } from './serialize';
import type { BaselineEstimateInput, Estimate, Evaluation, InitializeInput } from './schemas';

// A baseline runs the quick scope: the first 10 cases of the ordered dataset (all of them on Free).
const baselineScope = 'quick' as const;

// Why a draft cannot run yet (no message, content that no longer validates, an unknown model route).
function runnableIssues(content: DraftContent): Issue[] {
  const issues: Issue[] = [];
  if (!content.messages.length) issues.push({ path: 'content.messages', message: 'Write at least one message.' });
  const parsed = draftContentInput.safeParse(content);
  if (!parsed.success)
    issues.push(
      ...zodIssues(parsed.error).map((i) => ({ path: i.path ? `content.${i.path}` : 'content', message: i.message })),
    );
  if (!findRoute(content.modelRouteId))
    issues.push({ path: 'content.modelRouteId', message: `No model route "${content.modelRouteId}" is configured.` });
  return issues;
}

// The policy initialize sets: the chosen method, keeping the prompt's judge route and rubric for judge.
function policyFor(stored: unknown, method: InitializeInput['scoringMethod']): ScoringPolicy {
  const current = resolveScoringPolicy(stored);
  if (method !== 'judge') return { method };
  return resolveScoringPolicy({ method, judgeModelRouteId: current.judgeModelRouteId, rubric: current.rubric });
}

// The caller's draft; a draft never written holds the latest version (an imported setup prompt has
// some), else empty content.
async function callerDraft(ctx: ServiceContext, promptId: string) {
  const [draft] = await ctx.db
    .select({ content: drafts.content, revision: drafts.revision })
    .from(drafts)
    .where(and(eq(drafts.promptId, promptId), eq(drafts.userId, ctx.actor.userId)));
  const content = (draft?.content ??
    (await latestVersionContent(ctx, promptId)) ??
    emptySetupContent()) as DraftContent;
  return { content, revision: draft?.revision ?? 0 };
}

/**
 * What initializing the baseline would run now and cost, in the shape of a comparison's estimate
 * (no production side): the caller's current draft on the baseline's cases under the chosen scoring.
 * `allowed`/`reason` say whether an initialize would be accepted now. Dashboard only: the preview
 * before the button spends credits.
 */
export async function estimateBaseline(
  ctx: ServiceContext,
  input: { organizationId: string; promptId: string } & BaselineEstimateInput,
): Promise<Estimate> {
  const { organizationId } = input;
  const { membership, prompt } = await authorizePromptRead(ctx, organizationId, input.promptId);
  const { content } = await callerDraft(ctx, prompt.id);
  const all = await casesOf(ctx.db, (await datasetOf(ctx.db, prompt)).id);
  const cases = freezeCases(selectCases(all, baselineScope));
  const chosen = policyFor(prompt.scoring, input.scoringMethod);
  // The judge route picked on the page is set only when the baseline starts.
  const scoring =
    chosen.method === 'judge' && input.judgeModelRouteId
      ? { ...chosen, judgeModelRouteId: input.judgeModelRouteId }
      : chosen;
  const { credits, warnings } = sideCharge(content, scoring, cases);
  let reason: string | null = null;
  if (!can(membership.role, 'prompts.write')) reason = 'forbidden';
  else if (membership.organization.readOnly) reason = 'read_only';
  else if (prompt.state !== 'setup' || !cases.length || runnableIssues(content).length) reason = 'invalid_state';
  else {
    const eligibility = await evaluationEligibility(ctx, { organizationId, scope: baselineScope, action: 'start' });
    if (!eligibility.allowed) reason = eligibility.reason.code;
  }
  return {
    scope: baselineScope,
    datasetSize: all.length,
    totalCases: cases.length,
    candidateCases: cases.length,
    productionCases: 0,
    reusedProductionRunId: null,
    credits,
    creditsRemaining: (await creditBalance(ctx.db, organizationId)).remaining,
    allowed: reason === null,
    reason,
    incompatibleCases: warnings.length,
    warnings,
  };
}

/**
 * Initializes a setup prompt's baseline: freezes the caller's draft at `draftRevision`, the first
 * cases of the dataset and the scoring policy (which it sets on the prompt), and runs them; the
 * engine publishes version 1 when every case is scored with no review pending and no error.
 * One baseline at a time: while one is unfinished (or completed and awaiting review), the same
 * snapshot returns it and another snapshot is invalid_state (baseline_in_progress). Initializes of
 * one prompt serialize on the prompt row, so racing identical requests create one evaluation.
 */
export async function initializeBaseline(
  ctx: ServiceContext,
  { organizationId, promptId, draftRevision, scoringMethod }: OperationInput<'initialize_baseline'>,
): Promise<Evaluation> {
  const { db } = ctx;
  const { prompt } = await authorizePromptWrite(ctx, organizationId, promptId, { lock: true });
  if (prompt.state !== 'setup') {
    throw new AppError(
      'invalid_state',
      'This prompt’s baseline is already published; save a version and start a comparison instead.',
      { state: prompt.state },
    );
  }
  const { content, revision: currentRevision } = await callerDraft(ctx, prompt.id);
  if (draftRevision !== currentRevision) {
    throw new AppError(
      'draft_conflict',
      `Your draft is at revision ${currentRevision}, not ${draftRevision}. Reload it and initialize again.`,
      { currentRevision },
    );
  }
  const issues = runnableIssues(content);
  if (issues.length)
    throw new AppError('invalid_state', 'The draft cannot run yet.', { state: 'draft_not_runnable', issues });

  const all = await casesOf(db, (await datasetOf(db, prompt)).id);
  if (!all.length)
    throw new AppError('invalid_state', 'Add at least one case to the dataset before initializing.', {
      state: 'empty_dataset',
    });
  const cases = freezeCases(selectCases(all, baselineScope));
  const casesDigest = casesDigestOf(cases);
  const scoring = policyFor(prompt.scoring, scoringMethod);
  const snapshotDigest = digestOf({ content, cases, scoring });

  const [current] = await db
    .select()
    .from(evaluations)
    .where(
      and(
        eq(evaluations.promptId, prompt.id),
        eq(evaluations.kind, 'baseline'),
        notInArray(evaluations.status, ['failed', 'cancelled']),
      ),
    )
    .orderBy(desc(evaluations.id))
    .limit(1);
  if (current) {
    if (current.snapshotDigest === snapshotDigest) return toEvaluation(ctx, current);
    throw new AppError(
      'invalid_state',
      'A baseline with another snapshot is already in progress; cancel it or wait for it to finish.',
      {
        state: 'baseline_in_progress',
        evaluationId: current.id,
      },
    );
  }
  await checkEligibility(ctx, { organizationId, scope: baselineScope, action: 'start' });

  await setScoringPolicy(ctx, { organizationId, promptId: prompt.id, ...scoring });
  const now = new Date();
  const candidateRunId = await insertRun(ctx, {
    organizationId,
    promptId: prompt.id,
    versionId: null,
    content,
    scoring,
    cases,
    casesDigest,
    createdAt: now,
  });
  const [row] = await db
    .insert(evaluations)
    .values({
      id: newId('eval'),
      organizationId,
      promptId: prompt.id,
      kind: 'baseline',
      status: 'pending',
      scope: baselineScope,
      candidateRunId,
      scoring,
      datasetSize: all.length,
      totalCases: cases.length,
      draftRevision: draftRevision,
      snapshotDigest,
      createdBy: ctx.actor.userId,
      createdByClient: ctx.actor.clientId,
      createdByHuman: ctx.actor.human,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  await recordAudit(ctx, {
    organizationId,
    operation: 'evaluation.initialize',
    targetType: 'evaluation',
    targetId: row.id,
    details: {
      promptId: prompt.id,
      draftRevision: draftRevision,
      scoringMethod: scoringMethod,
      totalCases: cases.length,
      snapshotDigest,
    },
  });
  enqueueRuns(ctx, [candidateRunId]);
  return toEvaluation(ctx, row);
}
