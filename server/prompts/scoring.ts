import { eq } from 'drizzle-orm';
import { prompts } from '@/db/schema';
import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { recordAudit } from '../audit/service';
import { localJudgeRouteId, requireJudgeRoute } from '../models/routes';
import { authorizePromptRead, authorizePromptWrite } from '../access/organization';
import { scoringPolicySchema, type ScoringPolicy, type ScoringPolicyView } from './schemas';

// Used when a judge policy names no rubric of its own; the response says so (rubricIsDefault).
export const defaultJudgeRubric = [
  'Grade the output for the given input.',
  'When an expected output is given, pass only if the output conveys the same answer (wording may differ; facts, numbers, names and required format must match).',
  'When none is given, pass only if the output answers the input correctly, completely and in the format the prompt asks for, without inventing facts.',
  'Explain your decision in one or two sentences.',
].join('\n');

/**
 * The complete policy as it is frozen into an evaluation: a judge policy always names its route
 * (default the local judge) and its rubric (default the built-in one); the other methods carry
 * neither. Accepts whatever is stored on the prompt (initialize may store only `{ method }`).
 */
export function resolveScoringPolicy(stored: unknown): ScoringPolicy {
  const parsed = scoringPolicySchema.safeParse(stored);
  const policy: ScoringPolicy = parsed.success ? parsed.data : { method: 'expected' };
  if (policy.method !== 'judge') return { method: policy.method };
  return {
    method: 'judge',
    judgeModelRouteId: policy.judgeModelRouteId ?? localJudgeRouteId,
    rubric: policy.rubric ?? defaultJudgeRubric,
  };
}

// What GET …/scoring answers (and what an export carries) for a stored policy.
export function scoringView(policy: unknown): ScoringPolicyView {
  const resolved = resolveScoringPolicy(policy);
  return {
    method: resolved.method,
    judgeModelRouteId: resolved.judgeModelRouteId ?? null,
    rubric: resolved.rubric ?? null,
    rubricIsDefault: resolved.method === 'judge' && resolved.rubric === defaultJudgeRubric,
  };
}

export async function getScoringPolicy(
  ctx: ServiceContext,
  { organizationId, promptId }: OperationInput<'get_scoring_policy'>,
): Promise<ScoringPolicyView> {
  const { prompt } = await authorizePromptRead(ctx, organizationId, promptId);
  return scoringView(prompt.scoring);
}

// Replaces the prompt's policy (editors and admins; setup and active prompts, never archived ones).
export async function setScoringPolicy(
  ctx: ServiceContext,
  { organizationId, promptId, ...input }: OperationInput<'set_scoring_policy'>,
): Promise<ScoringPolicyView> {
  const { prompt } = await authorizePromptWrite(ctx, organizationId, promptId, { lock: true });
  // As get scoring answers it: null is the default, rubricIsDefault is read-only.
  const { method, judgeModelRouteId, rubric } = input;
  if (judgeModelRouteId) requireJudgeRoute(judgeModelRouteId);
  const policy = resolveScoringPolicy({
    method,
    ...(judgeModelRouteId ? { judgeModelRouteId } : {}),
    ...(rubric ? { rubric } : {}),
  });
  await ctx.db.update(prompts).set({ scoring: policy }).where(eq(prompts.id, prompt.id));
  await recordAudit(ctx, {
    organizationId,
    operation: 'scoring.update',
    targetType: 'prompt',
    targetId: prompt.id,
    details: { from: resolveScoringPolicy(prompt.scoring), to: policy },
  });
  return scoringView(policy);
}
