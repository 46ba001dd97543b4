import { and, asc, eq, inArray, or, sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { billingEvents, billingSubscriptions } from '@/db/schema';
import { raiseWarning, resolveWarning } from '../warnings/service';
import { at, idOf, int, isObj, path, str, type Obj } from './stripe-objects';
import { existingOrganization, organizationOfCustomer, type Applied, type StripeEvent } from './webhook-linking';

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

// A payment warning once the subscription is unpaid (Stripe stopped retrying; the plan is Free).
export const unpaidMessage =
  'Payments for the Pro plan failed and Stripe stopped retrying, so this organization is on Free. Pay the open invoice or update the payment method in Billing to get Pro back.';

/**
 * invoice.payment_failed raises payment_failed (one warning per subscription, each failed event a
 * distinct occurrence); invoice.paid resolves it. Invoice events have their own watermark on the
 * subscription row, so a failure reported after a later payment does not reopen the warning.
 */
export async function applyInvoice(db: Db, event: StripeEvent, failed: boolean): Promise<Applied> {
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
  // Already unpaid (the events came in another order): Pro has ended, so "to keep Pro" would be wrong.
  const [stored] = subscriptionId
    ? await db
        .select({ status: billingSubscriptions.status })
        .from(billingSubscriptions)
        .where(eq(billingSubscriptions.id, subscriptionId))
    : [];
  await raiseWarning(db, {
    organizationId,
    kind: 'payment_failed',
    subjectId,
    message:
      stored?.status === 'unpaid'
        ? unpaidMessage
        : `A payment${money(amountDue, currency)} for the Pro plan failed.${nextAttempt ? ` Stripe retries on ${nextAttempt.toISOString().slice(0, 10)}.` : ''} Update the payment method in Billing to keep Pro.`,
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
export async function applyWaitingInvoices(
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
