import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { getDb } from '@/db/client';
import { retrievalSetup, retrieve } from '../helpers/retrieval';

// A tight per-key limit for this file only (config is read once per test file).
vi.hoisted(() => {
  process.env.RETRIEVAL_RATE_LIMIT_PER_SECOND = '5';
});

beforeAll(() => getDb().then(() => undefined), 120_000);
// A test worker may run other files after this one: they must not inherit the tight limit.
afterAll(() => {
  delete process.env.RETRIEVAL_RATE_LIMIT_PER_SECOND;
});

describe('429 per key', () => {
  it('past the burst a key gets 429 rate_limited with Retry-After; another key is unaffected', async () => {
    const s = await retrievalSetup(1);
    const other = await retrievalSetup(1);
    const statuses: number[] = [];
    let limited: Awaited<ReturnType<typeof retrieve>> | undefined;
    for (let i = 0; i < 20; i++) {
      const reply = await retrieve(s.promptId, s.secret);
      statuses.push(reply.status);
      if (reply.status === 429) limited ??= reply;
    }
    expect(statuses.slice(0, 10).every((status) => status === 200)).toBe(true);
    expect(limited).toBeDefined();
    expect(limited!.body.error.code).toBe('rate_limited');
    expect(limited!.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await retrieve(other.promptId, other.secret)).status).toBe(200);
  });
});
