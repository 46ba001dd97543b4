import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inEdgeTransaction } from '../helpers/transaction';
import { getDb } from '@/db/client';
import { auditLog, billingSubscriptions, organizations, traceRetention } from '@/db/schema';
import { newTeam, newUser } from '../helpers/api';
import { setReadOnly } from '../helpers/evals';
import { caller, rejection } from '../helpers/trpc';
import { deleteOrganization } from '@/server/orgs/service';
import {
  deliver,
  event,
  pricePro,
  startFakeStripe,
  subscription,
  upgradeThroughWebhooks,
  useFakeStripe,
  type FakeStripe,
} from '../helpers/stripe';

// Checkout, the customer portal and cancel renewal against a local server speaking Stripe's API:
// roles, configuration, state and confirmation rules, and the plan changing only by webhook.

let fake: FakeStripe;
beforeAll(async () => {
  fake = await startFakeStripe();
  useFakeStripe(fake);
});
afterAll(() => fake.close());

function expectError(result: { status: number; body: any; headers?: Headers }, status: number, code: string) {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.body.error.code).toBe(code);
  expect(result.body.error.details).toEqual(expect.any(Object));
}

const stripeCalls = (path: string) => fake.requests.filter((r) => r.path === path);

// A Pro team whose subscription the fake knows (so cancel renewal is answered).
async function proTeam(periodEnd = Math.floor(Date.now() / 1000) + 20 * 86400 + 17) {
  const team = await newTeam();
  const periodStart = periodEnd - 30 * 86400;
  const upgraded = await upgradeThroughWebhooks(team.org.id, { periodStart, periodEnd });
  fake.subscriptions.set(upgraded.subscriptionId, upgraded.subscription);
  return { ...team, ...upgraded, periodEnd, billing: `/organizations/${team.org.id}/billing` };
}

describe('checkout', () => {
  it('an admin gets a Checkout page for Pro; the plan does not change until Stripe says so', async () => {
    const { org, admin } = await newTeam();
    const before = stripeCalls('/v1/checkout/sessions').length;
    const checkout = await admin.call('POST', `/organizations/${org.id}/billing/checkout`, { body: { plan: 'pro' } });
    expect(checkout.status, JSON.stringify(checkout.body)).toBe(201);
    expect(checkout.body).toEqual({ url: expect.stringMatching(new RegExp(`^${fake.baseUrl}/checkout/cs_test_`)) });
    const calls = stripeCalls('/v1/checkout/sessions');
    expect(calls).toHaveLength(before + 1);
    expect(calls.at(-1)!.form).toMatchObject({
      mode: 'subscription',
      client_reference_id: org.id,
      'subscription_data[metadata][organizationId]': org.id,
      'metadata[organizationId]': org.id,
      'line_items[0][price]': pricePro,
      'line_items[0][quantity]': '1',
      customer_email: admin.email,
      success_url: `http://localhost:3999/organizations/${org.id}/billing?checkout=success`,
      cancel_url: `http://localhost:3999/organizations/${org.id}/billing?checkout=cancelled`,
    });
    expect(calls.at(-1)!.headers.authorization).toBe('Bearer sk_test_promptloop');
    expect((await admin.call('GET', `/organizations/${org.id}`)).body.plan).toBe('free');
    const audit = await (await getDb()).select().from(auditLog).where(eq(auditLog.organizationId, org.id));
    expect(audit.find((a) => a.operation === 'billing.checkout')).toMatchObject({ userId: admin.id });
  });

  it('is admin only, strict about its body, and refused on Pro and on a read-only organization', async () => {
    const { org, admin, editor, viewer } = await newTeam();
    const path = `/organizations/${org.id}/billing/checkout`;
    const before = stripeCalls('/v1/checkout/sessions').length;
    expectError(await editor.call('POST', path, { body: { plan: 'pro' } }), 403, 'admin_required');
    expectError(await viewer.call('POST', path, { body: { plan: 'pro' } }), 403, 'admin_required');
    expectError(await (await newUser()).call('POST', path, { body: { plan: 'pro' } }), 404, 'not_found');
    for (const body of [{}, { plan: 'enterprise' }, { plan: 'pro', coupon: 'FREE' }, { plan: 'pro\u0000' }]) {
      expectError(await admin.call('POST', path, { body }), 400, 'invalid_request');
    }
    await setReadOnly(org.id, true);
    expectError(await admin.call('POST', path, { body: { plan: 'pro' } }), 403, 'read_only');
    await setReadOnly(org.id, false);
    expect(stripeCalls('/v1/checkout/sessions')).toHaveLength(before);

    await upgradeThroughWebhooks(org.id);
    const again = await admin.call('POST', path, { body: { plan: 'pro' } });
    expectError(again, 409, 'invalid_state');
    expect(again.body.error.details.state).toBe('pro');
  });

  it('answers 503 with Retry-After when Stripe fails, and a replayed Idempotency-Key reaches Stripe once', async () => {
    const { org, admin } = await newTeam();
    const path = `/organizations/${org.id}/billing/checkout`;
    fake.failNext({ status: 500 }, { status: 500 });
    const failed = await admin.call('POST', path, { body: { plan: 'pro' } });
    expectError(failed, 503, 'unavailable');
    expect(failed.body.error.details.reason).toBe('payment_provider_unavailable');
    expect(failed.headers.get('retry-after')).toBeTruthy();
    fake.failNext({ status: 400, type: 'invalid_request_error', message: 'No such price' });
    const refused = await admin.call('POST', path, { body: { plan: 'pro' } });
    expectError(refused, 503, 'unavailable');
    expect(refused.body.error.details.reason).toBe('payment_provider_error');

    const before = stripeCalls('/v1/checkout/sessions').length;
    const headers = { 'idempotency-key': `checkout-${org.id}` };
    const first = await admin.call('POST', path, { body: { plan: 'pro' }, headers });
    const replay = await admin.call('POST', path, { body: { plan: 'pro' }, headers });
    expect(first.status).toBe(201);
    expect(replay.status).toBe(201);
    expect(replay.body).toEqual(first.body);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(stripeCalls('/v1/checkout/sessions')).toHaveLength(before + 1);
  });

  it('reuses the customer recorded at the first checkout', async () => {
    const team = await proTeam();
    await deliver(
      event(
        'customer.subscription.deleted',
        subscription({
          id: team.subscriptionId,
          organizationId: team.org.id,
          customer: team.customer,
          status: 'canceled',
        }),
      ),
    );
    const checkout = await team.admin.call('POST', `${team.billing}/checkout`, { body: { plan: 'pro' } });
    expect(checkout.status).toBe(201);
    const form = stripeCalls('/v1/checkout/sessions').at(-1)!.form;
    expect(form.customer).toBe(team.customer);
    expect(form.customer_email).toBeUndefined();
  });
});

describe('checkout after Stripe lost the customer', () => {
  it('starts afresh with the email when the recorded customer no longer exists in Stripe', async () => {
    const team = await proTeam();
    await deliver(
      event(
        'customer.subscription.deleted',
        subscription({ id: team.subscriptionId, organizationId: team.org.id, customer: team.customer }),
      ),
    );
    const before = stripeCalls('/v1/checkout/sessions').length;
    fake.failNext({
      status: 400,
      type: 'invalid_request_error',
      code: 'resource_missing',
      message: `No such customer: '${team.customer}'`,
    });
    const checkout = await team.admin.call('POST', `${team.billing}/checkout`, { body: { plan: 'pro' } });
    expect(checkout.status, JSON.stringify(checkout.body)).toBe(201);
    const calls = stripeCalls('/v1/checkout/sessions').slice(before);
    expect(calls.map((c) => [c.form.customer, c.form.customer_email])).toEqual([
      [team.customer, undefined],
      [undefined, team.admin.email],
    ]);
    // Any other refusal is not retried.
    fake.failNext({ status: 400, type: 'invalid_request_error', code: 'parameter_invalid', message: 'No.' });
    expectError(
      await team.admin.call('POST', `${team.billing}/checkout`, { body: { plan: 'pro' } }),
      503,
      'unavailable',
    );
    expect(stripeCalls('/v1/checkout/sessions').slice(before)).toHaveLength(3);
  });
});

describe('customer portal', () => {
  it('opens for admins once a customer exists', async () => {
    const { org, admin, editor } = await newTeam();
    const path = `/organizations/${org.id}/billing/portal`;
    const none = await admin.call('POST', path);
    expectError(none, 409, 'invalid_state');
    expect(none.body.error.details.state).toBe('no_customer');
    const { customer } = await upgradeThroughWebhooks(org.id);
    expectError(await editor.call('POST', path), 403, 'admin_required');
    const portal = await admin.call('POST', path);
    expect(portal.status).toBe(201);
    expect(portal.body.url).toMatch(new RegExp(`^${fake.baseUrl}/portal/bps_test_`));
    expect(stripeCalls('/v1/billing_portal/sessions').at(-1)!.form).toEqual({
      customer,
      return_url: `http://localhost:3999/organizations/${org.id}/billing`,
    });
  });
});

describe('cancel renewal', () => {
  it('needs the exact organization name and the period end; keeps Pro until the period ends', async () => {
    const team = await proTeam();
    const path = `${team.billing}/cancel-renewal`;
    const periodEnd = new Date(team.periodEnd * 1000).toISOString();
    const before = stripeCalls(`/v1/subscriptions/${team.subscriptionId}`).length;

    const wrongName = await team.editor.call('POST', path, {
      body: { organizationName: team.org.name.toUpperCase(), periodEnd },
    });
    expectError(wrongName, 422, 'confirmation_mismatch');
    expect(wrongName.body.error.details).toEqual({ mismatched: ['organizationName'], periodEnd });
    const wrongDate = await team.editor.call('POST', path, {
      body: { organizationName: team.org.name, periodEnd: new Date((team.periodEnd + 86400) * 1000).toISOString() },
    });
    expectError(wrongDate, 422, 'confirmation_mismatch');
    expect(wrongDate.body.error.details.mismatched).toEqual(['periodEnd']);
    const offBySecond = await team.editor.call('POST', path, {
      body: { organizationName: team.org.name, periodEnd: new Date((team.periodEnd + 1) * 1000).toISOString() },
    });
    expectError(offBySecond, 422, 'confirmation_mismatch');
    expectError(
      await team.viewer.call('POST', path, { body: { organizationName: team.org.name, periodEnd } }),
      403,
      'forbidden',
    );
    for (const body of [
      { organizationName: team.org.name },
      { organizationName: team.org.name, periodEnd: 'soon' },
      { organizationName: '', periodEnd },
      { organizationName: team.org.name, periodEnd, now: true },
    ]) {
      expectError(await team.editor.call('POST', path, { body }), 400, 'invalid_request');
    }
    expect(stripeCalls(`/v1/subscriptions/${team.subscriptionId}`)).toHaveLength(before);

    // The same instant written with milliseconds and another offset still confirms (to the second).
    const sameInstant = new Date(team.periodEnd * 1000 + 400).toISOString().replace('Z', '+00:00');
    const cancelled = await team.editor.call('POST', path, {
      body: { organizationName: team.org.name, periodEnd: sameInstant },
    });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body).toMatchObject({
      plan: 'pro',
      status: 'active',
      cancelAtPeriodEnd: true,
      renewsAt: null,
      periodEnd,
      creditsRemaining: expect.any(Number),
    });
    const calls = stripeCalls(`/v1/subscriptions/${team.subscriptionId}`);
    expect(calls).toHaveLength(before + 1);
    expect(calls.at(-1)).toMatchObject({ method: 'POST', form: { cancel_at_period_end: 'true' } });

    // Asking again answers the same state without another call; the webhook later confirms it.
    const again = await team.admin.call('POST', path, {
      body: { organizationName: team.org.name, periodEnd: periodEnd.slice(0, 10) },
    });
    expect(again.status).toBe(200);
    expect(again.body.cancelAtPeriodEnd).toBe(true);
    expect(stripeCalls(`/v1/subscriptions/${team.subscriptionId}`)).toHaveLength(before + 1);
    await deliver(
      event(
        'customer.subscription.updated',
        subscription({
          ...team.subscription,
          id: team.subscriptionId,
          organizationId: team.org.id,
          customer: team.customer,
          cancelAtPeriodEnd: true,
          periodEnd: team.periodEnd,
          periodStart: team.periodEnd - 30 * 86400,
        }),
      ),
    );
    expect((await team.viewer.call('GET', team.billing)).body).toMatchObject({ plan: 'pro', cancelAtPeriodEnd: true });

    // At the period end Stripe deletes the subscription: Free from then on.
    await deliver(
      event(
        'customer.subscription.deleted',
        subscription({
          id: team.subscriptionId,
          organizationId: team.org.id,
          customer: team.customer,
          status: 'canceled',
        }),
      ),
    );
    expect((await team.viewer.call('GET', team.billing)).body).toMatchObject({
      plan: 'free',
      status: null,
      cancelAtPeriodEnd: false,
      creditsPerPeriod: 200,
    });
  });

  it('an event Stripe created before the cancellation, delivered after it, does not undo it', async () => {
    const team = await proTeam();
    const db = await getDb();
    const now = Math.floor(Date.now() / 1000);
    // The subscription's last event is a minute old; Stripe then sends one (renewing) just before the cancel.
    await db
      .update(billingSubscriptions)
      .set({ lastEventCreated: now - 60 })
      .where(eq(billingSubscriptions.id, team.subscriptionId));
    const stale = event(
      'customer.subscription.updated',
      { ...team.subscription, cancel_at_period_end: false },
      { created: now - 3 },
    );
    const cancelled = await team.admin.call('POST', `${team.billing}/cancel-renewal`, {
      body: { organizationName: team.org.name, periodEnd: new Date(team.periodEnd * 1000).toISOString() },
    });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect((await deliver(stale)).status).toBe(200);
    const state = await team.admin.call('GET', team.billing);
    expect(state.body).toMatchObject({ cancelAtPeriodEnd: true, renewsAt: null, plan: 'pro' });
  });

  it('accepts the UTC date of the period end', async () => {
    const team = await proTeam();
    const date = new Date(team.periodEnd * 1000).toISOString().slice(0, 10);
    const cancelled = await team.admin.call('POST', `${team.billing}/cancel-renewal`, {
      body: { organizationName: team.org.name, periodEnd: date },
    });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body.cancelAtPeriodEnd).toBe(true);
    const [row] = await (
      await getDb()
    )
      .select()
      .from(billingSubscriptions)
      .where(eq(billingSubscriptions.id, team.subscriptionId));
    expect(row.cancelAtPeriodEnd).toBe(true);
  });

  it('is 409 without a subscription, and 503 when Stripe cannot be reached (nothing changes)', async () => {
    const { org, admin } = await newTeam();
    const free = await admin.call('POST', `/organizations/${org.id}/billing/cancel-renewal`, {
      body: { organizationName: org.name, periodEnd: '2030-01-01' },
    });
    expectError(free, 409, 'invalid_state');
    expect(free.body.error.details.state).toBe('no_subscription');

    const team = await proTeam();
    fake.failNext({ status: 503 }, { status: 503 });
    const failed = await team.admin.call('POST', `${team.billing}/cancel-renewal`, {
      body: { organizationName: team.org.name, periodEnd: new Date(team.periodEnd * 1000).toISOString() },
    });
    expectError(failed, 503, 'unavailable');
    expect((await team.admin.call('GET', team.billing)).body.cancelAtPeriodEnd).toBe(false);
  });

  it('is 503 and records nothing when Stripe answers that the subscription still renews', async () => {
    const team = await proTeam();
    fake.failNext({ status: 200, body: team.subscription });
    const refused = await team.admin.call('POST', `${team.billing}/cancel-renewal`, {
      body: { organizationName: team.org.name, periodEnd: new Date(team.periodEnd * 1000).toISOString() },
    });
    expectError(refused, 503, 'unavailable');
    expect(refused.body.error.details.reason).toBe('payment_provider_error');
    expect((await team.admin.call('GET', team.billing)).body).toMatchObject({ cancelAtPeriodEnd: false });
    const audit = await (await getDb()).select().from(auditLog).where(eq(auditLog.organizationId, team.org.id));
    expect(audit.filter((a) => a.operation === 'billing.cancelRenewal')).toEqual([]);
  });
});

describe('billing state', () => {
  it('any member reads it; outsiders get 404', async () => {
    const { org, viewer } = await newTeam();
    expect((await viewer.call('GET', `/organizations/${org.id}/billing`)).body.plan).toBe('free');
    expectError(await (await newUser()).call('GET', `/organizations/${org.id}/billing`), 404, 'not_found');
    expectError(await viewer.call('GET', `/organizations/${org.id}/billing`, { query: 'x=1' }), 400, 'invalid_request');
  });

  it('shows the trace retention in force (what ingestion applies), not this process’s own setting', async () => {
    const { org, viewer } = await newTeam();
    const db = await getDb();
    const [before] = await db.select().from(traceRetention).where(eq(traceRetention.plan, 'free'));
    // As if another process had started last with TRACE_RETENTION_DAYS_FREE=11.
    await db.update(traceRetention).set({ days: 11 }).where(eq(traceRetention.plan, 'free'));
    try {
      expect((await viewer.call('GET', `/organizations/${org.id}/billing`)).body.traceRetentionDays).toBe(11);
    } finally {
      await db.update(traceRetention).set({ days: before.days }).where(eq(traceRetention.plan, 'free'));
    }
    expect((await viewer.call('GET', `/organizations/${org.id}/billing`)).body.traceRetentionDays).toBe(before.days);
  });

  it('a client cannot claim a plan: the organization update has no plan field', async () => {
    const { org, admin } = await newTeam();
    expectError(
      await admin.call('PATCH', `/organizations/${org.id}`, { body: { name: 'x', plan: 'pro' } }),
      400,
      'invalid_request',
    );
    const [row] = await (await getDb()).select().from(organizations).where(eq(organizations.id, org.id));
    expect(row.plan).toBe('free');
  });

  it('the dashboard reads and writes billing through the same services', async () => {
    const team = await proTeam();
    const admin = await caller(team.admin.id);
    expect(await admin.billing.state({ organizationId: team.org.id })).toMatchObject({ plan: 'pro' });
    const viewer = await caller(team.viewer.id);
    expect((await rejection(viewer.billing.checkout({ organizationId: team.org.id, plan: 'pro' }))).cause.code).toBe(
      'admin_required',
    );
    const mismatch = await rejection(
      admin.billing.cancelRenewal({ organizationId: team.org.id, organizationName: 'nope', periodEnd: '2030-01-01' }),
    );
    expect(mismatch.cause).toMatchObject({
      code: 'confirmation_mismatch',
      details: { mismatched: ['organizationName', 'periodEnd'] },
    });
  });
});

describe('deleting a Pro organization', () => {
  it('is refused while its subscription renews, and allowed once renewal is cancelled', async () => {
    const team = await proTeam();
    const link = await team.admin.call('POST', `/organizations/${team.org.id}/deletion-link`);
    const token = new URL(link.body.url).searchParams.get('token')!;
    const ctx = { db: await getDb(), actor: { userId: team.admin.id, clientId: 'dashboard', human: true } };
    await expect(
      inEdgeTransaction(ctx, (tx) => deleteOrganization(tx, team.org.id, { token, confirmName: team.org.name })),
    ).rejects.toMatchObject({
      code: 'invalid_state',
      details: { state: 'subscription_renews', subscriptionId: team.subscriptionId },
    });
    expect((await team.admin.call('GET', `/organizations/${team.org.id}`)).status).toBe(200);

    const periodEnd = new Date(team.periodEnd * 1000).toISOString();
    expect(
      (
        await team.admin.call('POST', `${team.billing}/cancel-renewal`, {
          body: { organizationName: team.org.name, periodEnd },
        })
      ).status,
    ).toBe(200);
    await inEdgeTransaction(ctx, (tx) => deleteOrganization(tx, team.org.id, { token, confirmName: team.org.name }));
    expect((await team.admin.call('GET', `/organizations/${team.org.id}`)).status).toBe(404);
    expect(
      await (await getDb()).select().from(billingSubscriptions).where(eq(billingSubscriptions.id, team.subscriptionId)),
    ).toEqual([]);
    // Stripe's later events about it are acknowledged and change nothing.
    const late = await deliver(
      event(
        'customer.subscription.deleted',
        subscription({
          id: team.subscriptionId,
          organizationId: team.org.id,
          customer: team.customer,
          status: 'canceled',
        }),
      ),
    );
    expect(late.status).toBe(200);
  });
});
