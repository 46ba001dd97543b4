import { eq } from 'drizzle-orm';
import { organizations } from '@/db/schema';
import type { DbContext } from '../context';
import { AppError, notFound } from '../errors';
import { canSellPro } from '../config';
import type { EvaluationScope } from './schemas';
import { creditBalance, type CreditBalance } from '../billing/state';

type EligibilityAction = 'start' | 'resume' | 'execute';
export type EligibilityRequest = { organizationId: string; scope: EvaluationScope; action: EligibilityAction };
export type Eligibility = { allowed: true; reason: null } | { allowed: false; reason: AppError };

/**
 * The one place plan and usage rules for evaluation work live. `start` (new evaluations, retries),
 * `resume` (paused work) and `execute` (the engine, before it claims a case) all ask here, so a
 * downgrade or an empty balance stops every path the same way.
 */
export async function evaluationEligibility(ctx: DbContext, request: EligibilityRequest): Promise<Eligibility> {
  const [organization] = await ctx.db
    .select({ plan: organizations.plan })
    .from(organizations)
    .where(eq(organizations.id, request.organizationId));
  if (!organization) return { allowed: false, reason: notFound('Organization') };
  if (request.scope === 'comprehensive' && organization.plan !== 'pro') {
    return {
      allowed: false,
      reason: new AppError(
        'plan_required',
        'Comprehensive evaluations (every case) need the Pro plan; quick evaluations run the first 10 cases.',
        {
          plan: organization.plan,
          requiredPlan: 'pro',
          scope: request.scope,
        },
      ),
    };
  }
  // Credits are taken one per case by the claim itself (charge_eval_case); `execute` leaves them to it.
  if (request.action !== 'execute') {
    const credits = await creditBalance(ctx.db, request.organizationId);
    if (credits.remaining <= 0) return { allowed: false, reason: usageExhausted(organization.plan, credits) };
  }
  return { allowed: true, reason: null };
}

export function usageExhausted(plan: string, credits?: CreditBalance): AppError {
  const resetsAt = credits?.periodEnd.toISOString();
  return new AppError(
    'usage_exhausted',
    `No evaluation credits are left in this billing period${resetsAt ? ` (they renew on ${resetsAt.slice(0, 10)})` : ''}.${plan === 'pro' || !canSellPro() ? '' : ' Upgrade to Pro for more credits.'}`,
    {
      plan,
      ...(credits
        ? { creditsRemaining: credits.remaining, creditsPerPeriod: credits.allowance, periodEnd: resetsAt }
        : {}),
    },
  );
}

// Throws the refusal (403 plan_required or usage_exhausted); resolves when the work may go on.
export async function checkEligibility(
  ctx: DbContext,
  request: EligibilityRequest,
): Promise<{ allowed: true; reason: null }> {
  const eligibility = await evaluationEligibility(ctx, request);
  if (!eligibility.allowed) throw eligibility.reason;
  return eligibility;
}
