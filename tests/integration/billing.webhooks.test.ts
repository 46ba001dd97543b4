import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { auditLog, billingEvents, billingSubscriptions } from '@/db/schema';
import { endLapsedSubscriptions } from '@/server/billing/state';
import { newOrganization, newTeam, newUser, type TestUser } from '../helpers/api';
import {
  checkoutCompleted,
  deliver,
  deliverRaw,
  event,
  invoice,
  oldWebhookSecret,
  pricePro,
  signatureFor,
  startFakeStripe,
  subscription,
  uniqueId,
  upgradeThroughWebhooks,
  useFakeStripe,
  webhookSecret,
  type FakeStripe,
} from '../helpers/stripe';

// POST /api/webhooks/stripe: signatures on the raw body (tampering, staleness, rotation), each
// event applied once, out-of-order events never rolling state back, and the plan derived only
// from that persisted state.

let fake: FakeStripe;
beforeAll(async () => {
  fake = await startFakeStripe();
  useFakeStripe(fake);
});
afterAll(() => fake.close());

const now = () => Math.floor(Date.now() / 1000);

async function planOf(user: TestUser, organizationId: string): Promise<string> {
  const org = await user.call('GET', `/organizations/${organizationId}`);
  return org.body.plan;
}

async function billing(user: TestUser, organizationId: string) {
  const state = await user.call('GET', `/organizations/${organizationId}/billing`);
  expect(state.status).toBe(200);
  return state.body;
}

async function storedEvent(id: string) {
  const [row] = await (await getDb()).select().from(billingEvents).where(eq(billingEvents.id, id));
  return row;
}

async function ownedOrganization() {
  const admin = await newUser();
  const org = await newOrganization(admin);
  return { admin, org };
}

function expectRejected(result: { status: number; body: any }, reason?: string) {
  expect(result.status, JSON.stringify(result.body)).toBe(400);
  expect(result.body.error.code).toBe('invalid_request');
  expect(result.body.error.requestId).toEqual(expect.any(String));
  if (reason) expect(result.body.error.details.reason).toBe(reason);
}

describe('webhook signatures', () => {
  it('accepts a correctly signed event and records its id', async () => {
    const e = event('product.created', { id: 'prod_1', object: 'product' });
    const delivered = await deliver(e);
    expect(delivered).toEqual({ status: 200, body: { received: true } });
    expect(await storedEvent(e.id)).toMatchObject({ id: e.id, type: 'product.created', outcome: 'ignored' });
  });

  it('refuses a missing, malformed, tampered or foreign signature with 400, storing nothing', async () => {
    const e = event('customer.subscription.created', subscription({ id: uniqueId('sub'), status: 'active' }));
    const payload = JSON.stringify(e);
    expectRejected(await deliverRaw(payload, null), 'missing_signature');
    expectRejected(await deliverRaw(payload, 'garbage'), 'malformed_signature');
    expectRejected(
      await deliverRaw(payload.replace('"active"', '"trialing"'), signatureFor(payload)),
      'signature_mismatch',
    );
    expectRejected(
      await deliverRaw(payload, signatureFor(payload, { secret: 'whsec_someone_else' })),
      'signature_mismatch',
    );
    expectRejected(await deliverRaw(`${payload} `, signatureFor(payload)), 'signature_mismatch');
    expect(await storedEvent(e.id)).toBeUndefined();
  });

  it('enforces the 300 s tolerance on the signed timestamp', async () => {
    const stale = event('product.created', { id: 'prod_2' });
    const payload = JSON.stringify(stale);
    expectRejected(
      await deliverRaw(payload, signatureFor(payload, { timestamp: now() - 301 })),
      'timestamp_outside_tolerance',
    );
    expect(await storedEvent(stale.id)).toBeUndefined();
    expect((await deliverRaw(payload, signatureFor(payload, { timestamp: now() - 240 }))).status).toBe(200);
  });

  it('applies the tolerance both ways: a correctly signed timestamp an hour or 10^20 s ahead is refused; a malformed one too', async () => {
    const ahead = event('product.created', { id: 'prod_ahead' });
    const payload = JSON.stringify(ahead);
    expectRejected(
      await deliverRaw(payload, signatureFor(payload, { timestamp: now() + 3600 })),
      'timestamp_outside_tolerance',
    );
    expectRejected(
      await deliverRaw(payload, signatureFor(payload, { timestamp: now() + 301 })),
      'timestamp_outside_tolerance',
    );
    expectRejected(await deliverRaw(payload, signatureFor(payload, { timestamp: 1e20 })), 'malformed_signature');
    const v1 = signatureFor(payload)
      .split(',')
      .find((part) => part.startsWith('v1='));
    const t = now();
    const hmac = (timestamp: string) =>
      createHmac('sha256', webhookSecret).update(`${timestamp}.${payload}`).digest('hex');
    expectRejected(await deliverRaw(payload, `t=${t}abc,v1=${hmac(String(t))}`), 'malformed_signature');
    expectRejected(
      await deliverRaw(payload, `t=100000000000000000000,v1=${hmac('100000000000000000000')}`),
      'malformed_signature',
    );
    expectRejected(await deliverRaw(payload, `t=${t},t=${t},${v1}`), 'malformed_signature');
    expect(await storedEvent(ahead.id)).toBeUndefined();
    expect((await deliverRaw(payload, signatureFor(payload, { timestamp: now() + 240 }))).status).toBe(200);
  });

  it('accepts every configured secret during rotation, and any matching v1 in the header', async () => {
    const old = event('product.created', { id: 'prod_3' });
    expect((await deliver(old, { secret: oldWebhookSecret })).status).toBe(200);

    const both = event('product.created', { id: 'prod_4' });
    const payload = JSON.stringify(both);
    const t = now();
    const sign = (secret: string) => createHmac('sha256', secret).update(`${t}.${payload}`).digest('hex');
    const header = `t=${t},v1=${sign('whsec_retired')},v1=${sign(oldWebhookSecret)}`;
    expect((await deliverRaw(payload, header)).status).toBe(200);
    expectRejected(await deliverRaw(payload, `t=${t},v0=${sign(oldWebhookSecret)}`));
  });

  it('answers poison, deep, non-JSON, non-event and oversized bodies with a 4xx, never a 5xx', async () => {
    const poison = JSON.stringify(event('product.created', { id: 'prod_5', name: 'a\u0000b' }));
    expectRejected(await deliverRaw(poison, signatureFor(poison)));
    const lone = JSON.stringify(event('product.created', { id: 'prod_6', name: 'x' })).replace('"x"', '"\\ud800"');
    expectRejected(await deliverRaw(lone, signatureFor(lone)));
    const deep = `{"id":"evt_deep","type":"product.created","created":${now()},"data":{"object":${'['.repeat(70)}${']'.repeat(70)}}}`;
    expectRejected(await deliverRaw(deep, signatureFor(deep)));
    for (const body of [
      'not json',
      '[]',
      '{"id":"evt_x"}',
      `{"id":"evt_y","type":"x","created":-1,"data":{"object":{}}}`,
    ]) {
      expectRejected(await deliverRaw(body, signatureFor(body)));
    }
    const huge = JSON.stringify(event('product.created', { id: 'prod_7', blob: 'x'.repeat(1024 * 1024) }));
    // API.md: "A rejected delivery is `400`", an oversized one included.
    expectRejected(await deliverRaw(huge, signatureFor(huge)));
    const missingId = JSON.stringify(
      event('customer.subscription.updated', { object: 'subscription', status: 'active' }),
    );
    expectRejected(await deliverRaw(missingId, signatureFor(missingId)));
    const wrongTypes = JSON.stringify(
      event('customer.subscription.updated', {
        id: uniqueId('sub'),
        status: 'active',
        customer: 42,
        metadata: 'x',
        items: { data: 'no' },
        current_period_end: 1e300,
      }),
    );
    expect((await deliverRaw(wrongTypes, signatureFor(wrongTypes))).status).toBe(200);
    expect((await deliverRaw('{}', null, { method: 'GET' })).status).toBe(405);
  });
});

describe('plans from webhook state', () => {
  it('checkout.session.completed and customer.subscription.created move the organization to Pro', async () => {
    const { admin, org } = await ownedOrganization();
    expect(await planOf(admin, org.id)).toBe('free');
    const periodStart = now() - 60;
    const periodEnd = periodStart + 30 * 86400;
    const { subscriptionId } = await upgradeThroughWebhooks(org.id, { periodStart, periodEnd });
    expect(await planOf(admin, org.id)).toBe('pro');
    expect(await billing(admin, org.id)).toMatchObject({
      plan: 'pro',
      status: 'active',
      periodStart: new Date(periodStart * 1000).toISOString(),
      periodEnd: new Date(periodEnd * 1000).toISOString(),
      renewsAt: new Date(periodEnd * 1000).toISOString(),
      cancelAtPeriodEnd: false,
      creditsPerPeriod: 10000,
      creditsRemaining: 10000,
      datasetCapacity: 500,
      traceRetentionDays: 90,
      paymentMethodManageable: true,
    });
    const audit = await (await getDb()).select().from(auditLog).where(eq(auditLog.organizationId, org.id));
    expect(audit.filter((a) => a.operation === 'billing.planChanged')).toEqual([
      expect.objectContaining({
        userId: 'stripe',
        clientId: 'stripe-webhook',
        details: expect.objectContaining({ from: 'free', to: 'pro' }),
      }),
    ]);
    const [row] = await (
      await getDb()
    )
      .select()
      .from(billingSubscriptions)
      .where(eq(billingSubscriptions.id, subscriptionId));
    expect(row).toMatchObject({ organizationId: org.id, status: 'active', priceId: 'price_test_pro' });
  });

  it('Free shows the calendar month (UTC), the Free allowance and no subscription status', async () => {
    const { admin, org } = await ownedOrganization();
    const today = new Date();
    const monthEnd = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() + 1, 1));
    expect(await billing(admin, org.id)).toEqual({
      plan: 'free',
      status: null,
      periodStart: new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), 1)).toISOString(),
      periodEnd: monthEnd.toISOString(),
      renewsAt: monthEnd.toISOString(),
      cancelAtPeriodEnd: false,
      creditsRemaining: 200,
      creditsUsed: 0,
      creditsPerPeriod: 200,
      datasetCapacity: 10,
      traceRetentionDays: 30,
      paymentMethodManageable: false,
    });
  });

  it('maps every subscription status: active, trialing and past_due are Pro; the rest and deletion are Free', async () => {
    const { admin, org } = await ownedOrganization();
    const id = uniqueId('sub');
    let created = now() - 1000;
    const expectations: [string, string][] = [
      ['incomplete', 'free'],
      ['trialing', 'pro'],
      ['active', 'pro'],
      ['past_due', 'pro'],
      ['unpaid', 'free'],
      ['active', 'pro'],
      ['incomplete_expired', 'free'],
    ];
    for (const [status, plan] of expectations) {
      expect(
        (
          await deliver(
            event('customer.subscription.updated', subscription({ id, organizationId: org.id, status }), {
              created: created++,
            }),
          )
        ).status,
      ).toBe(200);
      expect(await planOf(admin, org.id), status).toBe(plan);
    }
    // An older event after that changes nothing.
    expect(
      (
        await deliver(
          event('customer.subscription.updated', subscription({ id, organizationId: org.id, status: 'active' }), {
            created: created - 3,
          }),
        )
      ).status,
    ).toBe(200);
    expect(await planOf(admin, org.id)).toBe('free');

    const second = uniqueId('sub');
    await deliver(
      event('customer.subscription.created', subscription({ id: second, organizationId: org.id, status: 'active' }), {
        created: created++,
      }),
    );
    expect(await planOf(admin, org.id)).toBe('pro');
    await deliver(
      event('customer.subscription.deleted', subscription({ id: second, organizationId: org.id, status: 'canceled' }), {
        created: created++,
      }),
    );
    expect(await planOf(admin, org.id)).toBe('free');
    expect((await billing(admin, org.id)).status).toBeNull();
  });

  it('applies a duplicate event once: a redelivery answers 200 and changes nothing', async () => {
    const { admin, org } = await ownedOrganization();
    const { subscriptionId, customer } = await upgradeThroughWebhooks(org.id);
    const failed = event('invoice.payment_failed', invoice({ subscription: subscriptionId, customer }));
    for (let i = 0; i < 3; i++) expect(await deliver(failed)).toEqual({ status: 200, body: { received: true } });
    const list = async () =>
      (await admin.call('GET', `/organizations/${org.id}/warnings`, { query: 'kind=payment_failed' })).body.items;
    expect(await list()).toEqual([
      expect.objectContaining({ kind: 'payment_failed', subjectId: subscriptionId, count: 1, resolvedAt: null }),
    ]);
    // A second failure is a new occurrence.
    await deliver(event('invoice.payment_failed', invoice({ subscription: subscriptionId, customer, attempt: 2 })));
    expect((await list())[0]).toMatchObject({
      count: 2,
      message: expect.stringMatching(/payment of 29\.00 USD for the Pro plan failed/),
    });

    // The same deletion delivered twice, concurrently.
    const deleted = event(
      'customer.subscription.deleted',
      subscription({ id: subscriptionId, organizationId: org.id, customer, status: 'canceled' }),
    );
    const answers = await Promise.all([deliver(deleted), deliver(deleted)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(await planOf(admin, org.id)).toBe('free');
    const changes = (await (await getDb()).select().from(auditLog).where(eq(auditLog.organizationId, org.id))).filter(
      (a) => a.operation === 'billing.planChanged',
    );
    expect(changes.map((c) => (c.details as { to: string }).to)).toEqual(['pro', 'free']);
  });

  it('never rolls state back for an older event, and applies equal timestamps in arrival order', async () => {
    const { admin, org } = await ownedOrganization();
    const id = uniqueId('sub');
    const t = now() - 500;
    // Reversed: the update (active) arrives before the creation (incomplete).
    await deliver(
      event('customer.subscription.updated', subscription({ id, organizationId: org.id, status: 'active' }), {
        created: t + 10,
      }),
    );
    await deliver(
      event('customer.subscription.created', subscription({ id, organizationId: org.id, status: 'incomplete' }), {
        created: t,
      }),
    );
    expect(await planOf(admin, org.id)).toBe('pro');
    // Equal created: the later arrival wins.
    await deliver(
      event('customer.subscription.updated', subscription({ id, organizationId: org.id, status: 'past_due' }), {
        created: t + 20,
      }),
    );
    await deliver(
      event(
        'customer.subscription.updated',
        subscription({ id, organizationId: org.id, status: 'active', cancelAtPeriodEnd: true }),
        { created: t + 20 },
      ),
    );
    expect(await billing(admin, org.id)).toMatchObject({
      plan: 'pro',
      status: 'active',
      cancelAtPeriodEnd: true,
      renewsAt: null,
    });
    // The deletion arrives before a stale renewal.
    await deliver(
      event('customer.subscription.deleted', subscription({ id, organizationId: org.id, status: 'canceled' }), {
        created: t + 40,
      }),
    );
    await deliver(
      event('customer.subscription.updated', subscription({ id, organizationId: org.id, status: 'active' }), {
        created: t + 30,
      }),
    );
    expect(await planOf(admin, org.id)).toBe('free');
    const [row] = await (await getDb()).select().from(billingSubscriptions).where(eq(billingSubscriptions.id, id));
    expect(row).toMatchObject({ status: 'canceled', lastEventCreated: t + 40 });
  });

  it('ties a subscription that arrives before its checkout through the customer, in either order', async () => {
    const { admin, org } = await ownedOrganization();
    const id = uniqueId('sub');
    const customer = uniqueId('cus');
    // No metadata: the organization is unknown until checkout.session.completed names the customer.
    const early = event('customer.subscription.created', subscription({ id, customer, status: 'active' }));
    await deliver(early);
    expect(await storedEvent(early.id)).toMatchObject({ outcome: 'unlinked', organizationId: null });
    expect(await planOf(admin, org.id)).toBe('free');
    await deliver(
      event('checkout.session.completed', checkoutCompleted({ organizationId: org.id, customer, subscription: id })),
    );
    expect(await planOf(admin, org.id)).toBe('pro');
    // Later events without metadata find the organization through the recorded customer.
    await deliver(
      event('customer.subscription.updated', subscription({ id, customer, status: 'unpaid' }), { created: now() + 1 }),
    );
    expect(await planOf(admin, org.id)).toBe('free');
  });

  it('a paid checkout whose subscription events are still on their way counts as Pro until they arrive', async () => {
    const { admin, org } = await ownedOrganization();
    const id = uniqueId('sub');
    const customer = uniqueId('cus');
    const t = now() - 100;
    await deliver(
      event('checkout.session.completed', checkoutCompleted({ organizationId: org.id, customer, subscription: id }), {
        created: t,
      }),
    );
    expect(await planOf(admin, org.id)).toBe('pro');
    // Its credit period starts now (Stripe has not told the period yet), with the Pro allowance.
    const state = await billing(admin, org.id);
    expect(state).toMatchObject({ plan: 'pro', status: 'active', creditsPerPeriod: 10000, creditsRemaining: 10000 });
    expect(Date.now() - Date.parse(state.periodStart)).toBeLessThan(60_000);
    const end = new Date(state.periodStart);
    end.setUTCMonth(end.getUTCMonth() + 1);
    expect(state.periodEnd).toBe(end.toISOString());
    // An older creation event (incomplete) does not undo the paid checkout; a later one does apply.
    await deliver(
      event('customer.subscription.created', subscription({ id, customer, status: 'incomplete' }), { created: t - 5 }),
    );
    expect(await planOf(admin, org.id)).toBe('pro');
    await deliver(
      event('customer.subscription.updated', subscription({ id, customer, status: 'canceled' }), { created: t + 5 }),
    );
    expect(await planOf(admin, org.id)).toBe('free');
    // An unpaid session changes nothing.
    const other = await ownedOrganization();
    await deliver(
      event(
        'checkout.session.completed',
        checkoutCompleted({
          organizationId: other.org.id,
          customer: uniqueId('cus'),
          subscription: uniqueId('sub'),
          paymentStatus: 'unpaid',
        }),
      ),
    );
    expect(await planOf(other.admin, other.org.id)).toBe('free');
  });

  it('a subscription created before its checkout, delivered after it, brings the status and period Stripe gave it', async () => {
    const { admin, org } = await ownedOrganization();
    const id = uniqueId('sub');
    const customer = uniqueId('cus');
    const t = now() - 100;
    await deliver(
      event(
        'checkout.session.completed',
        checkoutCompleted({ organizationId: org.id, customer, subscription: id, paymentStatus: 'no_payment_required' }),
        { created: t },
      ),
    );
    const trialEnd = t + 14 * 86400;
    await deliver(
      event(
        'customer.subscription.created',
        subscription({
          id,
          customer,
          organizationId: org.id,
          status: 'trialing',
          periodStart: t - 1,
          periodEnd: trialEnd,
        }),
        { created: t - 1 },
      ),
    );
    expect(await billing(admin, org.id)).toMatchObject({
      plan: 'pro',
      status: 'trialing',
      periodEnd: new Date(trialEnd * 1000).toISOString(),
      renewsAt: new Date(trialEnd * 1000).toISOString(),
    });
    const [row] = await (await getDb()).select().from(billingSubscriptions).where(eq(billingSubscriptions.id, id));
    expect(row).toMatchObject({ priceId: pricePro, lastEventCreated: t });
    // Once Stripe's own state is stored, an older event is stale again.
    await deliver(
      event('customer.subscription.updated', subscription({ id, customer, organizationId: org.id, status: 'active' }), {
        created: t - 1,
      }),
    );
    expect((await billing(admin, org.id)).status).toBe('trialing');
  });

  it('ties follow Stripe: a creation never overrides the same second, and an ended subscription stays ended', async () => {
    const { admin, org } = await ownedOrganization();
    const id = uniqueId('sub');
    const t = now() - 100;
    await deliver(
      event('customer.subscription.updated', subscription({ id, organizationId: org.id, status: 'active' }), {
        created: t,
      }),
    );
    await deliver(
      event('customer.subscription.created', subscription({ id, organizationId: org.id, status: 'incomplete' }), {
        created: t,
      }),
    );
    expect(await billing(admin, org.id)).toMatchObject({ plan: 'pro', status: 'active' });
    await deliver(
      event('customer.subscription.deleted', subscription({ id, organizationId: org.id, status: 'canceled' }), {
        created: t + 20,
      }),
    );
    for (const created of [t + 20, t + 30])
      await deliver(
        event('customer.subscription.updated', subscription({ id, organizationId: org.id, status: 'active' }), {
          created,
        }),
      );
    expect(await billing(admin, org.id)).toMatchObject({ plan: 'free', status: null });
    const [row] = await (await getDb()).select().from(billingSubscriptions).where(eq(billingSubscriptions.id, id));
    expect(row.status).toBe('canceled');
  });

  it('a subscription set to end by cancel_at at or before its period end does not renew', async () => {
    const { admin, org } = await ownedOrganization();
    const id = uniqueId('sub');
    const start = now() - 100;
    const end = start + 30 * 86400;
    await deliver(
      event(
        'customer.subscription.updated',
        subscription({ id, organizationId: org.id, periodStart: start, periodEnd: end, cancelAt: end }),
        { created: start },
      ),
    );
    expect(await billing(admin, org.id)).toMatchObject({ plan: 'pro', cancelAtPeriodEnd: true, renewsAt: null });
    // Ending at a later period's close: this period still renews.
    await deliver(
      event(
        'customer.subscription.updated',
        subscription({ id, organizationId: org.id, periodStart: start, periodEnd: end, cancelAt: end + 60 * 86400 }),
        { created: start + 1 },
      ),
    );
    expect(await billing(admin, org.id)).toMatchObject({
      cancelAtPeriodEnd: false,
      renewsAt: new Date(end * 1000).toISOString(),
    });
  });

  it('a subscription cancelled at its period end gives Pro until that end and no new period after it, before Stripe deletes it', async () => {
    const { admin, org } = await ownedOrganization();
    const renewing = await ownedOrganization();
    const [id, renewingId] = [uniqueId('sub'), uniqueId('sub')];
    const start = now() - 30 * 86400;
    const end = now() + 3;
    for (const [organizationId, subscriptionId, cancelAtPeriodEnd] of [
      [org.id, id, true],
      [renewing.org.id, renewingId, false],
    ] as const)
      await deliver(
        event(
          'customer.subscription.updated',
          subscription({ id: subscriptionId, organizationId, periodStart: start, periodEnd: end, cancelAtPeriodEnd }),
          { created: start },
        ),
      );
    const paid = await billing(admin, org.id);
    expect(paid).toMatchObject({ plan: 'pro', cancelAtPeriodEnd: true, periodEnd: new Date(end * 1000).toISOString() });
    // Nothing sweeps before the end.
    expect(await endLapsedSubscriptions(await getDb())).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, end * 1000 - Date.now()) + 200));

    // Past the end, with no event from Stripe: the state reads Free at once (no invented Pro period),
    // and the minute sweep moves the plan, with an audit entry; a renewing subscription keeps Pro.
    const ended = await billing(admin, org.id);
    expect(ended).toMatchObject({ plan: 'free', status: null, cancelAtPeriodEnd: false });
    // Free's calendar month and allowance, not a month of Pro from the period end.
    expect(ended.periodStart).toMatch(/^\d{4}-\d{2}-01T00:00:00/);
    expect(ended.creditsPerPeriod).toBeLessThan(paid.creditsPerPeriod);
    expect(await endLapsedSubscriptions(await getDb())).toBeGreaterThanOrEqual(1);
    expect(await planOf(admin, org.id)).toBe('free');
    expect(await planOf(renewing.admin, renewing.org.id)).toBe('pro');
    const audit = await (await getDb()).select().from(auditLog).where(eq(auditLog.organizationId, org.id));
    expect(audit.filter((entry) => entry.operation === 'billing.planChanged').at(-1)?.details).toEqual({
      from: 'pro',
      to: 'free',
      reason: 'cancelled_period_ended',
    });
    expect(await billing(renewing.admin, renewing.org.id)).toMatchObject({ plan: 'pro', cancelAtPeriodEnd: false });
    // Stripe's deletion, when it comes, changes nothing more.
    await deliver(
      event(
        'customer.subscription.deleted',
        subscription({ id, organizationId: org.id, periodStart: start, periodEnd: end, status: 'canceled' }),
        { created: end + 1 },
      ),
    );
    expect(await planOf(admin, org.id)).toBe('free');
  });

  it('ignores events naming an organization that does not exist, and other event types', async () => {
    const ghost = event(
      'customer.subscription.created',
      subscription({ id: uniqueId('sub'), organizationId: 'org_doesnotexist', customer: uniqueId('cus') }),
    );
    expect((await deliver(ghost)).status).toBe(200);
    expect(await storedEvent(ghost.id)).toMatchObject({ outcome: 'unlinked' });
    const other = event('charge.refunded', { id: 'ch_1', object: 'charge' });
    expect((await deliver(other)).status).toBe(200);
    expect(await storedEvent(other.id)).toMatchObject({ outcome: 'ignored' });
  });
});

describe('payment warnings', () => {
  it('payment_failed is raised per subscription and resolved by invoice.paid; a failure older than the payment is ignored', async () => {
    const { admin, org } = await ownedOrganization();
    const { subscriptionId, customer } = await upgradeThroughWebhooks(org.id);
    const t = now();
    await deliver(event('invoice.payment_failed', invoice({ subscription: subscriptionId, customer }), { created: t }));
    const open = await admin.call('GET', `/organizations/${org.id}/warnings`);
    expect(open.body.items).toEqual([
      expect.objectContaining({
        kind: 'payment_failed',
        subjectId: subscriptionId,
        count: 1,
        resolvedAt: null,
        details: expect.objectContaining({ subscriptionId, amountDue: 2900, currency: 'usd', attemptCount: 1 }),
      }),
    ]);
    // past_due keeps Pro until the subscription is deleted.
    await deliver(
      event(
        'customer.subscription.updated',
        subscription({ id: subscriptionId, organizationId: org.id, customer, status: 'past_due' }),
        { created: t },
      ),
    );
    expect(await planOf(admin, org.id)).toBe('pro');

    await deliver(event('invoice.paid', invoice({ subscription: subscriptionId, customer }), { created: t + 10 }));
    await deliver(
      event('invoice.payment_failed', invoice({ subscription: subscriptionId, customer }), { created: t + 5 }),
    );
    const after = await admin.call('GET', `/organizations/${org.id}/warnings`, {
      query: 'state=all&kind=payment_failed',
    });
    expect(after.body.items).toEqual([expect.objectContaining({ count: 1, resolvedAt: expect.any(String) })]);
  });

  it('once the subscription is unpaid (the plan is Free), the payment warning asks to get Pro back, not to keep it, in either order', async () => {
    for (const order of ['failure first', 'unpaid first']) {
      const { admin, org } = await ownedOrganization();
      const { subscriptionId, customer } = await upgradeThroughWebhooks(org.id);
      const t = now();
      const failure = () =>
        deliver(event('invoice.payment_failed', invoice({ subscription: subscriptionId, customer }), { created: t }));
      const unpaid = () =>
        deliver(
          event(
            'customer.subscription.updated',
            subscription({ id: subscriptionId, organizationId: org.id, customer, status: 'unpaid' }),
            { created: t + 1 },
          ),
        );
      if (order === 'failure first') {
        await failure();
        const open = (await admin.call('GET', `/organizations/${org.id}/warnings`)).body.items;
        expect(open[0].message).toMatch(/to keep Pro\.$/);
        await unpaid();
      } else {
        await unpaid();
        await failure();
      }
      expect(await planOf(admin, org.id)).toBe('free');
      const [warning] = (await admin.call('GET', `/organizations/${org.id}/warnings`)).body.items;
      expect(warning, order).toMatchObject({ kind: 'payment_failed', resolvedAt: null });
      expect(warning.message, order).toMatch(/is on Free\. .* to get Pro back\.$/);
      expect(warning.message, order).not.toMatch(/keep Pro/);
    }
  });

  it('a payment_failed warning is resolved when its subscription is deleted (no payment can follow)', async () => {
    const { admin, org } = await ownedOrganization();
    const { subscriptionId, customer } = await upgradeThroughWebhooks(org.id);
    const t = now();
    await deliver(event('invoice.payment_failed', invoice({ subscription: subscriptionId, customer }), { created: t }));
    await deliver(
      event(
        'customer.subscription.deleted',
        subscription({ id: subscriptionId, organizationId: org.id, customer, status: 'canceled' }),
        { created: t + 1 },
      ),
    );
    expect(await planOf(admin, org.id)).toBe('free');
    const warnings = await admin.call('GET', `/organizations/${org.id}/warnings`, {
      query: 'state=all&kind=payment_failed',
    });
    expect(warnings.body.items).toEqual([
      expect.objectContaining({ subjectId: subscriptionId, resolvedAt: expect.any(String) }),
    ]);
  });

  it('an invoice event that arrives before anything ties it to an organization is applied once something does', async () => {
    const { admin, org } = await ownedOrganization();
    const id = uniqueId('sub');
    const customer = uniqueId('cus');
    const t = now() - 50;
    const failed = event('invoice.payment_failed', invoice({ subscription: id, customer }), { created: t + 2 });
    await deliver(failed);
    expect(await storedEvent(failed.id)).toMatchObject({
      outcome: 'unlinked',
      subscriptionId: id,
      customerId: customer,
      payload: expect.objectContaining({ object: 'invoice' }),
    });
    await deliver(
      event('customer.subscription.created', subscription({ id, customer, status: 'active' }), { created: t }),
    );
    expect((await admin.call('GET', `/organizations/${org.id}/warnings`)).body.items).toEqual([]);
    await deliver(
      event('checkout.session.completed', checkoutCompleted({ organizationId: org.id, customer, subscription: id }), {
        created: t + 1,
      }),
    );
    expect(await planOf(admin, org.id)).toBe('pro');
    const warnings = await admin.call('GET', `/organizations/${org.id}/warnings`, { query: 'kind=payment_failed' });
    expect(warnings.body.items).toEqual([expect.objectContaining({ subjectId: id, count: 1, resolvedAt: null })]);
    expect(await storedEvent(failed.id)).toMatchObject({ outcome: 'applied', organizationId: org.id, payload: null });
    // A redelivery of that event is still a duplicate.
    await deliver(failed);
    expect(
      (await admin.call('GET', `/organizations/${org.id}/warnings`, { query: 'kind=payment_failed' })).body.items[0]
        .count,
    ).toBe(1);
  });

  it('members of other organizations never see the warning', async () => {
    const team = await newTeam();
    const { subscriptionId, customer } = await upgradeThroughWebhooks(team.org.id);
    await deliver(event('invoice.payment_failed', invoice({ subscription: subscriptionId, customer })));
    const outsider = await newUser();
    expect((await outsider.call('GET', `/organizations/${team.org.id}/warnings`)).status).toBe(404);
    expect((await team.viewer.call('GET', `/organizations/${team.org.id}/warnings`)).body.items).toHaveLength(1);
  });
});

describe('ordering, as a property', () => {
  const statuses = ['incomplete', 'trialing', 'active', 'past_due', 'unpaid', 'canceled'] as const;
  const entitles = (status: string) => ['active', 'trialing', 'past_due'].includes(status);

  it('whatever the arrival order and redeliveries, the state is that of the newest event (the last to arrive among equals), and an ended subscription stays ended', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            status: fc.constantFrom(...statuses),
            offset: fc.integer({ min: 0, max: 4 }),
            redeliver: fc.boolean(),
          }),
          { minLength: 1, maxLength: 6 },
        ),
        async (specs) => {
          const { admin, org } = await ownedOrganization();
          const id = uniqueId('sub');
          const base = now() - 100;
          const events = specs.map((spec) => ({
            spec,
            e: event(
              'customer.subscription.updated',
              subscription({ id, organizationId: org.id, status: spec.status }),
              { created: base + spec.offset },
            ),
          }));
          const arrivals: typeof events = [];
          for (const item of events) {
            arrivals.push(item);
            if (item.spec.redeliver) arrivals.push(item);
          }
          for (const item of arrivals) expect((await deliver(item.e)).status).toBe(200);
          // Expected: among first arrivals, the newest `created` wins, the later arrival among equals,
          // except that nothing follows `canceled` (final in Stripe) but `canceled` itself.
          let winner = events[0];
          for (const item of events.slice(1)) {
            const ended = winner.spec.status === 'canceled' && item.spec.status !== 'canceled';
            if (item.e.created >= winner.e.created && !ended) winner = item;
          }
          const [row] = await (
            await getDb()
          )
            .select()
            .from(billingSubscriptions)
            .where(eq(billingSubscriptions.id, id));
          expect(row.status).toBe(winner.spec.status);
          expect(await planOf(admin, org.id)).toBe(entitles(winner.spec.status) ? 'pro' : 'free');
        },
      ),
      { numRuns: 20 },
    );
  });
});
