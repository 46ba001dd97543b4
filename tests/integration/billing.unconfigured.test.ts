import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTeam } from '../helpers/api';
import { deliver, event, startFakeStripe, subscription, uniqueId, type FakeStripe } from '../helpers/stripe';

// A server without Stripe settings (no STRIPE_* variables in this file's process): billing reads
// work on Free, and everything that needs Stripe answers 503 billing_not_configured.

let fake: FakeStripe;
beforeAll(async () => {
  fake = await startFakeStripe();
});
afterAll(() => fake.close());

function expectNotConfigured(result: { status: number; body: any; headers: Headers }) {
  expect(result.status, JSON.stringify(result.body)).toBe(503);
  expect(result.body.error).toMatchObject({ code: 'unavailable', details: { reason: 'billing_not_configured' } });
  expect(result.headers.get('retry-after')).toBeTruthy();
}

describe('billing without Stripe settings', () => {
  it('checkout, the portal and cancel renewal answer 503 billing_not_configured; the state reads', async () => {
    const { org, admin, editor, viewer } = await newTeam();
    const base = `/organizations/${org.id}/billing`;
    expectNotConfigured(await admin.call('POST', `${base}/checkout`, { body: { plan: 'pro' } }));
    expectNotConfigured(await admin.call('POST', `${base}/portal`));
    expectNotConfigured(
      await editor.call('POST', `${base}/cancel-renewal`, {
        body: { organizationName: org.name, periodEnd: '2030-01-01' },
      }),
    );
    // Role checks still come first.
    expect((await editor.call('POST', `${base}/checkout`, { body: { plan: 'pro' } })).body.error.code).toBe(
      'admin_required',
    );
    expect(
      (
        await viewer.call('POST', `${base}/cancel-renewal`, {
          body: { organizationName: org.name, periodEnd: '2030-01-01' },
        })
      ).body.error.code,
    ).toBe('forbidden');
    expect((await viewer.call('GET', base)).body).toMatchObject({
      plan: 'free',
      creditsPerPeriod: 200,
      creditsRemaining: 200,
    });
    expect(fake.requests).toEqual([]);
  });

  it('refuses webhooks it cannot verify with 503, storing nothing', async () => {
    const { org, admin } = await newTeam();
    const delivered = await deliver(
      event('customer.subscription.created', subscription({ id: uniqueId('sub'), organizationId: org.id })),
    );
    expect(delivered.status).toBe(503);
    expect(delivered.body.error.details.reason).toBe('billing_not_configured');
    expect((await admin.call('GET', `/organizations/${org.id}`)).body.plan).toBe('free');
  });
});
