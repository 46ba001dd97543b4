import { eq } from 'drizzle-orm';
import { organizations } from '@/db/schema';
import type { DbContext } from '../context';
import { AppError, notFound } from '../errors';
import type { EvaluationScope } from './schemas';

export type EligibilityAction = 'start' | 'resume' | 'execute';
export type EligibilityRequest = { organizationId: string; scope: EvaluationScope; action: EligibilityAction };
export type Eligibility = { allowed: true; reason: null } | { allowed: false; reason: AppError };

/**
 * The one place plan and usage rules for evaluation work live. `start` (new evaluations, retries),
 * `resume` (paused work) and `execute` (the engine, before it claims a case) all ask here, so a
 * downgrade or an empty balance stops every path the same way. Credits arrive with M7.
 */
export async function evaluationEligibility(ctx: DbContext, request: EligibilityRequest): Promise<Eligibility> {
  const [organization] = await ctx.db.select({ plan: organizations.plan }).from(organizations).where(eq(organizations.id, request.organizationId));
  if (!organization) return { allowed: false, reason: notFound('Organization') };
  if (request.scope === 'comprehensive' && organization.plan !== 'pro') {
    return {
      allowed: false,
      reason: new AppError('plan_required', 'Comprehensive evaluations (every case) need the Pro plan; quick evaluations run the first 10 cases.', {
        plan: organization.plan,
        requiredPlan: 'pro',
        scope: request.scope,
      }),
    };
  }
  return { allowed: true, reason: null };
}

// Throws the refusal (403 plan_required, later usage_exhausted); resolves when the work may go on.
export async function checkEligibility(ctx: DbContext, request: EligibilityRequest): Promise<{ allowed: true; reason: null }> {
  const eligibility = await evaluationEligibility(ctx, request);
  if (!eligibility.allowed) throw eligibility.reason;
  return eligibility;
}
