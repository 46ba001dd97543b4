import { handleStripeWebhook } from '@/server/api/stripe-webhook';
import { checkoutCompleted, event, signatureFor, subscription, uniqueId, type StripeEvent } from './fake-stripe';

export * from './fake-stripe';

// Webhook deliveries to the in-process handler, signed the way Stripe signs them.

export type Delivery = { status: number; body: any };

// Delivers a payload to POST /api/webhooks/stripe in-process, signed like Stripe signs it.
export async function deliverRaw(
  payload: string,
  signature: string | null,
  options: { method?: string; url?: string } = {},
): Promise<Delivery> {
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
  if (signature !== null) headers['stripe-signature'] = signature;
  const response = await handleStripeWebhook(
    new Request(options.url ?? 'http://localhost:3999/api/webhooks/stripe', {
      method: options.method ?? 'POST',
      headers,
      body: options.method === 'GET' ? undefined : payload,
    }),
  );
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

export async function deliver(
  e: StripeEvent,
  options: { secret?: string; timestamp?: number } = {},
): Promise<Delivery> {
  const payload = JSON.stringify(e);
  return deliverRaw(payload, signatureFor(payload, options));
}

// The webhooks an upgrade produces, in Stripe's order: checkout completed, subscription created.
export async function upgradeThroughWebhooks(
  organizationId: string,
  options: { subscriptionId?: string; customer?: string; periodStart?: number; periodEnd?: number } = {},
) {
  const subscriptionId = options.subscriptionId ?? uniqueId('sub');
  const customer = options.customer ?? uniqueId('cus');
  const sub = subscription({
    id: subscriptionId,
    organizationId,
    customer,
    periodStart: options.periodStart,
    periodEnd: options.periodEnd,
  });
  for (const e of [
    event('checkout.session.completed', checkoutCompleted({ organizationId, customer, subscription: subscriptionId })),
    event('customer.subscription.created', sub),
  ]) {
    const delivered = await deliver(e);
    if (delivered.status !== 200)
      throw new Error(`webhook failed: ${delivered.status} ${JSON.stringify(delivered.body)}`);
  }
  return { subscriptionId, customer, subscription: sub };
}
