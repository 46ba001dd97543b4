import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { migrate, openDatabase, setDatabase, type Database } from '@/db/client';
import { preparedValues } from '@/db/prepared';
import { config } from '@/server/config';
import { lookupRetrieval } from '@/server/retrieval/query';
import { retrievalSecretDigest } from '@/server/auth/retrieval-key';
import { checkRetrievalStandby, waitForRetrievalStandby } from '@/server/standby';
import { startRetrievalEntry } from '../helpers/retrieval-entry';
import { retrievalSetup } from '../helpers/retrieval';
import { postgresBinaries, startStandbyPair, type StandbyPair } from '../helpers/standby';
import { splitLabel } from '../helpers/splits';
import { caller, rejection } from '../helpers/trpc';

// RETRIEVAL_DATABASE_URL (docs/deploy.md): retrieval reads a real streaming hot standby, made here
// with pg_basebackup from a primary of this file's own (tests/helpers/standby.ts). Every write
// that changes what retrieval returns answers only once the standby has applied it, so under
// concurrent retrieval — in this process and in a `--role=retrieval` process reading the standby —
// no request started after the answer sees the state before it. When the standby does not apply
// in time, the write answers 503 (committed) and a retry with its Idempotency-Key replays it once
// the standby has caught up.

// The hammer sends many requests a second with one key; the per-key rate limit is not what this checks.
vi.hoisted(() => {
  process.env.RETRIEVAL_RATE_LIMIT_PER_SECOND = '0';
  process.env.RETRIEVAL_STANDBY_WAIT_MS = '3000';
});

type Seen = { status: number; version: number | null; splitId: string | null; archived?: boolean };
type Get = (promptId: string, secret: string) => Promise<Seen>;
type Sample = Seen & { start: number; end: number };

const subjectHeader = () => ({ 'promptloop-subject': randomUUID() });

const overHttp =
  (base: string): Get =>
  async (promptId, secret) => {
    const response = await fetch(`${base}/api/v1/prompts/${promptId}?label=production`, {
      headers: { authorization: `Bearer ${secret}`, ...subjectHeader() },
    });
    const text = await response.text();
    const body = text ? JSON.parse(text) : {};
    return { status: response.status, version: body.version ?? null, splitId: body.split?.id ?? null };
  };

// The app's one retrieval statement on the reader pool (the standby), for what the body does not
// show: whether the prompt is archived (that decides the archived_prompt_used warning).
const byStatement =
  (database: Database): Get =>
  async (promptId, secret) => {
    const row = await lookupRetrieval(database, {
      digest: retrievalSecretDigest(secret),
      promptId,
      selector: { kind: 'label', label: 'production' },
      knownVersionIds: [],
      subject: null,
      bucket: 0,
    });
    return row
      ? { status: 200, version: row.version, splitId: row.splitId, archived: row.archived }
      : { status: 401, version: null, splitId: null };
  };

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// The standby has applied everything committed so far (a standby just started may need several waits).
async function caughtUp(): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await waitForRetrievalStandby();
    } catch (error) {
      if (attempt === 10) throw error;
    }
  }
}

// `clients` loops per getter retrieving until stopped, each request's start and end on one clock.
function hammer(gets: Get[], promptId: string, secret: string, clients: number) {
  const samples: Sample[] = [];
  let stopped = false;
  const loops = gets.flatMap((get) =>
    Array.from({ length: clients }, async () => {
      while (!stopped) {
        const start = performance.now();
        const seen = await get(promptId, secret);
        samples.push({ ...seen, start, end: performance.now() });
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }),
  );
  return {
    samples,
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

type Step = { name: string; write: () => Promise<void>; expect: (seen: Seen) => void };

// Runs each write under the load; every request that started after a write's answer and ended
// before the next write began must see that write.
async function race(gets: Get[], promptId: string, secret: string, steps: Step[]): Promise<void> {
  const load = hammer(gets, promptId, secret, 16);
  await pause(150);
  const acks: { step: Step; begin: number; ack: number }[] = [];
  for (const step of steps) {
    const begin = performance.now();
    await step.write();
    acks.push({ step, begin, ack: performance.now() });
    await pause(150);
  }
  await load.stop();
  for (const [i, { step, ack }] of acks.entries()) {
    const nextBegin = acks[i + 1]?.begin ?? Infinity;
    const after = load.samples.filter((s) => s.start > ack && s.end < nextBegin);
    expect(after.length, `requests after "${step.name}"`).toBeGreaterThan(gets.length * 4);
    for (const sample of after) step.expect(sample);
  }
}

const binaries = postgresBinaries();

describe.skipIf(!binaries)(
  'retrieval from a streaming standby (skipped when initdb, pg_ctl and pg_basebackup are not installed)',
  () => {
    let pair: StandbyPair | undefined;
    let database: Database | undefined;
    let entry: Awaited<ReturnType<typeof startRetrievalEntry>> | undefined;
    const gets: Get[] = [];

    beforeAll(async () => {
      // Each commit reaches the standby's readers 30 ms late, so a write that answered without
      // waiting would be seen stale by the load below.
      pair = await startStandbyPair({ applyDelayMs: 30 });
      process.env.RETRIEVAL_DATABASE_URL = pair.standbyUrl;
      database = await openDatabase({ url: pair.primaryUrl, readerUrl: pair.standbyUrl, max: 4 });
      await migrate(database);
      setDatabase(Promise.resolve(database));
      await caughtUp();
      entry = await startRetrievalEntry({ DATABASE_URL: pair.primaryUrl, RETRIEVAL_DATABASE_URL: pair.standbyUrl });
      gets.push(overHttp(entry.url), byStatement(database));
    }, 120_000);

    // Stops the retrieval process, closes the pools, stops both servers and removes their directory,
    // whatever happened above.
    afterAll(async () => {
      await entry?.stop();
      await database?.close();
      await pair?.stop();
      delete process.env.RETRIEVAL_DATABASE_URL;
      delete process.env.RETRIEVAL_STANDBY_WAIT_MS;
    }, 60_000);

    it('reads the standby, and writes wait for it (the setting is read, the reader is in recovery)', async () => {
      expect(config().retrievalDatabaseUrl).toBe(pair!.standbyUrl);
      expect(await checkRetrievalStandby(database!)).toBe('standby');
      expect(await preparedValues(database!.reader!(), 'select pg_is_in_recovery()', [])).toEqual([[true]]);
    });

    it('label moves, a split and its end under 32 concurrent clients: nothing started after an answer is stale', async () => {
      const s = await retrievalSetup(3);
      const move = (target: number) => ({
        name: `move to ${target}`,
        write: async () => {
          const moved = await s.owner.call('PUT', `${s.base}/labels/production`, {
            body: { versionId: s.ids[target - 1] },
          });
          expect(moved.status).toBe(200);
        },
        expect: (seen: Seen) => expect(seen).toMatchObject({ status: 200, version: target, splitId: null }),
      });
      let splitId = '';
      const split = {
        name: 'split 1/2',
        write: async () => {
          splitId = await splitLabel(s.owner, s.base, [
            { versionId: s.ids[0], weight: 50 },
            { versionId: s.ids[1], weight: 50 },
          ]);
        },
        expect: (seen: Seen) => {
          expect(seen).toMatchObject({ status: 200, splitId });
          expect([1, 2]).toContain(seen.version);
        },
      };
      await race(gets, s.promptId, s.secret, [move(2), split, move(3), move(1)]);
    }, 60_000);

    it('a revocation and an archive under 32 concurrent clients: nothing started after the answer misses them', async () => {
      const archived = await retrievalSetup(1);
      await race(gets, archived.promptId, archived.secret, [
        {
          name: 'archive',
          write: async () => {
            const reply = await archived.owner.call('POST', `${archived.base}/archive`);
            expect(reply.status).toBe(200);
          },
          // Still served (API.md: an archived prompt keeps answering, with a warning).
          expect: (seen) => {
            expect(seen.status).toBe(200);
            if (seen.archived !== undefined) expect(seen.archived).toBe(true);
          },
        },
      ]);
      const revoked = await retrievalSetup(1);
      await race(gets, revoked.promptId, revoked.secret, [
        {
          name: 'revoke',
          write: async () => {
            const reply = await revoked.owner.call('DELETE', `${revoked.base}/keys/${revoked.keyId}`);
            expect(reply.status).toBe(200);
          },
          expect: (seen) => expect(seen.status).toBe(401),
        },
      ]);
    }, 60_000);

    it('a standby that does not apply in time: 503, committed, retrieval unchanged; the same Idempotency-Key replays it once applied', async () => {
      const s = await retrievalSetup(2);
      const [http] = gets;
      const move = { body: { versionId: s.ids[1] }, headers: { 'idempotency-key': `replica-${randomUUID()}` } };
      await pair!.pauseReplay();
      try {
        const first = await s.owner.call('PUT', `${s.base}/labels/production`, move);
        expect(first.status).toBe(503);
        expect(first.body.error).toMatchObject({
          code: 'unavailable',
          details: { reason: 'retrieval_standby_behind' },
        });
        expect(first.headers.get('retry-after')).toBe('1');
        // Committed on the primary (the management API reads it), not yet on the standby.
        const labels = await s.owner.call('GET', `${s.base}/labels`);
        expect(labels.body.items.find((l: { label: string }) => l.label === 'production')).toMatchObject({
          versionId: s.ids[1],
        });
        expect(await http(s.promptId, s.secret)).toMatchObject({ status: 200, version: 1 });
        // A retry while the standby is still behind waits and answers 503 again.
        expect((await s.owner.call('PUT', `${s.base}/labels/production`, move)).status).toBe(503);
        // The dashboard's procedure (tRPC) is the same service and transaction owner: the same answer.
        const dashboard = await caller(s.owner.id);
        const refused = await rejection(
          dashboard.versions.moveLabel({
            organizationId: s.org.id,
            promptId: s.promptId,
            label: 'staging',
            versionId: s.ids[1],
          }),
        );
        expect(refused.code).toBe('SERVICE_UNAVAILABLE');
        expect(refused.cause).toMatchObject({ code: 'unavailable', details: { reason: 'retrieval_standby_behind' } });
      } finally {
        await pair!.resumeReplay();
      }
      const retried = await s.owner.call('PUT', `${s.base}/labels/production`, move);
      expect(retried.status).toBe(200);
      expect(retried.headers.get('idempotency-replayed')).toBe('true');
      expect(await http(s.promptId, s.secret)).toMatchObject({ status: 200, version: 2 });
    }, 60_000);

    it('creating a key while the standby is behind still answers 201 with its one-time secret', async () => {
      const s = await retrievalSetup(1);
      const [http] = gets;
      await pair!.pauseReplay();
      let secret: string;
      try {
        const created = await s.owner.call('POST', `${s.base}/keys`, { body: { name: 'late' } });
        expect(created.status).toBe(201);
        secret = created.body.secret;
      } finally {
        await pair!.resumeReplay();
      }
      await caughtUp();
      expect(await http(s.promptId, secret)).toMatchObject({ status: 200, version: 1 });
    }, 60_000);

    it('a stopped standby: retrieval answers 503, such writes answer 503; both recover when it is back', async () => {
      const s = await retrievalSetup(2);
      const [http] = gets;
      await pair!.stopStandby();
      try {
        expect(await http(s.promptId, s.secret)).toMatchObject({ status: 503 });
        const moved = await s.owner.call('PUT', `${s.base}/labels/production`, { body: { versionId: s.ids[1] } });
        expect(moved.status).toBe(503);
        expect(moved.body.error.details.reason).toBe('retrieval_standby_behind');
      } finally {
        await pair!.startStandby();
      }
      // Its WAL receiver reconnects to the primary within a few seconds (wal_retrieve_retry_interval).
      await caughtUp();
      expect(await http(s.promptId, s.secret)).toMatchObject({ status: 200, version: 2 });
    }, 60_000);

    it('an unreachable RETRIEVAL_DATABASE_URL stops the process at start, with the reason', async () => {
      const wrong = await openDatabase({
        url: pair!.primaryUrl,
        readerUrl: 'postgres://postgres@127.0.0.1:1/postgres',
      });
      try {
        await expect(checkRetrievalStandby(wrong)).rejects.toThrow(
          /RETRIEVAL_DATABASE_URL: the retrieval standby cannot be reached/,
        );
      } finally {
        await wrong.close();
      }
    });
  },
);
