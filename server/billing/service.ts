import { and, eq, sql } from 'drizzle-orm';
import { billingSubscriptions, organizations, users } from '@/db/schema';
import { withTransaction, type ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { AppError } from '../errors';
import { authorize } from '../access/permissions';
import { authorizeOrganizationWrite } from '../access/organization';
import { recordAudit } from '../audit/service';
import { config } from '../config';
import { callStripe, stripeClient, stripeForCheckout } from './stripe';
import { isObj, parseSubscription } from './stripe-objects';
import {
  creditBalance,
  currentSubscription,
  customerOf,
  derivePlans,
  effectivePeriod,
  loadBillingState,
} from './state';
import { isEntitling, type BillingState, type RedirectUrl } from './schemas';

// What callers ask of billing. A plan never changes here: checkout only opens Stripe's page, and
// the plan follows the webhook (server/billing/webhook.ts). Order of checks everywhere: role,
// then configuration (503 billing_not_configured), then state. The edges call these outside a
// transaction (operations declared `transaction: false`): Stripe is called with no transaction
// open; what is written afterwards is one statement (an audit row), or, for cancelRenewal, one
// short transaction that this module owns.

const billingPage = (organizationId: string) => `${config().appUrl}/organizations/${organizationId}/billing`;

/**
 * Admin only: a Stripe Checkout Session for the Pro plan (mode subscription, the organization as
 * client_reference_id and as subscription metadata), reusing the organization's customer when it
 * has one. Answers the page to send the browser to; payment completes there.
 */
export async function createCheckout(
  ctx: ServiceContext,
  { organizationId }: OperationInput<'create_billing_checkout'>,
): Promise<RedirectUrl> {
  const membership = await authorizeOrganizationWrite(ctx, organizationId, 'billing.checkout');
  const { client, pricePro } = stripeForCheckout();
  if (membership.organization.plan === 'pro') {
    throw new AppError('invalid_state', 'This organization is already on the Pro plan.', { state: 'pro', plan: 'pro' });
  }
  const customer = await customerOf(ctx.db, organizationId);
  const page = billingPage(organizationId);
  const open = (payer: { customer: string } | { customer_email: string } | object) =>
    callStripe('checkout.sessions.create', () =>
      client.checkout.sessions.create({
        mode: 'subscription',
        line_items: [{ price: pricePro, quantity: 1 }],
        client_reference_id: organizationId,
        metadata: { organizationId },
        subscription_data: { metadata: { organizationId } },
        ...payer,
        success_url: `${page}?checkout=success`,
        cancel_url: `${page}?checkout=cancelled`,
      }),
    );
  const byEmail = async () => {
    const [user] = await ctx.db.select({ email: users.email }).from(users).where(eq(users.id, ctx.actor.userId));
    return user?.email ? { customer_email: user.email } : {};
  };
  // A customer deleted in Stripe since the last checkout would block every upgrade: start afresh.
  const session = customer
    ? await open({ customer }).catch(async (error: unknown) => {
        if (!(error instanceof AppError) || error.details.providerCode !== 'resource_missing') throw error;
        return open(await byEmail());
      })
    : await open(await byEmail());
  if (!session.url)
    throw new AppError(
      'unavailable',
      'The payment provider returned no checkout page. Try again.',
      { reason: 'payment_provider_error' },
      { 'retry-after': '5' },
    );
  await recordAudit(ctx, {
    organizationId,
    operation: 'billing.checkout',
    targetType: 'organization',
    targetId: organizationId,
    details: { sessionId: session.id, plan: 'pro' },
  });
  return { url: session.url };
}

// Admin only: Stripe's customer portal (payment method, invoices) for the organization's customer.
export async function createPortalSession(
  ctx: ServiceContext,
  { organizationId }: OperationInput<'create_billing_portal_session'>,
): Promise<RedirectUrl> {
  await authorize(ctx, organizationId, 'billing.portal');
  const client = stripeClient();
  const customer = await customerOf(ctx.db, organizationId);
  if (!customer) {
    throw new AppError('invalid_state', 'This organization has no Stripe customer yet: upgrade first.', {
      state: 'no_customer',
    });
  }
  const session = await callStripe('billingPortal.sessions.create', () =>
    client.billingPortal.sessions.create({ customer, return_url: billingPage(organizationId) }),
  );
  await recordAudit(ctx, {
    organizationId,
    operation: 'billing.portal',
    targetType: 'organization',
    targetId: organizationId,
    details: {},
  });
  return { url: session.url };
}

// `periodEnd` confirms when it is the same instant, to the second, or the same UTC date.
function confirmsPeriodEnd(given: string, periodEnd: Date): boolean {
  if (/^\d{4}-\d{2}-\d{2}$/.test(given)) return given === periodEnd.toISOString().slice(0, 10);
  const instant = Date.parse(given);
  return Number.isFinite(instant) && Math.floor(instant / 1000) === Math.floor(periodEnd.getTime() / 1000);
}

/**
 * Cancels renewal at the end of the paid period (editors and admins; API.md). Needs the exact
 * organization name and the effective period end (422 confirmation_mismatch otherwise). Stripe is
 * told `cancel_at_period_end=true`; its reply is saved at once (the later webhook confirms it) and
 * the plan stays Pro until the period ends. Asking again once cancelled answers the same state.
 */
export async function cancelRenewal(
  ctx: ServiceContext,
  { organizationId, organizationName, periodEnd: confirmedPeriodEnd }: OperationInput<'cancel_subscription_renewal'>,
): Promise<BillingState> {
  const membership = await authorize(ctx, organizationId, 'billing.cancelRenewal');
  const client = stripeClient();
  const subscription = await currentSubscription(ctx.db, organizationId);
  if (membership.organization.plan !== 'pro' || !subscription || !isEntitling(subscription.status)) {
    throw new AppError('invalid_state', 'This organization has no active subscription to cancel.', {
      state: 'no_subscription',
      plan: membership.organization.plan,
    });
  }
  const periodEnd = effectivePeriod(subscription, await creditBalance(ctx.db, organizationId)).end;
  const mismatched = [
    ...(organizationName === membership.organization.name ? [] : ['organizationName']),
    ...(confirmsPeriodEnd(confirmedPeriodEnd, periodEnd) ? [] : ['periodEnd']),
  ];
  if (mismatched.length) {
    throw new AppError(
      'confirmation_mismatch',
      mismatched.length === 2
        ? 'Type the organization name and the period end exactly as shown.'
        : mismatched[0] === 'organizationName'
          ? 'The organization name does not match.'
          : 'The period end does not match the current period.',
      { mismatched, periodEnd: periodEnd.toISOString() },
    );
  }
  if (!subscription.cancelAtPeriodEnd) {
    const reply = await callStripe('subscriptions.update', () =>
      client.subscriptions.update(subscription.id, { cancel_at_period_end: true }),
    );
    const replied = reply as unknown as Record<string, unknown>;
    const saved =
      isObj(replied) && typeof replied.id === 'string' ? parseSubscription(replied, false, subscription.status) : null;
    if (saved && replied.cancel_at_period_end !== undefined && !saved.cancelAtPeriodEnd) {
      // Stripe answered, but the subscription still renews: say so, record nothing.
      throw new AppError(
        'unavailable',
        'The payment provider did not cancel the renewal. Try again in a moment.',
        { reason: 'payment_provider_error' },
        { 'retry-after': '60' },
      );
    }
    const t = billingSubscriptions;
    // Its own transaction (one owner): the edge opens none around a Stripe call (`transaction: false`).
    await withTransaction(ctx, async (txCtx) => {
      await txCtx.db
        .update(t)
        .set({
          status: saved?.status ?? subscription.status,
          // A reply without the field is taken as the change we asked for.
          cancelAtPeriodEnd: true,
          currentPeriodStart: saved?.currentPeriodStart ?? subscription.currentPeriodStart,
          currentPeriodEnd: saved?.currentPeriodEnd ?? subscription.currentPeriodEnd,
          // Stripe's reply is its state now: an event it created before it (delivered late) is older
          // and must not roll the cancellation back. A second of slack for the clocks.
          lastEventCreated: sql`greatest(coalesce(${t.lastEventCreated}, 0), ${Math.floor(Date.now() / 1000) - 1})`,
          updatedAt: new Date(),
        })
        .where(and(eq(t.id, subscription.id), sql`${t.status} in ('active', 'trialing', 'past_due')`));
      await derivePlans(txCtx.db, [organizationId], {
        eventId: 'cancel-renewal-reply',
        eventType: 'subscriptions.update',
      });
      await recordAudit(txCtx, {
        organizationId,
        operation: 'billing.cancelRenewal',
        targetType: 'subscription',
        targetId: subscription.id,
        details: { periodEnd: periodEnd.toISOString() },
      });
    });
  }
  const [org] = await ctx.db
    .select({ plan: organizations.plan })
    .from(organizations)
    .where(eq(organizations.id, organizationId));
  return loadBillingState(ctx.db, organizationId, org?.plan ?? membership.organization.plan);
}
