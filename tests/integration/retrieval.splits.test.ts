import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { getDatabase, getDb, openDatabase, setDatabase } from '@/db/client';
import { flushRetrievalActivity, recordSplitRetrieval } from '@/server/retrieval/activity';
import { lookupRetrieval, type Selector } from '@/server/retrieval/query';
import { closedPort } from '../helpers/net';
import { systemContent } from '../helpers/prompts';
import { startRetrievalEntry } from '../helpers/retrieval-entry';
import { retrievalSetup, retrieve } from '../helpers/retrieval';
import { bucketOf, expectedFor, splitCounts, splitLabel, type SplitEntry } from '../helpers/splits';

// Retrieval of a split label (API.md "Safe releases", Retrieval): the version is picked per request
// by the Promptloop-Subject header (a hash of split id + subject onto the cumulative weights), at
// random without one; the body, the ETag and 304 are the chosen version's.

// Thousands of requests with one key: the per-key rate limit (retrieval.rate-limit.test.ts) is not
// what this file checks. Counts are written only by the explicit flushes of the tests: a timer's
// flush could write them first (the failed-flush test then had nothing left to fail on).
vi.hoisted(() => {
  process.env.RETRIEVAL_RATE_LIMIT_PER_SECOND = '0';
  process.env.RETRIEVAL_ACTIVITY_FLUSH_MS = '600000';
  process.env.RETRIEVAL_LAST_USED_FLUSH_MS = '600000';
});

beforeAll(() => getDb().then(() => undefined), 120_000);

type Setup = Awaited<ReturnType<typeof retrievalSetup>>;
const production: Selector = { kind: 'label', label: 'production' };

const withSubject = (subject: string | undefined, headers: Record<string, string> = {}) =>
  subject === undefined ? headers : { 'promptloop-subject': subject, ...headers };

const get = (s: Setup, subject?: string, options: { headers?: Record<string, string>; query?: string } = {}) =>
  retrieve(s.promptId, s.secret, { query: options.query, headers: withSubject(subject, options.headers) });

// Each version's content as the management API returns it, by number.
async function contentsOf(s: Setup): Promise<(n: number) => unknown> {
  const contents = new Map<number, unknown>();
  for (let n = 1; n <= s.ids.length; n++) {
    const version = await s.owner.call('GET', `${s.base}/versions/${n}`);
    // Versions differ: a body served for the wrong version cannot pass for the right one.
    if (n > 1) expect(version.body.content.messages).toEqual(systemContent(`Take ${n}`).messages);
    contents.set(n, version.body.content);
  }
  return (n) => contents.get(n);
}
const numberOf = (s: Setup, versionId: string) => s.ids.indexOf(versionId) + 1;

// A subject that the split sends to `versionId`.
function subjectFor(splitId: string, split: SplitEntry[], versionId: string, from = 0): string {
  for (let i = from; i < from + 10_000; i++)
    if (expectedFor(splitId, split, `subject-${i}`).versionId === versionId) return `subject-${i}`;
  throw new Error('no subject found');
}

async function inBatches<T>(count: number, size: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let at = 0; at < count; at += size)
    results.push(...(await Promise.all(Array.from({ length: Math.min(size, count - at) }, (_, j) => task(at + j)))));
  return results;
}

describe('GET /api/v1/prompts/{id} on a split label (in-process router)', () => {
  it('the same subject gets the same version while the split is unchanged, by the hash of split id + subject onto the cumulative weights', async () => {
    const s = await retrievalSetup(3);
    const contentOf = await contentsOf(s);
    // Order given, not sorted: version 3 owns buckets [0, 30), version 1 [30, 100).
    const split = [
      { versionId: s.ids[2], weight: 30 },
      { versionId: s.ids[0], weight: 70 },
    ];
    const splitId = await splitLabel(s.owner, s.base, split);
    expect(splitId).toMatch(/^spl_/);
    const seen = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const subject = `user-${i}@example.test`;
      const expected = expectedFor(splitId, split, subject);
      const first = await get(s, subject);
      expect(first.status).toBe(200);
      expect(first.body).toEqual({
        promptId: s.promptId,
        name: s.prompt.name,
        versionId: expected.versionId,
        version: numberOf(s, expected.versionId),
        label: 'production',
        split: { id: splitId, weight: expected.weight },
        content: contentOf(numberOf(s, expected.versionId)),
        createdAt: expect.stringMatching(/Z$/),
      });
      expect(first.headers.get('cache-control')).toBe('private, no-cache');
      expect(first.headers.get('vary')).toBe('Authorization');
      // Keys in this order: `split` sits between `label` and `content`.
      expect(Object.keys(first.body)).toEqual([
        'promptId',
        'name',
        'versionId',
        'version',
        'label',
        'split',
        'content',
        'createdAt',
      ]);
      for (let again = 0; again < 3; again++) {
        const next = await get(s, subject);
        expect(next.body.versionId, subject).toBe(expected.versionId);
        expect(next.headers.get('etag')).toBe(first.headers.get('etag'));
      }
      seen.add(expected.versionId);
    }
    expect(seen).toEqual(new Set([s.ids[0], s.ids[2]]));

    // The label named explicitly is the same label; a version number and an unsplit label ignore the subject.
    const subject = 'user-1@example.test';
    const explicit = await get(s, subject, { query: 'label=production' });
    expect(explicit.body.versionId).toBe(expectedFor(splitId, split, subject).versionId);
    const exact = await get(s, subject, { query: 'version=2' });
    expect(exact.status).toBe(200);
    expect(exact.body).toMatchObject({ version: 2, label: null });
    expect(exact.body).not.toHaveProperty('split');
    const staging = await get(s, subject, { query: 'label=staging' });
    expect(staging.body).toMatchObject({ version: 1, label: 'staging' });
    expect(staging.body).not.toHaveProperty('split');

    // Another label split on its own id.
    const stagingSplit = [
      { versionId: s.ids[1], weight: 50 },
      { versionId: s.ids[2], weight: 50 },
    ];
    const stagingId = await splitLabel(s.owner, s.base, stagingSplit, 'staging');
    for (let i = 0; i < 10; i++) {
      const reply = await get(s, `user-${i}`, { query: 'label=staging' });
      const expected = expectedFor(stagingId, stagingSplit, `user-${i}`);
      expect(reply.body).toMatchObject({
        versionId: expected.versionId,
        label: 'staging',
        split: { id: stagingId, weight: 50 },
      });
    }
  });

  it('2,000 subjects on a 90/10 split land within a generous binomial bound of the weights', async () => {
    const s = await retrievalSetup(2);
    const split = [
      { versionId: s.ids[0], weight: 90 },
      { versionId: s.ids[1], weight: 10 },
    ];
    const splitId = await splitLabel(s.owner, s.base, split);
    const replies = await inBatches(2000, 16, (i) => get(s, `visitor-${i}-${splitId.slice(-4)}`));
    const minority = replies.filter((r) => r.body.versionId === s.ids[1]).length;
    expect(replies.every((r) => r.status === 200)).toBe(true);
    // Binomial(2000, 0.1): mean 200, standard deviation 13.4; six deviations either side.
    expect(minority).toBeGreaterThan(200 - 6 * 13.4);
    expect(minority).toBeLessThan(200 + 6 * 13.4);
    // And each answer is the one the rule gives, with its weight.
    for (const [i, reply] of replies.entries()) {
      const expected = expectedFor(splitId, split, `visitor-${i}-${splitId.slice(-4)}`);
      expect(reply.body.versionId).toBe(expected.versionId);
      expect(reply.body.split).toEqual({ id: splitId, weight: expected.weight });
    }
  });

  it('without a subject each request draws at random: both versions are served, each body complete and its own', async () => {
    const s = await retrievalSetup(2);
    const contentOf = await contentsOf(s);
    const splitId = await splitLabel(s.owner, s.base, [
      { versionId: s.ids[0], weight: 50 },
      { versionId: s.ids[1], weight: 50 },
    ]);
    const replies = await inBatches(80, 4, () => get(s));
    const versions = new Map<number, number>();
    for (const reply of replies) {
      expect(reply.status).toBe(200);
      const n = reply.body.version as number;
      versions.set(n, (versions.get(n) ?? 0) + 1);
      // Served bodies alternate between the two versions: every content is the chosen version's.
      expect(reply.body).toMatchObject({
        versionId: s.ids[n - 1],
        split: { id: splitId, weight: 50 },
        content: contentOf(n),
      });
    }
    expect([...versions.keys()].sort()).toEqual([1, 2]);
  });

  it('a new split re-buckets subjects by its new id; the identical split keeps its id; ending the split serves one version without `split`', async () => {
    const s = await retrievalSetup(2);
    const first = [
      { versionId: s.ids[0], weight: 50 },
      { versionId: s.ids[1], weight: 50 },
    ];
    const firstId = await splitLabel(s.owner, s.base, first);
    expect(await splitLabel(s.owner, s.base, first)).toBe(firstId);
    const subjects = Array.from({ length: 60 }, (_, i) => `member-${i}`);
    const before = await Promise.all(subjects.map((subject) => get(s, subject)));

    const second = [
      { versionId: s.ids[0], weight: 51 },
      { versionId: s.ids[1], weight: 49 },
    ];
    const secondId = await splitLabel(s.owner, s.base, second);
    expect(secondId).not.toBe(firstId);
    const after = await Promise.all(subjects.map((subject) => get(s, subject)));
    let moved = 0;
    for (const [i, subject] of subjects.entries()) {
      expect(before[i].body.versionId).toBe(expectedFor(firstId, first, subject).versionId);
      expect(after[i].body).toMatchObject({
        versionId: expectedFor(secondId, second, subject).versionId,
        split: { id: secondId },
      });
      if (before[i].body.versionId !== after[i].body.versionId) moved++;
    }
    // A new id is a new hash: some subjects change sides (about half; none would if only weights counted).
    expect(subjects.filter((x) => bucketOf(firstId, x) !== bucketOf(secondId, x)).length).toBeGreaterThan(40);
    expect(moved).toBeGreaterThan(5);

    const ended = await s.owner.call('PUT', `${s.base}/labels/production`, { body: { versionId: s.ids[1] } });
    expect(ended.status).toBe(200);
    for (const subject of subjects.slice(0, 10)) {
      const reply = await get(s, subject);
      expect(reply.body).toMatchObject({ versionId: s.ids[1], version: 2, label: 'production' });
      expect(reply.body).not.toHaveProperty('split');
    }
  });

  it('ETag and 304 follow the chosen version; a tag from before the split still matches when its version is chosen', async () => {
    const s = await retrievalSetup(2);
    const contentOf = await contentsOf(s);
    const v1 = await get(s);
    const tag1 = v1.headers.get('etag')!;
    expect(v1.body).not.toHaveProperty('split');
    // Version 2's tag as production: moved there and back before the split.
    await s.owner.call('PUT', `${s.base}/labels/production`, { body: { versionId: s.ids[1] } });
    const tag2 = (await get(s)).headers.get('etag')!;
    await s.owner.call('PUT', `${s.base}/labels/production`, { body: { versionId: s.ids[0] } });
    expect(tag2).not.toBe(tag1);

    const split = [
      { versionId: s.ids[0], weight: 50 },
      { versionId: s.ids[1], weight: 50 },
    ];
    const splitId = await splitLabel(s.owner, s.base, split);
    const a = subjectFor(splitId, split, s.ids[0]);
    const b = subjectFor(splitId, split, s.ids[1]);

    // The tags are the versions' tags from before the split.
    const plainA = await get(s, a);
    expect(plainA.body).toMatchObject({ version: 1, split: { id: splitId, weight: 50 } });
    expect(plainA.headers.get('etag')).toBe(tag1);
    expect((await get(s, b)).headers.get('etag')).toBe(tag2);

    const conditional = (subject: string, tag: string) => get(s, subject, { headers: { 'if-none-match': tag } });
    const notModified = await conditional(a, tag1);
    expect(notModified.status).toBe(304);
    expect(notModified.body).toBeNull();
    expect(notModified.headers.get('etag')).toBe(tag1);
    expect(notModified.headers.get('vary')).toBe('Authorization');
    expect(notModified.headers.get('cache-control')).toBe('private, no-cache');
    // The split the chosen version comes from, on the 304 and the 200 (the tag is the version's alone).
    expect(notModified.headers.get('promptloop-split')).toBe(`id=${splitId}; weight=50`);
    expect(plainA.headers.get('promptloop-split')).toBe(`id=${splitId}; weight=50`);
    expect(v1.headers.get('promptloop-split')).toBeNull();

    // A tag of the other version: 200 with the chosen version.
    const other = await conditional(b, tag1);
    expect(other.status).toBe(200);
    expect(other.body).toMatchObject({ versionId: s.ids[1], version: 2, content: contentOf(2) });
    expect(other.headers.get('etag')).toBe(tag2);
    expect((await conditional(b, tag2)).status).toBe(304);
    const back = await conditional(a, tag2);
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({ versionId: s.ids[0], content: contentOf(1) });

    // Lists and `*` as before, weak tags too.
    expect((await conditional(a, `"x", ${tag2}, W/${tag1}`)).status).toBe(304);
    expect((await conditional(b, `${tag1}, ${tag2}`)).status).toBe(304);
    expect((await conditional(b, '*')).status).toBe(304);

    // Without a subject: 304 exactly when the random draw chose the tag's version.
    for (let i = 0; i < 20; i++) {
      const reply = await get(s, undefined, { headers: { 'if-none-match': tag1 } });
      if (reply.status === 304) expect(reply.headers.get('etag')).toBe(tag1);
      else expect([reply.status, reply.body.version]).toEqual([200, 2]);
    }

    // After the split ends, the same tags keep their meaning.
    await s.owner.call('PUT', `${s.base}/labels/production`, { body: { versionId: s.ids[1] } });
    const afterSplit = await conditional(a, tag2);
    expect(afterSplit.status).toBe(304);
    // No split header: a client holding a copy from the split learns that it ended.
    expect(afterSplit.headers.get('promptloop-split')).toBeNull();
    const ended = await conditional(a, tag1);
    expect(ended.status).toBe(200);
    expect(ended.body.version).toBe(2);
  });

  it('Promptloop-Subject of 1–200 characters; empty or 201 is 400 invalid_request after authentication and the 403, and nothing is counted', async () => {
    const s = await retrievalSetup(2);
    const splitId = await splitLabel(s.owner, s.base, [
      { versionId: s.ids[0], weight: 40 },
      { versionId: s.ids[1], weight: 60 },
    ]);
    await flushRetrievalActivity();
    for (const subject of ['', ' ', 'x'.repeat(201), 'é'.repeat(201)]) {
      const reply = await get(s, subject);
      expect(reply.status, JSON.stringify(subject)).toBe(400);
      expect(reply.headers.get('cache-control')).toBe('no-store');
      expect(reply.body.error).toMatchObject({
        code: 'invalid_request',
        details: { issues: [{ path: 'Promptloop-Subject', message: expect.any(String) }] },
        requestId: expect.stringMatching(/^req_/),
      });
      // 304 is not a way around it.
      expect((await get(s, subject, { headers: { 'if-none-match': '*' } })).status).toBe(400);
    }
    // With a bad query string too: both issues, in order.
    const both = await get(s, '', { query: 'labl=x' });
    expect(both.status).toBe(400);
    expect(both.body.error.details.issues.map((i: { path: string }) => i.path)).toEqual(['labl', 'Promptloop-Subject']);
    // Authentication and the other-prompt check come first.
    const unauthenticated = await retrieve(s.promptId, null, { headers: { 'promptloop-subject': '' } });
    expect(unauthenticated.status).toBe(401);
    const otherPrompt = await retrieve('prm_other', s.secret, { headers: { 'promptloop-subject': '' } });
    expect(otherPrompt.status).toBe(403);
    expect(otherPrompt.body.error.code).toBe('forbidden');
    // Unsplit labels and version numbers check the header the same way.
    expect((await get(s, '', { query: 'version=1' })).status).toBe(400);
    expect((await get(s, 'x'.repeat(201), { query: 'label=staging' })).status).toBe(400);

    await flushRetrievalActivity();
    expect(await splitCounts(splitId)).toEqual({});

    // The bounds themselves are fine.
    for (const subject of ['x', 'y'.repeat(200), 'é'.repeat(200)]) {
      const reply = await get(s, subject);
      expect(reply.status, subject.slice(0, 3)).toBe(200);
      expect(reply.body.split.id).toBe(splitId);
    }
    await flushRetrievalActivity();
    const counts = await splitCounts(splitId);
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(3);
  });

  it('counts each 200 and 304 of a split label per split and version, adding up across flushes; a failed flush keeps them', async () => {
    const s = await retrievalSetup(3);
    const split = [
      { versionId: s.ids[0], weight: 20 },
      { versionId: s.ids[1], weight: 30 },
      { versionId: s.ids[2], weight: 50 },
    ];
    const splitId = await splitLabel(s.owner, s.base, split);
    const expected: Record<string, number> = {};
    const count = (versionId: string, n = 1) => (expected[versionId] = (expected[versionId] ?? 0) + n);

    const subjects = Array.from({ length: 30 }, (_, i) => `counted-${i}`);
    for (const subject of subjects) {
      const reply = await get(s, subject);
      expect(reply.status).toBe(200);
      count(expectedFor(splitId, split, subject).versionId);
      const revalidated = await get(s, subject, { headers: { 'if-none-match': reply.headers.get('etag')! } });
      expect(revalidated.status).toBe(304);
      count(expectedFor(splitId, split, subject).versionId);
    }
    // Not split retrievals: an exact version, an unsplit label, refusals.
    await get(s, 'counted-1', { query: 'version=1' });
    await get(s, 'counted-1', { query: 'label=staging' });
    await get(s, 'counted-1', { query: 'label=nope' });
    await flushRetrievalActivity();
    expect(await splitCounts(splitId)).toEqual(expected);

    // A flush that fails keeps its counts for the next one.
    for (const subject of subjects.slice(0, 7)) {
      await get(s, subject);
      count(expectedFor(splitId, split, subject).versionId);
    }
    const real = getDatabase();
    await real;
    const broken = await openDatabase({ url: `postgres://postgres@127.0.0.1:${await closedPort()}/none`, max: 1 });
    setDatabase(Promise.resolve(broken));
    try {
      await expect(flushRetrievalActivity()).rejects.toThrow();
    } finally {
      setDatabase(real);
      await broken.close();
    }
    for (const subject of subjects.slice(10, 14)) {
      await get(s, subject);
      count(expectedFor(splitId, split, subject).versionId);
    }
    await flushRetrievalActivity();
    expect(await splitCounts(splitId)).toEqual(expected);
  });

  it('the statement ships content only for a version whose body this process does not hold (the hint is a set)', async () => {
    const s = await retrievalSetup(2);
    const split = [
      { versionId: s.ids[0], weight: 50 },
      { versionId: s.ids[1], weight: 50 },
    ];
    const splitId = await splitLabel(s.owner, s.base, split);
    const { retrievalSecretDigest } = await import('@/server/auth/retrieval-key');
    const database = await getDatabase();
    const lookup = (subject: string, knownVersionIds: string[], selector: Selector = production) =>
      lookupRetrieval(database, {
        digest: retrievalSecretDigest(s.secret),
        promptId: s.promptId,
        selector,
        knownVersionIds,
        subject,
        bucket: 0,
      });
    for (const versionId of s.ids) {
      const subject = subjectFor(splitId, split, versionId);
      const fresh = await lookup(subject, []);
      expect(fresh).toMatchObject({ versionId, splitId, weight: 50, content: expect.any(String) });
      expect((await lookup(subject, [...s.ids].reverse()))!).toMatchObject({
        versionId,
        content: null,
        createdAt: null,
      });
      const other = s.ids.find((id) => id !== versionId)!;
      expect((await lookup(subject, [other]))!.content).toEqual(expect.any(String));
    }
    // Without a subject the caller's bucket decides: 0 is the first version's, 99 the last's.
    const byBucket = (bucket: number) =>
      lookupRetrieval(database, {
        digest: retrievalSecretDigest(s.secret),
        promptId: s.promptId,
        selector: production,
        knownVersionIds: [],
        subject: null,
        bucket,
      });
    expect((await byBucket(0))!.versionId).toBe(s.ids[0]);
    expect((await byBucket(49))!.versionId).toBe(s.ids[0]);
    expect((await byBucket(50))!.versionId).toBe(s.ids[1]);
    expect((await byBucket(99))!.versionId).toBe(s.ids[1]);
    // A version number: no split, the same hint.
    const exact = await lookup('anyone', [s.ids[1]], { kind: 'version', number: 2 });
    expect(exact).toMatchObject({ versionId: s.ids[1], splitId: null, weight: null, content: null });
  });

  it('adds to the same (split, version, minute) row on a later flush, per minute', async () => {
    const s = await retrievalSetup(2);
    const splitId = await splitLabel(s.owner, s.base, [
      { versionId: s.ids[0], weight: 50 },
      { versionId: s.ids[1], weight: 50 },
    ]);
    const minute = Date.UTC(2026, 0, 5, 10, 7);
    for (let i = 0; i < 2; i++) recordSplitRetrieval(splitId, s.ids[0], s.org.id, minute + 1_000 * i);
    await flushRetrievalActivity();
    for (let i = 0; i < 3; i++) recordSplitRetrieval(splitId, s.ids[0], s.org.id, minute + 59_999 - i);
    recordSplitRetrieval(splitId, s.ids[0], s.org.id, minute + 60_000);
    await flushRetrievalActivity();
    const db = await getDb();
    const { retrievalSplitCounts } = await import('@/db/schema');
    const { eq } = await import('drizzle-orm');
    const rows = await db
      .select({ minute: retrievalSplitCounts.minute, count: retrievalSplitCounts.count })
      .from(retrievalSplitCounts)
      .where(eq(retrievalSplitCounts.splitId, splitId));
    expect(
      rows
        .map((r) => ({ minute: new Date(r.minute).toISOString(), count: Number(r.count) }))
        .sort((x, y) => x.minute.localeCompare(y.minute)),
    ).toEqual([
      { minute: new Date(minute).toISOString(), count: 5 },
      { minute: new Date(minute + 60_000).toISOString(), count: 1 },
    ]);
  });
});

// The production entry (node:http straight to the handler) in another process, on the same database.
describe.skipIf(!process.env.DATABASE_URL)('split labels on the production entry (--role=retrieval)', () => {
  let entry: Awaited<ReturnType<typeof startRetrievalEntry>>;
  beforeAll(async () => {
    entry = await startRetrievalEntry({
      RETRIEVAL_LAST_USED_FLUSH_MS: '600000',
      RETRIEVAL_ACTIVITY_FLUSH_MS: '600000',
      RETRIEVAL_RATE_LIMIT_PER_SECOND: '0',
    });
  }, 120_000);
  afterAll(async () => {
    await entry?.stop();
  });

  const overHttp = async (s: Setup, headers: Record<string, string> = {}) => {
    const reply = await fetch(`${entry.url}/api/v1/prompts/${s.promptId}`, {
      headers: { authorization: `Bearer ${s.secret}`, ...headers },
    });
    const text = await reply.text();
    return { status: reply.status, headers: reply.headers, text, body: text ? JSON.parse(text) : null };
  };

  it('the same subject gets the same version on both entries; body, ETag, 304 and 400 as in-process', async () => {
    const s = await retrievalSetup(2);
    const split = [
      { versionId: s.ids[0], weight: 35 },
      { versionId: s.ids[1], weight: 65 },
    ];
    const splitId = await splitLabel(s.owner, s.base, split);
    const seen = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const subject = `shared-${i}`;
      const expected = expectedFor(splitId, split, subject);
      const http = await overHttp(s, { 'promptloop-subject': subject });
      const local = await get(s, subject);
      expect(http.status).toBe(200);
      expect(http.body).toEqual(local.body);
      expect(http.body).toMatchObject({
        versionId: expected.versionId,
        split: { id: splitId, weight: expected.weight },
      });
      expect(http.headers.get('content-length')).toBe(String(Buffer.byteLength(http.text)));
      expect(http.headers.get('etag')).toBe(local.headers.get('etag'));
      expect(http.headers.get('vary')).toBe('Authorization');
      const again = await overHttp(s, { 'promptloop-subject': subject, 'if-none-match': http.headers.get('etag')! });
      expect(again.status).toBe(304);
      seen.add(expected.versionId);
    }
    expect(seen.size).toBe(2);
    // Without a subject: both versions.
    const random = new Set<number>();
    for (let i = 0; i < 40; i++) random.add((await overHttp(s)).body.version);
    expect([...random].sort()).toEqual([1, 2]);
    for (const subject of ['', 'z'.repeat(201)]) {
      const bad = await overHttp(s, { 'promptloop-subject': subject });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details.issues).toEqual([{ path: 'Promptloop-Subject', message: expect.any(String) }]);
    }
    expect((await overHttp(s, { 'promptloop-subject': 'z'.repeat(200) })).status).toBe(200);
    // Characters, not octets: 200 "é" sent as UTF-8 (400 octets) is fine, 201 is not; so is 200 Latin-1 "é".
    const utf8Octets = (text: string) => Buffer.from(text, 'utf8').toString('latin1');
    expect((await overHttp(s, { 'promptloop-subject': utf8Octets('é'.repeat(200)) })).status).toBe(200);
    expect((await overHttp(s, { 'promptloop-subject': utf8Octets('😀'.repeat(200)) })).status).toBe(200);
    expect((await overHttp(s, { 'promptloop-subject': utf8Octets('é'.repeat(201)) })).status).toBe(400);
    expect((await overHttp(s, { 'promptloop-subject': 'é'.repeat(200) })).status).toBe(200);
  });

  it('its counts reach retrieval_split_counts with the shutdown flush', async () => {
    const own = await startRetrievalEntry({
      RETRIEVAL_LAST_USED_FLUSH_MS: '600000',
      RETRIEVAL_ACTIVITY_FLUSH_MS: '600000',
      RETRIEVAL_RATE_LIMIT_PER_SECOND: '0',
    });
    try {
      const s = await retrievalSetup(2);
      const split = [
        { versionId: s.ids[0], weight: 70 },
        { versionId: s.ids[1], weight: 30 },
      ];
      const splitId = await splitLabel(s.owner, s.base, split);
      const expected: Record<string, number> = {};
      for (let i = 0; i < 25; i++) {
        const subject = `flushed-${i}`;
        const reply = await fetch(`${own.url}/api/v1/prompts/${s.promptId}`, {
          headers: { authorization: `Bearer ${s.secret}`, 'promptloop-subject': subject },
        });
        expect(reply.status).toBe(200);
        await reply.arrayBuffer();
        const versionId = expectedFor(splitId, split, subject).versionId;
        expected[versionId] = (expected[versionId] ?? 0) + 1;
      }
      expect(await splitCounts(splitId)).toEqual({});
      expect(await own.stop()).toBe(0);
      expect(await splitCounts(splitId)).toEqual(expected);
    } finally {
      await own.stop();
    }
  }, 120_000);
});

describe('OpenAPI', () => {
  it('documents the Promptloop-Subject header (optional, 1–200 characters) and the optional `split` body field', async () => {
    const { openApiDocument } = await import('@/server/api/router');
    const operation = (openApiDocument() as any).paths['/api/v1/prompts/{promptId}'].get;
    expect(operation.parameters).toContainEqual({
      name: 'Promptloop-Subject',
      in: 'header',
      required: false,
      schema: expect.objectContaining({ type: 'string', minLength: 1, maxLength: 200 }),
    });
    const body = operation.responses['200'].content['application/json'].schema;
    expect(body.required).not.toContain('split');
    expect(body.properties.split).toMatchObject({
      type: 'object',
      required: ['id', 'weight'],
      properties: { id: { type: 'string' }, weight: { type: 'integer', minimum: 1, maximum: 99 } },
    });
    expect(operation.description).toContain('Promptloop-Subject');
  });
});
