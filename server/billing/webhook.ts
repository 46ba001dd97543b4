import Stripe from 'stripe';
import { z } from 'zod';
import { and, asc, eq, inArray, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { billingCustomers, billingEvents, billingSubscriptions, organizations } from '@/db/schema';
import { runInTransaction } from '../context';
import { AppError, invalidRequest, isAppError } from '../errors';
import { jsonTextProblem } from '../input-hygiene';
import { raiseWarning, resolveWarning } from '../warnings/service';
import { derivePlans } from './state';
import {
  at,
  idOf,
  int,
  isObj,
  parseSubscription,
  path,
  str,
  type Obj,
  type ParsedSubscription,
} from './stripe-objects';

// POST /api/webhooks/stripe (API.md "Billing"): the only way a plan changes. The signature is
// verified on the raw body with the SDK (HMAC-SHA256 of `t.payload`, 300 s tolerance both ways, any `v1=`
// against any configured secret), then the event is applied in one transaction that also records
// its id: a redelivery finds the id and changes nothing. Events about one subscription carry a
// watermark (`created` of the last one applied): an older event never rolls state back, an equal
// one applies in arrival order.

const tolerance = 300;

export type StripeEvent = { id: string; type: string; created: number; data: { object: Record<string, unknown> } };

const eventSchema = z.object({
  id: z.string().min(1).max(255),
  type: z.string().min(1).max(255),
  created: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  data: z.object({ object: z.record(z.string(), z.unknown()) }),
});

async function existingOrganization(db: Db, id: string | null): Promise<string | null> {
  if (!id) return null;
  const [row] = await db.select({ id: organizations.id }).from(organizations).where(eq(organizations.id, id));
  return row?.id ?? null;
}

async function organizationOfCustomer(db: Db, customerId: string | null): Promise<string | null> {
  if (!customerId) return null;
  const [row] = await db
    .select({ organizationId: billingCustomers.organizationId })
    .from(billingCustomers)
    .where(eq(billingCustomers.customerId, customerId));
  return row?.organizationId ?? null;
}

type Applied = {
  outcome: 'applied' | 'stale' | 'unlinked' | 'ignored';
  organizationId: string | null;
  subscriptionId: string | null;
  customerId?: string | null;
};

/**
 * Writes the subscription as the event describes it, unless the stored row was written by a
 * later event (an equal `created` applies: arrival order). The organization comes from metadata.organizationId, else the
 * customer recorded at checkout, else the row already stored; none yet leaves it unlinked until
 * its checkout.session.completed adopts it.
 */
async function applySubscription(
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
        status: sql`excluded.status`,
        priceId: sql`coalesce(excluded.price_id, ${t.priceId})`,
        currentPeriodStart: sql`coalesce(excluded.current_period_start, ${t.currentPeriodStart})`,
        currentPeriodEnd: sql`coalesce(excluded.current_period_end, ${t.currentPeriodEnd})`,
        cancelAtPeriodEnd: sql`excluded.cancel_at_period_end`,
        lastEventCreated: sql`excluded.last_event_created`,
        lastEventId: sql`excluded.last_event_id`,
        updatedAt: now,
      },
      setWhere: sql`${t.lastEventCreated} is null or excluded.last_event_created >= ${t.lastEventCreated}`,
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
      await applyWaitingInvoices(db, [sub.id], [sub.customerId]);
    }
    return { outcome: 'stale', organizationId: linked?.organizationId ?? organizationId, subscriptionId: sub.id };
  }
  const linkedTo = written[0].organizationId;
  if (linkedTo) {
    await derivePlans(db, [linkedTo], { eventId: event.id, eventType: event.type });
    await applyWaitingInvoices(db, [sub.id], [sub.customerId]);
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
 * session's `created` as its watermark, so any later subscription event corrects it.
 */
async function applyCheckoutCompleted(db: Db, event: StripeEvent): Promise<Applied> {
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

// The subscription an invoice belongs to, in the shapes of older and newer API versions.
function invoiceSubscription(invoice: Obj): string | null {
  return (
    idOf(invoice.subscription) ??
    idOf(path(invoice, 'parent', 'subscription_details', 'subscription')) ??
    idOf(path(invoice, 'subscription_details', 'subscription'))
  );
}

function money(amount: number | null, currency: string | null): string {
  if (amount === null) return '';
  const value = (amount / 100).toFixed(2);
  return currency ? ` of ${value} ${currency.toUpperCase()}` : ` of ${value}`;
}

/**
 * invoice.payment_failed raises payment_failed (one warning per subscription, each failed event a
 * distinct occurrence); invoice.paid resolves it. Invoice events have their own watermark on the
 * subscription row, so a failure reported after a later payment does not reopen the warning.
 */
async function applyInvoice(db: Db, event: StripeEvent, failed: boolean): Promise<Applied> {
  const invoice = event.data.object;
  const subscriptionId = invoiceSubscription(invoice);
  const customerId = idOf(invoice.customer);
  const t = billingSubscriptions;
  const [row] = subscriptionId
    ? await db.select({ organizationId: t.organizationId }).from(t).where(eq(t.id, subscriptionId)).for('update')
    : [];
  const organizationId =
    row?.organizationId ??
    (await organizationOfCustomer(db, customerId)) ??
    (await existingOrganization(
      db,
      str(path(invoice, 'parent', 'subscription_details', 'metadata', 'organizationId')) ??
        str(path(invoice, 'subscription_details', 'metadata', 'organizationId')),
    ));
  if (!organizationId) return { outcome: 'unlinked', organizationId: null, subscriptionId, customerId };
  if (row) {
    const moved = await db
      .update(t)
      .set({ paymentEventCreated: event.created })
      .where(
        and(
          eq(t.id, subscriptionId!),
          sql`(${t.paymentEventCreated} is null or ${t.paymentEventCreated} <= ${event.created})`,
        ),
      )
      .returning({ id: t.id });
    if (moved.length === 0) return { outcome: 'stale', organizationId, subscriptionId };
  }
  const subjectId = subscriptionId ?? customerId ?? str(invoice.id) ?? event.id;
  if (!failed) {
    await resolveWarning(db, { organizationId, kind: 'payment_failed', subjectId });
    return { outcome: 'applied', organizationId, subscriptionId };
  }
  const amountDue = int(invoice.amount_due);
  const currency = str(invoice.currency, 10);
  const nextAttempt = at(int(invoice.next_payment_attempt));
  await raiseWarning(db, {
    organizationId,
    kind: 'payment_failed',
    subjectId,
    message: `A payment${money(amountDue, currency)} for the Pro plan failed.${nextAttempt ? ` Stripe retries on ${nextAttempt.toISOString().slice(0, 10)}.` : ''} Update the payment method in Billing to keep Pro.`,
    details: {
      subscriptionId,
      invoiceId: str(invoice.id),
      amountDue,
      currency,
      attemptCount: int(invoice.attempt_count),
      nextPaymentAttempt: nextAttempt?.toISOString() ?? null,
      hostedInvoiceUrl: str(invoice.hosted_invoice_url, 2048),
    },
    occurrenceId: event.id,
  });
  return { outcome: 'applied', organizationId, subscriptionId };
}

/**
 * Invoice events that arrived before their subscription or customer was tied to an organization
 * (outcome unlinked, payload kept) are applied once it is, in the order Stripe created them.
 */
async function applyWaitingInvoices(
  db: Db,
  subscriptionIds: (string | null)[],
  customerIds: (string | null)[],
): Promise<void> {
  const subs = subscriptionIds.filter((id): id is string => Boolean(id));
  const customers = customerIds.filter((id): id is string => Boolean(id));
  if (!subs.length && !customers.length) return;
  const e = billingEvents;
  const waiting = await db
    .select()
    .from(e)
    .where(
      and(
        eq(e.outcome, 'unlinked'),
        inArray(e.type, ['invoice.paid', 'invoice.payment_failed']),
        or(
          ...[
            subs.length ? inArray(e.subscriptionId, subs) : undefined,
            customers.length ? inArray(e.customerId, customers) : undefined,
          ].filter((c) => c !== undefined),
        ),
      ),
    )
    .orderBy(asc(e.created), asc(e.receivedAt))
    .limit(100);
  for (const row of waiting) {
    if (!isObj(row.payload)) continue;
    const applied = await applyInvoice(
      db,
      { id: row.id, type: row.type, created: row.created, data: { object: row.payload } },
      row.type === 'invoice.payment_failed',
    );
    if (applied.outcome === 'unlinked') continue;
    await db
      .update(e)
      .set({ outcome: applied.outcome, organizationId: applied.organizationId, payload: null })
      .where(eq(e.id, row.id));
  }
}

async function dispatchEvent(db: Db, event: StripeEvent): Promise<Applied> {
  switch (event.type) {
    case 'checkout.session.completed':
      return applyCheckoutCompleted(db, event);
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted':
      return applySubscription(
        db,
        event,
        parseSubscription(event.data.object, event.type === 'customer.subscription.deleted'),
      );
    case 'invoice.paid':
      return applyInvoice(db, event, false);
    case 'invoice.payment_failed':
      return applyInvoice(db, event, true);
    default:
      return { outcome: 'ignored', organizationId: null, subscriptionId: null };
  }
}

/**
 * Applies one verified event exactly once: its id is inserted first (a concurrent redelivery waits
 * on that row and then finds it), the state change follows, and the outcome is recorded, all in
 * one transaction. Returns null for a duplicate.
 */
export async function applyStripeEvent(db: Db, event: StripeEvent): Promise<Applied | null> {
  return runInTransaction(db, async (tx) => {
    const claimed = await tx
      .insert(billingEvents)
      .values({ id: event.id, type: event.type, created: event.created, outcome: 'pending' })
      .onConflictDoNothing()
      .returning({ id: billingEvents.id });
    if (claimed.length === 0) return null;
    const applied = await dispatchEvent(tx, event);
    const waits = applied.outcome === 'unlinked' && event.type.startsWith('invoice.');
    await tx
      .update(billingEvents)
      .set({
        outcome: applied.outcome,
        organizationId: applied.organizationId,
        subscriptionId: applied.subscriptionId,
        customerId: applied.customerId ?? null,
        payload: waits ? event.data.object : null,
      })
      .where(eq(billingEvents.id, event.id));
    return applied;
  });
}

// ---- verifying a delivery ----

function rejected(message: string, reason: string): AppError {
  return new AppError('invalid_request', message, { reason });
}

// The header's one `t=`, in plain digits; null for none, several, or anything else (the SDK would
// read "12abc" as 12, and 10^20 as a time far ahead).
function signedTimestamp(header: string): number | null {
  const values = header
    .split(',')
    .map((item) => item.split('='))
    .filter(([name]) => name === 't')
    .map(([, value]) => value);
  return values.length === 1 && /^[0-9]{1,15}$/.test(values[0] ?? '') ? Number(values[0]) : null;
}

// The signature check on the raw bytes, against each configured secret in turn. The SDK refuses a
// timestamp too old; one too far ahead is refused here: the tolerance applies both ways.
export function verifySignature(payload: Buffer, header: string | null, secrets: string[]): void {
  if (!header) throw rejected('The Stripe-Signature header is missing.', 'missing_signature');
  const timestamp = signedTimestamp(header);
  if (timestamp === null) throw rejected('The Stripe-Signature header is malformed.', 'malformed_signature');
  const messages: string[] = [];
  for (const secret of secrets) {
    try {
      if (Stripe.webhooks.signature?.verifyHeader(payload, header, secret, tolerance)) {
        if (timestamp - Date.now() / 1000 > tolerance)
          throw rejected(
            'The Stripe-Signature timestamp is outside the tolerance window.',
            'timestamp_outside_tolerance',
          );
        return;
      }
    } catch (error) {
      if (isAppError(error)) throw error;
      messages.push(error instanceof Error ? error.message : '');
    }
  }
  // A secret whose signature matched but whose timestamp is too old says more than the others.
  const message = messages.find((m) => /tolerance/i.test(m)) ?? messages[0] ?? '';
  if (/tolerance/i.test(message))
    throw rejected('The Stripe-Signature timestamp is outside the tolerance window.', 'timestamp_outside_tolerance');
  if (/unable to extract|no signatures found with expected scheme/i.test(message))
    throw rejected('The Stripe-Signature header is malformed.', 'malformed_signature');
  throw rejected('The Stripe-Signature does not match the body.', 'signature_mismatch');
}

export function parseEvent(payload: Buffer): StripeEvent {
  const parsed: { value?: unknown } = {};
  const problem = jsonTextProblem(payload.toString('utf8'), undefined, parsed);
  if (problem) throw invalidRequest(`The event cannot be accepted: ${problem}`, [{ path: '', message: problem }]);
  const result = eventSchema.safeParse(parsed.value);
  if (!result.success) {
    throw invalidRequest(
      'The body is not a Stripe event.',
      result.error.issues.slice(0, 20).map((i) => ({ path: i.path.join('.'), message: i.message })),
    );
  }
  return result.data as StripeEvent;
}
