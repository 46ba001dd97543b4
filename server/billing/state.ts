import { and, desc, eq, isNotNull, sql } from 'drizzle-orm';
import { rowsOf, type Db } from '@/db/client';
import { billingCustomers, billingSubscriptions, organizations } from '@/db/schema';
import { runInTransaction, type ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { authorize } from '../access/permissions';
import { config } from '../config';
import { retentionInForce } from '../traces/retention';
import { planCapacity } from '../datasets/schemas';
import { syncOrganizationCapacityWarnings } from '../datasets/capacity-warning';
import { recordAudit } from '../audit/service';
import { isEntitling, type BillingState, type Plan } from './schemas';

// The organization's billing state as persisted webhook state describes it: the plan column is a
// cache derived from billing_subscriptions in the transaction that changes them (derivePlan).

export type SubscriptionRow = typeof billingSubscriptions.$inferSelect;

export type CreditBalance = { periodStart: Date; periodEnd: Date; allowance: number; used: number; remaining: number };

// The subscription the organization's state is about: an entitling one first, then the latest.
export async function currentSubscription(db: Db, organizationId: string): Promise<SubscriptionRow | null> {
  const [row] = await db
    .select()
    .from(billingSubscriptions)
    .where(eq(billingSubscriptions.organizationId, organizationId))
    .orderBy(
      desc(sql`${billingSubscriptions.status} in ('active', 'trialing', 'past_due')`),
      desc(billingSubscriptions.currentPeriodEnd),
      desc(billingSubscriptions.updatedAt),
    )
    .limit(1);
  return row ?? null;
}

// The credit period now (db/functions/billing.sql credit_period) and what is used of it.
export async function creditBalance(db: Db, organizationId: string): Promise<CreditBalance> {
  const { evalCreditsFree, evalCreditsPro } = config();
  const [row] = rowsOf<{ startsAt: string | Date; endsAt: string | Date; credits: number; used: number | null }>(
    await db.execute(sql`
      select p.starts_at as "startsAt", p.ends_at as "endsAt", p.credits, c.used
      from credit_period(${organizationId}, ${evalCreditsFree}::int, ${evalCreditsPro}::int) p
      left join credit_periods c on c.organization_id = ${organizationId} and c.period_start = p.starts_at`),
  );
  const allowance = Number(row.credits);
  const used = Number(row.used ?? 0);
  return {
    periodStart: new Date(row.startsAt),
    periodEnd: new Date(row.endsAt),
    allowance,
    used,
    remaining: Math.max(0, allowance - used),
  };
}

// The period shown and confirmed: the subscription's while it holds now, else the credit period
// (the calendar month on Free; on Pro, the period Stripe has not reported yet).
export function effectivePeriod(
  subscription: SubscriptionRow | null,
  credits: CreditBalance,
  now = new Date(),
): { start: Date; end: Date } {
  const start = subscription?.currentPeriodStart;
  const end = subscription?.currentPeriodEnd;
  if (start && end && start <= now && end > now) return { start, end };
  return { start: credits.periodStart, end: credits.periodEnd };
}

// A subscription cancelled at its period end gives Pro until that end and no longer, even before
// Stripe's `customer.subscription.deleted` arrives (it may be retried for days): past the end, the
// stored state itself says the subscription is over, so no next period is assumed for it.
export function lapsed(subscription: SubscriptionRow, now = new Date()): boolean {
  return (
    subscription.cancelAtPeriodEnd && subscription.currentPeriodEnd !== null && subscription.currentPeriodEnd <= now
  );
}
// The same rule in SQL (db/functions/billing.sql credit_period keeps its own copy in PL/pgSQL).
const entitlingStatus = sql`${billingSubscriptions.status} in ('active', 'trialing', 'past_due')`;
const lapsedNow = sql`(${billingSubscriptions.cancelAtPeriodEnd} and coalesce(${billingSubscriptions.currentPeriodEnd} <= now(), false))`;
const entitlesNow = sql`${entitlingStatus} and not ${lapsedNow}`;

// Whether Stripe will charge the subscription again at the end of its period.
export function renews(subscription: SubscriptionRow | null): boolean {
  return subscription !== null && isEntitling(subscription.status) && !subscription.cancelAtPeriodEnd;
}

function billingStateOf(
  plan: Plan,
  subscription: SubscriptionRow | null,
  credits: CreditBalance,
  hasCustomer: boolean,
  retentionDays: number,
): BillingState {
  const onPro = plan === 'pro' && subscription !== null && isEntitling(subscription.status);
  const { start: periodStart, end: periodEnd } = onPro
    ? effectivePeriod(subscription, credits)
    : { start: credits.periodStart, end: credits.periodEnd };
  const cancelAtPeriodEnd = onPro ? subscription.cancelAtPeriodEnd : false;
  return {
    plan,
    status: onPro ? subscription.status : null,
    renewsAt: cancelAtPeriodEnd ? null : periodEnd.toISOString(),
    periodStart: periodStart.toISOString(),
    periodEnd: periodEnd.toISOString(),
    cancelAtPeriodEnd,
    creditsRemaining: credits.remaining,
    creditsUsed: credits.used,
    creditsPerPeriod: credits.allowance,
    datasetCapacity: planCapacity[plan],
    traceRetentionDays: retentionDays,
    paymentMethodManageable: hasCustomer,
  };
}

// The organization's Stripe customer: the one recorded at its latest checkout, else its subscriptions'.
export async function customerOf(db: Db, organizationId: string): Promise<string | null> {
  const [row] = await db
    .select({ id: billingCustomers.customerId })
    .from(billingCustomers)
    .where(eq(billingCustomers.organizationId, organizationId))
    .orderBy(desc(billingCustomers.createdAt))
    .limit(1);
  if (row) return row.id;
  const [subscription] = await db
    .select({ id: billingSubscriptions.customerId })
    .from(billingSubscriptions)
    .where(and(eq(billingSubscriptions.organizationId, organizationId), isNotNull(billingSubscriptions.customerId)))
    .orderBy(desc(billingSubscriptions.updatedAt))
    .limit(1);
  return subscription?.id ?? null;
}

export async function loadBillingState(db: Db, organizationId: string, cachedPlan: Plan): Promise<BillingState> {
  const subscription = await currentSubscription(db, organizationId);
  // Between a cancelled subscription's period end and the minute sweep that moves the cached plan.
  const plan = cachedPlan === 'pro' && subscription !== null && lapsed(subscription) ? 'free' : cachedPlan;
  const credits = await creditBalance(db, organizationId);
  // The current subscription's customer answers without another lookup.
  return billingStateOf(
    plan,
    subscription,
    credits,
    Boolean(subscription?.customerId ?? (await customerOf(db, organizationId))),
    (await retentionInForce(db))[plan],
  );
}

// Any member may read the organization's billing state.
export async function getBillingState(
  ctx: ServiceContext,
  { organizationId }: OperationInput<'get_billing'>,
): Promise<BillingState> {
  const membership = await authorize(ctx, organizationId, 'billing.read');
  return loadBillingState(ctx.db, organizationId, membership.organization.plan);
}

// Who changed a plan: Stripe, through a verified webhook.
const stripeActor = { userId: 'stripe', clientId: 'stripe-webhook', human: false } as const;

/**
 * Derives the plan of each organization from its subscriptions (pro while one is active, trialing
 * or past_due, and not cancelled at a period end that has passed) and writes it when it changed,
 * with an audit entry and the datasets measured against the new capacity. Called in the
 * transaction that changed the subscriptions, and by the sweep below.
 */
export async function derivePlans(db: Db, organizationIds: string[], cause: Record<string, string>): Promise<number> {
  let changed = 0;
  for (const organizationId of [...new Set(organizationIds)].sort()) {
    const [row] = await db
      .select({ plan: organizations.plan })
      .from(organizations)
      .where(eq(organizations.id, organizationId))
      .for('update');
    if (!row) continue;
    const [entitling] = await db
      .select({ id: billingSubscriptions.id })
      .from(billingSubscriptions)
      .where(and(eq(billingSubscriptions.organizationId, organizationId), entitlesNow))
      .limit(1);
    const plan: Plan = entitling ? 'pro' : 'free';
    if (plan === row.plan) continue;
    await db.update(organizations).set({ plan }).where(eq(organizations.id, organizationId));
    await recordAudit(
      { db, actor: stripeActor },
      {
        organizationId,
        operation: 'billing.planChanged',
        targetType: 'organization',
        targetId: organizationId,
        details: { from: row.plan, to: plan, ...cause },
      },
    );
    await syncOrganizationCapacityWarnings(db, organizationId, plan);
    changed += 1;
  }
  return changed;
}

/**
 * Carries the credits taken in a period whose start has moved into the period as it stands now. A
 * paid checkout starts a Pro period at once (our guess: when the subscription was first seen), and
 * Stripe's subscription event then brings the real one, which began a moment earlier: the credits
 * taken under the guess belong to the real period (one upgrade, one reset). Called after a
 * subscription event is written, in its transaction; a period that starts later (an upgrade, a
 * renewal) takes nothing from the one before, and neither does Free's month after a downgrade.
 */
export async function carryCreditsIntoCurrentPeriod(db: Db, organizationId: string): Promise<void> {
  const { evalCreditsFree, evalCreditsPro } = config();
  await db.execute(sql`
    with p as materialized (
      select * from credit_period(${organizationId}, ${evalCreditsFree}::int, ${evalCreditsPro}::int)
    ), moved as (
      delete from credit_periods c using p
      where c.organization_id = ${organizationId} and c.period_start > p.starts_at and c.period_start < p.ends_at
        -- Only into a Pro period: Free's calendar month after a downgrade starts afresh, though the
        -- Pro period that ended began inside it.
        and exists (select 1 from organizations o where o.id = ${organizationId} and o.plan = 'pro')
      returning c.used, c.allowance
    )
    insert into credit_periods as c (organization_id, period_start, period_end, allowance, used)
    select ${organizationId}, p.starts_at, p.ends_at, max(m.allowance), sum(m.used)::int
    from p cross join moved m
    group by p.starts_at, p.ends_at
    on conflict (organization_id, period_start) do update set used = c.used + excluded.used`);
}

/**
 * Moves to Free every organization on Pro whose subscriptions have all ended at a period end they
 * were cancelled for (a minute sweep of the housekeeping): the stored state says Pro is over, and
 * Stripe's `customer.subscription.deleted` may come late. Returns how many organizations moved.
 */
export async function endLapsedSubscriptions(db: Db): Promise<number> {
  const candidates = rowsOf<{ id: string }>(
    await db.execute(sql`
      select distinct o.id from organizations o
      join ${billingSubscriptions} on ${billingSubscriptions.organizationId} = o.id
      where o.plan = 'pro' and ${entitlingStatus} and ${lapsedNow}
      limit 1000`),
  ).map((row) => row.id);
  let moved = 0;
  for (const organizationId of candidates)
    moved += await runInTransaction(db, (tx) =>
      derivePlans(tx, [organizationId], { reason: 'cancelled_period_ended' }),
    );
  return moved;
}
