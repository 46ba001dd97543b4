import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTeam } from '../helpers/api';
import { startFakeStripe, useFakeStripe, type FakeStripe } from '../helpers/stripe';

// STRIPE_API_BASE with a path (a proxy in front of Stripe): every request goes under it.

let fake: FakeStripe;
beforeAll(async () => {
  fake = await startFakeStripe();
  useFakeStripe(fake, { STRIPE_API_BASE: `${fake.baseUrl}/stripe-proxy/` });
});
afterAll(() => fake.close());

describe('STRIPE_API_BASE', () => {
  it('keeps the path of the base in front of each Stripe request', async () => {
    const { org, admin } = await newTeam();
    const checkout = await admin.call('POST', `/organizations/${org.id}/billing/checkout`, { body: { plan: 'pro' } });
    expect(checkout.status, JSON.stringify(checkout.body)).toBe(201);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]).toMatchObject({
      method: 'POST',
      path: '/v1/checkout/sessions',
      rawPath: '/stripe-proxy/v1/checkout/sessions',
    });
  });
});
