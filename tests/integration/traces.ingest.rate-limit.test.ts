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
    expect((await busy.send(batch(span()))).status).toBe(200);
    expect((await busy.send(batch(span()))).status).toBe(200);
    const limited = await busy.send(batch(span()));
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(limited.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(await storedSpans(busy.organizationId)).toHaveLength(2);
    expect((await quiet.send(batch(span()))).status).toBe(200);
  });

  it('an invalid batch does not use up the rate', async () => {
    const { send } = await newIngestion();
    for (let i = 0; i < 3; i++) expect((await send(batch(span({ kind: 'nope' })))).status).toBe(400);
    expect((await send(batch(span()))).status).toBe(200);
  });
});
