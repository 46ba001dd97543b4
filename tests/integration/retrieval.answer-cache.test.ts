import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { getDatabase, getDb, rowsOf, type Database } from '@/db/client';
import { preparedValues } from '@/db/prepared';
import { AnswerCache, answerCache, waitForRetrievalCaches } from '@/server/retrieval/answer-cache';
import { subjectBucket } from '@/server/retrieval/query';
import { selectorKey } from '@/server/retrieval/body-cache';
import { retrievalSecretDigest } from '@/server/auth/retrieval-key';
import { isolatedDatabase } from '../helpers/evals-engine';
import { waitFor } from '../helpers/webhook-delivery';
import { retrievalSetup, retrieve } from '../helpers/retrieval';
import { expectedFor, splitLabel } from '../helpers/splits';

// Retrieval answers kept in memory until a change (server/retrieval/answer-cache.ts): what is kept,
// when it is dropped, and how a write waits for every retrieval process. The freshness of
// retrieval under concurrent label moves and revocations, in this process and in another one, is
// proven by retrieval.race.test.ts and retrieval.splits.race.test.ts (the cache is on there too).

vi.hoisted(() => {
  process.env.RETRIEVAL_RATE_LIMIT_PER_SECOND = '0';
  // Short leases: the tests below wait for them to run out.
  process.env.RETRIEVAL_CACHE_LEASE_MS = '400';
});

// A database of its own: the rows of processes that never ack, put there below, would make the
// writes of test files running beside this one wait too.
let dropDatabase: () => Promise<void> = async () => {};
beforeAll(async () => {
  dropDatabase = await isolatedDatabase();
  await getDb();
}, 120_000);
afterAll(() => dropDatabase());

async function one<T>(query: ReturnType<typeof sql>): Promise<T> {
  const db = await getDb();
  return rowsOf<T>(await db.execute(query))[0];
}

// Retrieves until the answer for the production label is kept (a process's first requests go before its first lease).
async function warm(promptId: string, secret: string, cache: AnswerCache<unknown>) {
  const kept = `${retrievalSecretDigest(secret)}\u0000${selectorKey(promptId, 'production')}`;
  await waitFor(
    'a kept answer',
    async () => {
      expect((await retrieve(promptId, secret)).status).toBe(200);
      return cache.get(kept) !== undefined;
    },
    5000,
  );
}

describe('the bucket of a subject', () => {
  it('is computed in the process exactly as the database computes it (any header octets)', async () => {
    const database = await getDatabase();
    const statement = `select ((('x' || substr(md5($1::text || $2::text), 1, 8))::bit(32)::int4 & 2147483647) % 100)`;
    await fc.assert(
      fc.asyncProperty(
        fc.uuid(),
        fc.string({
          unit: fc.integer({ min: 0x09, max: 0xff }).map((c) => String.fromCharCode(c)),
          minLength: 1,
          maxLength: 200,
        }),
        async (id, subject) => {
          const splitId = `spl_${id}`;
          const [[bucket]] = await preparedValues(database.db, statement, [splitId, subject]);
          expect(subjectBucket(splitId, subject)).toBe(Number(bucket));
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe.skipIf(!process.env.DATABASE_URL)('answers kept until a change (Postgres)', () => {
  let database: Database;
  let cache: AnswerCache<unknown>;
  beforeAll(async () => {
    database = await getDatabase();
    cache = answerCache<unknown>(database)!;
    expect(cache).not.toBeNull();
  });
  afterEach(async () => {
    const db = await getDb();
    await db.execute(sql`delete from retrieval_caches where id <> ${cache.id}`);
  });

  it('a repeated retrieval is answered from memory: a key revoked behind the service (plain SQL) still answers until a change is announced', async () => {
    const s = await retrievalSetup(1);
    await warm(s.promptId, s.secret, cache);
    const db = await getDb();
    await db.execute(sql`update retrieval_keys set revoked_at = now() where id = ${s.keyId}`);
    // No statement read the key again: the kept answer.
    expect((await retrieve(s.promptId, s.secret)).status).toBe(200);
    await waitForRetrievalCaches(database);
    expect(cache.size).toBe(0);
    expect((await retrieve(s.promptId, s.secret)).status).toBe(401);
  });

  it('a change whose notification was missed is picked up by the next lease renewal', async () => {
    const s = await retrievalSetup(1);
    await warm(s.promptId, s.secret, cache);
    const db = await getDb();
    await db.execute(sql`update retrieval_keys set revoked_at = now() where id = ${s.keyId}`);
    // The sequence moves, but nothing is sent on the channel.
    const { change } = await one<{ change: string }>(sql`select nextval('retrieval_changes')::text as change`);
    await waitFor(
      'the renewal to ack the change',
      async () => {
        const row = await one<{ acked: string }>(sql`select acked::text from retrieval_caches where id = ${cache.id}`);
        return BigInt(row.acked) >= BigInt(change);
      },
      5000,
    );
    expect((await retrieve(s.promptId, s.secret)).status).toBe(401);
  });

  it('a lookup that started before a change never refills what the change dropped', async () => {
    await waitFor('a lease', () => cache.token() >= 0, 5000);
    const before = cache.token();
    await waitForRetrievalCaches(database);
    cache.keep(
      before,
      'read-before',
      () => 'stale',
      () => 1,
    );
    expect(cache.get('read-before')).toBeUndefined();
    cache.keep(
      cache.token(),
      'read-after',
      () => 'fresh',
      () => 1,
    );
    expect(cache.get('read-after')).toBe('fresh');
    await waitForRetrievalCaches(database);
    expect(cache.get('read-after')).toBeUndefined();
  });

  it('label moves through the API drop what was kept: the next request sees the new version', async () => {
    const s = await retrievalSetup(3);
    await warm(s.promptId, s.secret, cache);
    for (const target of [2, 3, 1]) {
      const moved = await s.owner.call('PUT', `${s.base}/labels/production`, {
        body: { versionId: s.ids[target - 1] },
      });
      expect(moved.status).toBe(200);
      expect((await retrieve(s.promptId, s.secret)).body.version).toBe(target);
      expect((await retrieve(s.promptId, s.secret)).body.version).toBe(target);
    }
  });

  it('a split label kept per range: every subject gets the version the hash gives, from memory as from the database', async () => {
    const s = await retrievalSetup(2);
    const split = [
      { versionId: s.ids[0], weight: 30 },
      { versionId: s.ids[1], weight: 70 },
    ];
    const splitId = await splitLabel(s.owner, s.base, split);
    for (let round = 0; round < 3; round++)
      for (let i = 0; i < 40; i++) {
        const subject = `user-${i}`;
        const reply = await retrieve(s.promptId, s.secret, { headers: { 'promptloop-subject': subject } });
        expect(reply.status).toBe(200);
        expect(reply.body.versionId).toBe(expectedFor(splitId, split, subject).versionId);
        expect(reply.body.split).toEqual({ id: splitId, weight: expectedFor(splitId, split, subject).weight });
      }
    // Without a subject, both versions come from memory at random.
    const seen = new Set<string>();
    for (let i = 0; i < 60; i++) seen.add((await retrieve(s.promptId, s.secret)).body.versionId);
    expect(seen).toEqual(new Set(s.ids));
  });

  it('a process that stopped renewing is waited for until its lease runs out, then the write answers', async () => {
    const s = await retrievalSetup(2);
    const db = await getDb();
    await db.execute(
      sql`insert into retrieval_caches (id, lease_until, acked) values ('gone', now() + interval '600 milliseconds', 0)`,
    );
    const moved = await s.owner.call('PUT', `${s.base}/labels/production`, { body: { versionId: s.ids[1] } });
    expect(moved.status).toBe(200);
    const gone = await one<{ passed: boolean }>(
      sql`select lease_until <= now() as passed from retrieval_caches where id = 'gone'`,
    );
    expect(gone.passed).toBe(true);
  });

  it('a process that renews but never acks: 503 retrieval_cache_behind, committed; the same Idempotency-Key replays once it has', async () => {
    const s = await retrievalSetup(2);
    const db = await getDb();
    await db.execute(
      sql`insert into retrieval_caches (id, lease_until, acked) values ('stuck', now() + interval '1 hour', 0)`,
    );
    const move = { body: { versionId: s.ids[1] }, headers: { 'idempotency-key': `cache-${randomUUID()}` } };
    const first = await s.owner.call('PUT', `${s.base}/labels/production`, move);
    expect(first.status).toBe(503);
    expect(first.body.error).toMatchObject({ code: 'unavailable', details: { reason: 'retrieval_cache_behind' } });
    expect(first.headers.get('retry-after')).toBe('1');
    // Committed, and this process (which did ack) already serves it.
    const labels = await s.owner.call('GET', `${s.base}/labels`);
    expect(labels.body.items.find((l: { label: string }) => l.label === 'production').versionId).toBe(s.ids[1]);
    expect((await retrieve(s.promptId, s.secret)).body.version).toBe(2);
    // Still behind: the replay waits and answers 503 again.
    expect((await s.owner.call('PUT', `${s.base}/labels/production`, move)).status).toBe(503);
    await db.execute(sql`update retrieval_caches set acked = 9007199254740991 where id = 'stuck'`);
    const replayed = await s.owner.call('PUT', `${s.base}/labels/production`, move);
    expect(replayed.status).toBe(200);
    expect(replayed.headers.get('idempotency-replayed')).toBe('true');
  });

  it('a process that stops leaves retrieval_caches at once (writers stop waiting for it)', async () => {
    const other = new AnswerCache<unknown>(database, 400);
    other.start();
    await waitFor(
      'the second cache to register',
      async () => {
        const row = await one<{ n: number }>(
          sql`select count(*)::int as n from retrieval_caches where id = ${other.id}`,
        );
        return row.n === 1;
      },
      5000,
    );
    await other.stop();
    const row = await one<{ n: number }>(sql`select count(*)::int as n from retrieval_caches where id = ${other.id}`);
    expect(row.n).toBe(0);
  });
});
