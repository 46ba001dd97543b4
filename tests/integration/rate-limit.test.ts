import { afterAll, describe, expect, it } from 'vitest';
import { newUser } from '../helpers/api';

// This file runs in its own worker with a tiny limit, set before configuration is first read.
process.env.MANAGEMENT_RATE_LIMIT_PER_MINUTE = '5';
afterAll(() => {
  delete process.env.MANAGEMENT_RATE_LIMIT_PER_MINUTE;
});

describe('management API rate limit', () => {
  it('answers 429 rate_limited with Retry-After per user, and records nothing', async () => {
    const user = await newUser(); // one request
    const statuses: number[] = [];
    let limited: any;
    for (let i = 0; i < 6; i++) {
      const result = await user.call('POST', '/organizations', {
        body: { name: `R${i}` },
        headers: { 'idempotency-key': `rate-limit-key-${i}` },
      });
      statuses.push(result.status);
      if (result.status === 429) limited = result;
    }
    expect(statuses.slice(0, 4)).toEqual([201, 201, 201, 201]);
    expect(statuses.slice(4)).toEqual([429, 429]);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Another user is not affected.
    const other = await newUser();
    expect((await other.call('GET', '/organizations')).status).toBe(200);
  });
});
