import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { getDb } from '@/db/client';
import { startRetrievalEntry } from '../helpers/retrieval-entry';
import { retrievalSetup, retrieve } from '../helpers/retrieval';
import { expectedFor, type SplitEntry } from '../helpers/splits';

// Freshness of split labels under load, as retrieval.race.test.ts checks label moves: many
// retrievals in flight while the label is split, re-split and moved back to one version. Every
// request that STARTS after a change's response was received must be answered by the new state:
// a subject's version by the new split's id and weights, a request without one among the new
// split's versions, and no `split` (and the one version) once the split has ended. Start and end
// times are recorded on one clock (this process).

vi.hoisted(() => {
  process.env.RETRIEVAL_RATE_LIMIT_PER_SECOND = '0';
});

beforeAll(() => getDb().then(() => undefined), 120_000);

type Reply = { status: number; body: any; etag: string | null };
type Get = (promptId: string, secret: string, headers: Record<string, string>) => Promise<Reply>;
type Sample = { start: number; end: number; subject: string | null; reply: Reply };

const inProcess: Get = async (promptId, secret, headers) => {
  const reply = await retrieve(promptId, secret, { headers });
  return { status: reply.status, body: reply.body, etag: reply.headers.get('etag') };
};

const overHttp =
  (base: string): Get =>
  async (promptId, secret, headers) => {
    const response = await fetch(`${base}/api/v1/prompts/${promptId}`, {
      headers: { authorization: `Bearer ${secret}`, ...headers },
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null, etag: response.headers.get('etag') };
  };

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// `concurrency` loops: loop i sends a fresh subject on every request when i is even, none when odd;
// every other pair revalidates with the tag it last saw (If-None-Match).
function hammer(get: Get, promptId: string, secret: string, concurrency: number) {
  const samples: Sample[] = [];
  let stopped = false;
  const loops = Array.from({ length: concurrency }, async (_, i) => {
    let etag: string | null = null;
    let n = 0;
    while (!stopped) {
      const subject = i % 2 === 0 ? `loop-${i}-${n++}` : null;
      const headers: Record<string, string> = {};
      if (subject !== null) headers['promptloop-subject'] = subject;
      if (i % 4 >= 2 && etag) headers['if-none-match'] = etag;
      const start = performance.now();
      const reply = await get(promptId, secret, headers);
      const end = performance.now();
      if (reply.etag) etag = reply.etag;
      samples.push({ start, end, subject, reply });
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

type State = { versionId: string; splitId: null } | { splitId: string; split: SplitEntry[] };

async function splitRace(get: Get) {
  const s = await retrievalSetup(3);
  const [v1, v2, v3] = s.ids;
  const load = hammer(get, s.promptId, s.secret, 16);
  await pause(150);
  const changes: (SplitEntry[] | string)[] = [
    [
      { versionId: v1, weight: 50 },
      { versionId: v2, weight: 50 },
    ],
    [
      { versionId: v2, weight: 30 },
      { versionId: v3, weight: 70 },
    ],
    v3, // the split ends
    [
      { versionId: v3, weight: 20 },
      { versionId: v1, weight: 80 },
    ],
    [
      { versionId: v1, weight: 25 },
      { versionId: v2, weight: 25 },
      { versionId: v3, weight: 50 },
    ],
    v1,
    [
      { versionId: v2, weight: 90 },
      { versionId: v3, weight: 10 },
    ],
  ];
  const moves: { state: State; begin: number; ack: number }[] = [];
  for (const change of changes) {
    const begin = performance.now();
    const moved = await s.owner.call('PUT', `${s.base}/labels/production`, {
      body: typeof change === 'string' ? { versionId: change } : { split: change },
    });
    const ack = performance.now();
    expect(moved.status).toBe(200);
    const state: State =
      typeof change === 'string'
        ? { versionId: change, splitId: null }
        : { splitId: moved.body.splitId as string, split: change };
    if (typeof change === 'string') expect(moved.body.splitId).toBeNull();
    moves.push({ state, begin, ack });
    await pause(120);
  }
  await pause(100);
  await load.stop();

  expect(
    load.samples.filter((x) => x.reply.status !== 200 && x.reply.status !== 304).map((x) => x.reply.status),
  ).toEqual([]);
  // A 304 names its version by its tag: each version's tag, from the 200s.
  const versionOfTag = new Map<string, string>();
  for (const { reply } of load.samples) if (reply.status === 200) versionOfTag.set(reply.etag!, reply.body.versionId);

  let checked = 0;
  let conditional = 0;
  for (const [i, move] of moves.entries()) {
    const nextBegin = moves[i + 1]?.begin ?? Infinity;
    for (const sample of load.samples) {
      if (!(sample.start > move.ack && sample.end < nextBegin)) continue;
      const { reply, subject } = sample;
      const versionId = reply.status === 304 ? versionOfTag.get(reply.etag!) : reply.body.versionId;
      const context = `request (subject ${subject}) started ${(sample.start - move.ack).toFixed(1)} ms after change ${i}, status ${reply.status}`;
      const { state } = move;
      if (state.splitId === null) {
        expect(versionId, context).toBe(state.versionId);
        if (reply.status === 200) expect(reply.body.split, context).toBeUndefined();
      } else {
        const entry =
          subject === null
            ? state.split.find((e) => e.versionId === versionId)
            : expectedFor(state.splitId, state.split, subject);
        expect(entry, context).toBeDefined();
        expect(versionId, context).toBe(entry!.versionId);
        if (reply.status === 200)
          expect(reply.body.split, context).toEqual({ id: state.splitId, weight: entry!.weight });
      }
      checked++;
      if (reply.status === 304) conditional++;
    }
  }
  expect(checked).toBeGreaterThan(30);
  expect(conditional).toBeGreaterThan(0);
}

describe('in-process router (Next catch-all path)', () => {
  it(
    'a label split, re-split and ended under 16 concurrent retrievals: no request started after a change sees the old state',
    () => splitRace(inProcess),
    60_000,
  );
});

describe.skipIf(!process.env.DATABASE_URL)('production entry (--role=retrieval, another process)', () => {
  let entry: Awaited<ReturnType<typeof startRetrievalEntry>> | undefined;
  beforeAll(async () => {
    entry = await startRetrievalEntry({ RETRIEVAL_RATE_LIMIT_PER_SECOND: '0' });
  }, 120_000);
  afterAll(async () => {
    await entry?.stop();
  });

  it('split changes under concurrent HTTP load', () => splitRace(overHttp(entry!.url)), 60_000);
});
