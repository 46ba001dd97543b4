import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { getDb } from '@/db/client';
import { startRetrievalEntry } from '../helpers/retrieval-entry';
import { retrievalSetup, retrieve } from '../helpers/retrieval';

// Correctness under load: many retrievals in flight while a label moves (or a key is revoked).
// Every request that STARTS after the move's (or revocation's) response was received must see the
// new state. Start and end times are recorded on one clock (this process).

// The hammer sends thousands of requests a second with one key; the per-key rate limit (tested in
// retrieval.rate-limit.test.ts, whose setting a reused test worker may still carry) would answer
// some with 429 and is not what this file checks.
vi.hoisted(() => {
  process.env.RETRIEVAL_RATE_LIMIT_PER_SECOND = '0';
});

beforeAll(() => getDb().then(() => undefined), 120_000);

type Get = (
  promptId: string,
  secret: string,
  headers?: Record<string, string>,
) => Promise<{ status: number; version: number | null; etag: string | null }>;
type Sample = { start: number; end: number; status: number; version: number | null };

const inProcess: Get = async (promptId, secret, headers) => {
  const reply = await retrieve(promptId, secret, { headers });
  return { status: reply.status, version: reply.body?.version ?? null, etag: reply.headers.get('etag') };
};

const overHttp =
  (base: string): Get =>
  async (promptId, secret, headers = {}) => {
    const response = await fetch(`${base}/api/v1/prompts/${promptId}`, {
      headers: { authorization: `Bearer ${secret}`, ...headers },
    });
    const text = await response.text();
    return {
      status: response.status,
      version: text ? (JSON.parse(text).version ?? null) : null,
      etag: response.headers.get('etag'),
    };
  };

// One turn of the event loop: on PGlite an in-process retrieval resolves in microtasks only, so
// loops that never yield would starve every timer (the pauses below, vitest's timeouts).
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

// `concurrency` loops retrieving until stopped; half of them send If-None-Match with the tag they last saw.
function hammer(get: Get, promptId: string, secret: string, concurrency: number) {
  const samples: Sample[] = [];
  let stopped = false;
  const loops = Array.from({ length: concurrency }, async (_, i) => {
    let etag: string | null = null;
    while (!stopped) {
      const start = performance.now();
      const reply = await get(promptId, secret, i % 2 && etag ? { 'if-none-match': etag } : undefined);
      const end = performance.now();
      if (reply.etag) etag = reply.etag;
      // A 304 says "what you have is current": that tag's version.
      samples.push({ start, end, status: reply.status, version: reply.status === 304 ? -1 : reply.version });
      await yieldToLoop();
    }
  });
  return {
    samples,
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Keeps the load running until enough requests have started after `ack` (or a generous deadline
// passes): on a busy machine with the embedded database a fixed pause may see only a few.
async function untilStartedAfter(samples: Sample[], ack: number, count: number, minMs: number) {
  await pause(minMs);
  const deadline = performance.now() + 10_000;
  while (samples.filter((x) => x.start > ack).length <= count && performance.now() < deadline) await pause(25);
}

async function labelMoveRace(get: Get) {
  const s = await retrievalSetup(3);
  const load = hammer(get, s.promptId, s.secret, 16);
  await pause(150);
  const moves: { target: number; begin: number; ack: number }[] = [];
  for (const target of [2, 3, 1, 3, 2, 1, 2]) {
    const begin = performance.now();
    const moved = await s.owner.call('PUT', `${s.base}/labels/production`, { body: { versionId: s.ids[target - 1] } });
    const ack = performance.now();
    expect(moved.status).toBe(200);
    moves.push({ target, begin, ack });
    await untilStartedAfter(load.samples, ack, 4, 120);
  }
  await pause(100);
  await load.stop();

  // Conditional replies carry no body: a 304 is checked through the tag its loop held, so only
  // count requests with a body, plus the rule that no 304 answers a tag of an older version
  // (covered below by the tag check on every 200 that follows a move).
  let checked = 0;
  for (const [i, move] of moves.entries()) {
    const nextBegin = moves[i + 1]?.begin ?? Infinity;
    for (const sample of load.samples) {
      if (sample.start > move.ack && sample.end < nextBegin && sample.status === 200) {
        expect(
          sample.version,
          `request started ${(sample.start - move.ack).toFixed(1)} ms after the move to ${move.target}`,
        ).toBe(move.target);
        checked++;
      }
    }
  }
  expect(load.samples.filter((x) => x.status !== 200 && x.status !== 304).map((x) => x.status)).toEqual([]);
  expect(checked).toBeGreaterThan(15);
  return { s, moves, load };
}

// A 304 after a move must never be for the old version's tag: every loop's tag is from its last 200.
async function conditionalAfterMove(get: Get) {
  const s = await retrievalSetup(2);
  const before = await get(s.promptId, s.secret);
  const oldTag = before.etag!;
  const stale = hammer(
    (promptId, secret) => get(promptId, secret, { 'if-none-match': oldTag }),
    s.promptId,
    s.secret,
    8,
  );
  await pause(100);
  await s.owner.call('PUT', `${s.base}/labels/production`, { body: { versionId: s.ids[1] } });
  const ack = performance.now();
  await untilStartedAfter(stale.samples, ack, 10, 150);
  await stale.stop();
  const after = stale.samples.filter((x) => x.start > ack);
  expect(after.length).toBeGreaterThan(10);
  for (const sample of after) expect(sample).toMatchObject({ status: 200, version: 2 });
  expect(stale.samples.some((x) => x.status === 304)).toBe(true);
}

async function revocationRace(get: Get) {
  const s = await retrievalSetup(1);
  const load = hammer(get, s.promptId, s.secret, 16);
  await pause(200);
  const revoked = await s.owner.call('DELETE', `${s.base}/keys/${s.keyId}`);
  const ack = performance.now();
  expect(revoked.status).toBe(200);
  await untilStartedAfter(load.samples, ack, 20, 200);
  await load.stop();
  const before = load.samples.filter((x) => x.end < ack);
  const after = load.samples.filter((x) => x.start > ack);
  expect(before.some((x) => x.status === 200)).toBe(true);
  expect(before.some((x) => x.status === 304)).toBe(true);
  expect(after.length).toBeGreaterThan(20);
  for (const sample of after)
    expect(sample.status, `request started ${(sample.start - ack).toFixed(1)} ms after the revocation`).toBe(401);
}

describe('in-process router (Next catch-all path)', () => {
  it(
    'a label moving back and forth under 16 concurrent retrievals: no request started after a move sees the old version',
    () => labelMoveRace(inProcess),
    60_000,
  );
  it(
    'a request revalidating the old ETag after a move gets 200 with the new version, never 304',
    () => conditionalAfterMove(inProcess),
    60_000,
  );
  it(
    'a revocation under 16 concurrent retrievals (half conditional): no request started after it succeeds',
    () => revocationRace(inProcess),
    60_000,
  );
});

// The label moves through this process while another process (the production entry) serves: no
// cache in either may answer from before the move.
describe.skipIf(!process.env.DATABASE_URL)('production entry (--role=retrieval, another process)', () => {
  let entry: Awaited<ReturnType<typeof startRetrievalEntry>> | undefined;
  beforeAll(async () => {
    entry = await startRetrievalEntry();
  }, 120_000);
  afterAll(async () => {
    await entry?.stop();
  });

  it('label moves under concurrent HTTP load', () => labelMoveRace(overHttp(entry!.url)), 60_000);
  it('revalidation with the old ETag after a move', () => conditionalAfterMove(overHttp(entry!.url)), 60_000);
  it('revocation under concurrent HTTP load', () => revocationRace(overHttp(entry!.url)), 60_000);
});
