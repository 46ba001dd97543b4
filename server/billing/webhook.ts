import Stripe from 'stripe';
import { z } from 'zod';
import { eq } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { billingEvents } from '@/db/schema';
import { runInTransaction } from '../context';
import { AppError, invalidRequest, isAppError } from '../errors';
import { jsonTextProblem } from '../input-hygiene';
import { parseSubscription } from './stripe-objects';
import { applyInvoice } from './webhook-invoices';
import type { Applied, StripeEvent } from './webhook-linking';
import { applyCheckoutCompleted, applySubscription } from './webhook-subscriptions';

// POST /api/webhooks/stripe (API.md "Billing"): the only way a plan changes. The signature is
// verified on the raw body with the SDK (HMAC-SHA256 of `t.payload`, 300 s tolerance both ways, any `v1=`
// against any configured secret), then the event is applied in one transaction that also records
// its id: a redelivery finds the id and changes nothing. Events about one subscription carry a
// watermark (`created` of the last one applied): an older event never rolls state back, an equal
// one applies in arrival order.
// This file verifies and dispatches; the per-event appliers are in webhook-subscriptions.ts and
// webhook-invoices.ts, what they share in webhook-linking.ts.

const tolerance = 300;

const eventSchema = z.object({
  id: z.string().min(1).max(255),
  type: z.string().min(1).max(255),
  created: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  data: z.object({ object: z.record(z.string(), z.unknown()) }),
});

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
