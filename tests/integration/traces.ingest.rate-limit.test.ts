import { beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { batch, newIngestion, span, storedSpans } from '../helpers/ingestion';

// Opening (and, on PGlite, migrating) the database can take longer than one test's timeout.
beforeAll(() => getDb().then(() => undefined), 120_000);

// Read when the first batch arrives; each test file runs in its own process.
process.env.INGEST_RATE_LIMIT_PER_SECOND = '2';

describe('trace ingestion rate limit (INGEST_RATE_LIMIT_PER_SECOND=2)', () => {
  it('a key over its rate gets 429 with Retry-After and the batch is not stored; other keys are unaffected', async () => {
    const busy = await newIngestion();
    const quiet = await newIngestion();
    // Six at once: sent one after another, each waits for its write, and on a slow machine (or the
    // embedded PGlite) the bucket refills in between.
    const replies = await Promise.all(Array.from({ length: 6 }, () => busy.send(batch(span()))));
    const accepted = replies.filter((reply) => reply.status === 200);
    const limited = replies.filter((reply) => reply.status !== 200);
    expect(accepted.length).toBeGreaterThanOrEqual(2);
    expect(limited.length).toBeGreaterThanOrEqual(1);
    for (const reply of limited) {
      expect(reply.status).toBe(429);
      expect(reply.body.error.code).toBe('rate_limited');
      expect(reply.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    }
    expect(await storedSpans(busy.organizationId)).toHaveLength(accepted.length);
    expect((await quiet.send(batch(span()))).status).toBe(200);
  });

  it('an invalid batch does not use up the rate', async () => {
    const { send } = await newIngestion();
    for (let i = 0; i < 3; i++) expect((await send(batch(span({ kind: 'nope' })))).status).toBe(400);
    expect((await send(batch(span()))).status).toBe(200);
  });
});
