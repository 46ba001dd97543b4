import { describe, expect, it } from 'vitest';
import { canSellPro } from '@/server/config';
import { usageExhausted } from '@/server/evals/eligibility';

// usage_exhausted names the way out only where there is one: a server without Stripe cannot sell Pro,
// so a Free organization is told when its credits renew, not to upgrade.
describe('usage_exhausted without Stripe', () => {
  it('says when credits renew and never suggests an upgrade', () => {
    expect(process.env.STRIPE_SECRET_KEY).toBeUndefined();
    expect(canSellPro()).toBe(false);
    const periodEnd = new Date('2026-12-01T00:00:00.000Z');
    const periodStart = new Date('2026-11-01T00:00:00.000Z');
    const error = usageExhausted('free', { periodStart, periodEnd, allowance: 200, used: 200, remaining: 0 });
    expect(error.code).toBe('usage_exhausted');
    expect(error.message).toBe('No evaluation credits are left in this billing period (they renew on 2026-12-01).');
  });
});
