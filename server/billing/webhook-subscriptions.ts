import { and, eq, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { billingCustomers, billingSubscriptions, warnings } from '@/db/schema';
import { carryCreditsIntoCurrentPeriod, derivePlans } from './state';
import { idOf, isObj, parseSubscription, path, str, type ParsedSubscription } from './stripe-objects';
import { applyWaitingInvoices, unpaidMessage } from './webhook-invoices';
import { existingOrganization, organizationOfCustomer, type Applied, type StripeEvent } from './webhook-linking';
import { resolveWarning } from '../warnings/service';

/**
 * Writes the subscription as the event describes it, unless the stored row was written by a
 * later event (an equal `created` applies: arrival order), or the subscription has ended:
 * `canceled` and `incomplete_expired` are final in Stripe, so nothing brings it back. The organization
 * comes from metadata.organizationId, else the customer recorded at checkout, else the row already
 * stored; none yet leaves it unlinked until its checkout.session.completed adopts it.
 */
export async function applySubscription(
  db: Db,
  event: StripeEvent,
  sub: ParsedSubscription,
  knownOrganizationId: string | null = null,
): Promise<Applied> {
  const organizationId =
    knownOrganizationId ??
    (await existingOrganization(db, sub.organizationId)) ??
    (await organizationOfCustomer(db, sub.customerId));
  const t = billingSubscriptions;
  const now = new Date();
  // On an equal `created`, a later arrival applies (API.md), except the creation event: whatever
  // was written in the same second (its activation, say) already describes the newer state.
  const newer = sql`(${t.lastEventCreated} is null or excluded.last_event_created ${
    event.type === 'customer.subscription.created' ? sql`>` : sql`>=`
  } ${t.lastEventCreated})`;
  // A row that only a paid checkout wrote (no period yet) is our guess, not Stripe's state: an
  // older event still brings the period and price, and its status when that status entitles.
  const guessed = sql`${t.currentPeriodEnd} is null`;
  const ended = sql`(${t.status} in ('canceled', 'incomplete_expired') and excluded.status <> ${t.status})`;
  const written = await db
    .insert(t)
    .values({
      id: sub.id,
      organizationId,
      customerId: sub.customerId,
      status: sub.status,
      priceId: sub.priceId,
      currentPeriodStart: sub.currentPeriodStart,
      currentPeriodEnd: sub.currentPeriodEnd,
      cancelAtPeriodEnd: sub.cancelAtPeriodEnd,
      lastEventCreated: event.created,
      lastEventId: event.id,
      updatedAt: now,
    })
    .onConflictDoUpdate({
      target: t.id,
      set: {
        organizationId: sql`coalesce(${t.organizationId}, excluded.organization_id)`,
        customerId: sql`coalesce(excluded.customer_id, ${t.customerId})`,
        status: sql`case when ${newer} or excluded.status in ('active', 'trialing', 'past_due')
          then excluded.status else ${t.status} end`,
        priceId: sql`coalesce(excluded.price_id, ${t.priceId})`,
        currentPeriodStart: sql`coalesce(excluded.current_period_start, ${t.currentPeriodStart})`,
        currentPeriodEnd: sql`coalesce(excluded.current_period_end, ${t.currentPeriodEnd})`,
        cancelAtPeriodEnd: sql`excluded.cancel_at_period_end`,
        lastEventCreated: sql`greatest(${t.lastEventCreated}, excluded.last_event_created)`,
        lastEventId: sql`case when ${newer} then excluded.last_event_id else ${t.lastEventId} end`,
        updatedAt: now,
      },
      setWhere: sql`(${newer} or ${guessed}) and not ${ended}`,
    })
    .returning({ organizationId: t.organizationId });
  if (written.length === 0) {
    // Stale: the state stays, but an organization learned from this event is still recorded.
    const [linked] = await db
      .update(t)
      .set({ organizationId })
      .where(and(eq(t.id, sub.id), isNull(t.organizationId), sql`${organizationId}::text is not null`))
      .returning({ organizationId: t.organizationId });
    if (linked?.organizationId) {
      await derivePlans(db, [linked.organizationId], { eventId: event.id, eventType: event.type });
      await carryCreditsIntoCurrentPeriod(db, linked.organizationId);
      await applyWaitingInvoices(db, [sub.id], [sub.customerId]);
    }
    return { outcome: 'stale', organizationId: linked?.organizationId ?? organizationId, subscriptionId: sub.id };
  }
  const linkedTo = written[0].organizationId;
  if (linkedTo) {
    await derivePlans(db, [linkedTo], { eventId: event.id, eventType: event.type });
    await carryCreditsIntoCurrentPeriod(db, linkedTo);
    await applyWaitingInvoices(db, [sub.id], [sub.customerId]);
    // A subscription that has ended can never be paid again: its payment warning has nothing left to ask.
    if (sub.status === 'canceled' || sub.status === 'incomplete_expired')
      await resolveWarning(db, { organizationId: linkedTo, kind: 'payment_failed', subjectId: sub.id });
    // Unpaid: Stripe stopped retrying and Pro has ended, but paying the open invoice brings it back;
    // the warning says so instead of "to keep Pro".
    if (sub.status === 'unpaid')
      await db
        .update(warnings)
        .set({ message: unpaidMessage })
        .where(
          and(
            eq(warnings.organizationId, linkedTo),
            eq(warnings.kind, 'payment_failed'),
            eq(warnings.subjectId, sub.id),
            isNull(warnings.resolvedAt),
          ),
        );
  }
  return {
    outcome: linkedTo ? 'applied' : 'unlinked',
    organizationId: linkedTo,
    subscriptionId: sub.id,
    customerId: sub.customerId,
  };
}

/**
 * checkout.session.completed: ties the customer (and the subscription) to the organization named
 * by client_reference_id (or metadata.organizationId) and adopts subscriptions that arrived
 * before it. A paid session whose subscription is not known yet records it as active, with the
 * session's `created` as its watermark: a later subscription event corrects it, and an earlier one
 * (Stripe creates the subscription first and may deliver it later) fills in its period and price.
 */
export async function applyCheckoutCompleted(db: Db, event: StripeEvent): Promise<Applied> {
  const session = event.data.object;
  const organizationId =
    (await existingOrganization(db, str(session.client_reference_id))) ??
    (await existingOrganization(db, str(path(session, 'metadata', 'organizationId'))));
  const subscriptionId = idOf(session.subscription);
  if (!organizationId) return { outcome: 'unlinked', organizationId: null, subscriptionId };
  const customerId = idOf(session.customer);
  if (customerId) await db.insert(billingCustomers).values({ customerId, organizationId }).onConflictDoNothing();
  const t = billingSubscriptions;
  const adopt = [
    subscriptionId ? eq(t.id, subscriptionId) : undefined,
    customerId ? eq(t.customerId, customerId) : undefined,
  ].filter((c) => c !== undefined);
  if (adopt.length)
    await db
      .update(t)
      .set({ organizationId })
      .where(and(isNull(t.organizationId), or(...adopt)));
  if (isObj(session.subscription) && str(session.subscription.status, 64)) {
    const applied = await applySubscription(db, event, parseSubscription(session.subscription, false), organizationId);
    await applyWaitingInvoices(db, [subscriptionId], [customerId]);
    return applied;
  }
  const paid = session.payment_status === 'paid' || session.payment_status === 'no_payment_required';
  if (subscriptionId && paid) {
    await db
      .insert(t)
      .values({
        id: subscriptionId,
        organizationId,
        customerId,
        status: 'active',
        lastEventCreated: event.created,
        lastEventId: event.id,
      })
      .onConflictDoNothing();
  }
  await derivePlans(db, [organizationId], { eventId: event.id, eventType: event.type });
  await applyWaitingInvoices(db, [subscriptionId], [customerId]);
  return { outcome: 'applied', organizationId, subscriptionId, customerId };
}
