import { beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { call, newOrganization, newTeam, newUser, type TestUser } from '../helpers/api';
import { batch, newIngestionKey, span } from '../helpers/ingestion';
import { promptWithVersions } from '../helpers/prompts';
import { newRetrievalKey, retrieve } from '../helpers/retrieval';
import { expectedFor } from '../helpers/splits';

// GET …/labels/{label}/split-stats from spans ingested through the ingestion API (API.md "Safe releases").
beforeAll(() => getDb().then(() => undefined), 120_000);

const base = Date.now() - 3_600_000; // an hour ago: a window well before the split began
const from = base;
const to = base + 100_000;

type SpanOptions = { status?: string; kind?: string; tokens?: [number, number]; cost?: number };

// A finished (or running) span of a call made with `versionId`, started at `startedAt`, lasting `latency` ms.
function callSpan(versionId: string, startedAt: number, latency: number, options: SpanOptions = {}) {
  const status = options.status ?? 'success';
  return span({
    kind: options.kind ?? 'model',
    status,
    startedAt,
    endedAt: status === 'running' ? undefined : startedAt + latency,
    promptVersionId: versionId,
    inputTokens: options.tokens?.[0],
    outputTokens: options.tokens?.[1],
    ...(options.cost !== undefined ? { costUsdNanos: options.cost, costSource: 'provider_reported' } : {}),
  });
}

async function ingest(secret: string, events: Record<string, unknown>[]): Promise<void> {
  const sent = await call('POST', '/traces', { token: secret, body: batch(...events) });
  if (sent.status !== 200) throw new Error(`ingestion failed: ${sent.status} ${JSON.stringify(sent.body)}`);
}

// Nearest rank (1-based ceil(p·n)) of the sorted values, for the expectations.
function nearestRank(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(p * sorted.length)) - 1];
}

let team: Awaited<ReturnType<typeof newTeam>>;
let fixture: Awaited<ReturnType<typeof promptWithVersions>>;
let secret: string;
let splitBody: { id: string; since: string };
let split: { versionId: string; weight: number }[];

const stats = (user: TestUser, label: string, query?: string) =>
  user.call('GET', `${fixture.base}/labels/${label}/split-stats`, { query });

beforeAll(async () => {
  team = await newTeam();
  fixture = await promptWithVersions(team.admin, team.org.id, 3);
  ({ secret } = await newIngestionKey(team.org.id));
  split = [
    { versionId: fixture.ids[1], weight: 30 },
    { versionId: fixture.ids[0], weight: 70 },
  ];
  const moved = await team.admin.call('PUT', `${fixture.base}/labels/canary`, { body: { split } });
  if (moved.status !== 200) throw new Error(JSON.stringify(moved.body));
  const listed = await team.admin.call('GET', `${fixture.base}/labels`);
  const canary = listed.body.items.find((item: { label: string }) => item.label === 'canary');
  splitBody = { id: canary.splitId, since: canary.updatedAt };
}, 120_000);

describe('split stats: figures', () => {
  it('counts the finished model spans of each version within [from, to], in the split’s order', async () => {
    const [v1, v2, v3] = fixture.ids;
    // v1: six counted spans (both bounds included), one of them an error, one cancelled.
    const v1Latencies = [50, 10, 40, 20, 60, 30];
    const v1Spans = [
      callSpan(v1, from, 50, { tokens: [100, 10], cost: 1_000 }),
      callSpan(v1, from + 1_000, 10, { tokens: [200, 20], cost: 2_000 }),
      callSpan(v1, from + 2_000, 40, { status: 'error', tokens: [300, 30] }),
      callSpan(v1, from + 3_000, 20, { status: 'cancelled' }),
      callSpan(v1, from + 4_000, 60, { tokens: [1, 2], cost: 3 }),
      callSpan(v1, to, 30),
    ];
    // v2: twenty spans of 5, 10, …, 100 ms, three of them errors.
    const v2Latencies = Array.from({ length: 20 }, (_, i) => (i + 1) * 5);
    const v2Spans = v2Latencies.map((latency, i) =>
      callSpan(v2, from + 10_000 + i, latency, {
        status: i % 7 === 0 ? 'error' : 'success',
        tokens: [i, 2 * i],
        cost: 10 * i,
      }),
    );
    const leftOut = [
      callSpan(v1, from + 5_000, 0, { status: 'running' }), // still running
      callSpan(v1, from - 1, 5), // before from
      callSpan(v1, to + 1, 5), // after to
      callSpan(v1, from + 6_000, 999, { kind: 'tool' }), // not a model span
      callSpan(v1, from + 7_000, 999, { kind: 'execution', status: 'error' }),
      callSpan(v3, from + 8_000, 999, { status: 'error' }), // a version outside the split
      span({ kind: 'model', status: 'success', startedAt: from + 9_000, endedAt: from + 9_999 }), // no version
    ];
    await ingest(secret, [...v1Spans, ...v2Spans, ...leftOut]);
    // The same versions' ids in another organization, and another prompt's version here.
    const stranger = await newUser();
    const elsewhere = await newOrganization(stranger);
    const { secret: strangerSecret } = await newIngestionKey(elsewhere.id);
    await ingest(strangerSecret, [callSpan(v1, from + 1, 999, { status: 'error' }), callSpan(v2, from + 2, 999)]);
    const other = await promptWithVersions(team.admin, team.org.id, 1);
    await ingest(secret, [callSpan(other.ids[0], from + 3, 999, { status: 'error' })]);

    const result = await stats(team.viewer, 'canary', `from=${from}&to=${to}`);
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(result.body).toEqual({
      splitId: splitBody.id,
      since: splitBody.since,
      versions: [
        {
          versionId: v2,
          version: 2,
          weight: 30,
          retrievals: 0,
          spans: 20,
          errorRate: 3 / 20,
          p50LatencyMs: nearestRank(v2Latencies, 0.5),
          p95LatencyMs: nearestRank(v2Latencies, 0.95),
          inputTokens: 190,
          outputTokens: 380,
          costUsdNanos: 1_900,
          onlineScore: { scored: 0, passed: 0, meanScore: null },
        },
        {
          versionId: v1,
          version: 1,
          weight: 70,
          retrievals: 0,
          spans: 6,
          errorRate: 1 / 6,
          p50LatencyMs: nearestRank(v1Latencies, 0.5),
          p95LatencyMs: nearestRank(v1Latencies, 0.95),
          inputTokens: 601,
          outputTokens: 62,
          costUsdNanos: 3_003,
          onlineScore: { scored: 0, passed: 0, meanScore: null },
        },
      ],
    });
    // Nearest rank, not interpolation: 3rd of 6 and 19th of 20.
    expect(result.body.versions[1]).toMatchObject({ p50LatencyMs: 30, p95LatencyMs: 60 });
    expect(result.body.versions[0]).toMatchObject({ p50LatencyMs: 50, p95LatencyMs: 95 });

    // A narrower window: only v1's span at `to`.
    const narrow = await stats(team.viewer, 'canary', `from=${to}&to=${to}`);
    expect(narrow.body.versions[1]).toMatchObject({ spans: 1, errorRate: 0, p50LatencyMs: 30, p95LatencyMs: 30 });
    expect(narrow.body.versions[0]).toMatchObject({
      spans: 0,
      errorRate: 0,
      p50LatencyMs: null,
      p95LatencyMs: null,
      inputTokens: 0,
      outputTokens: 0,
      costUsdNanos: 0,
    });
  });

  it('defaults to the split’s life: spans from before the split began are left out', async () => {
    const [v1, v2] = fixture.ids;
    const since = Date.parse(splitBody.since);
    await ingest(secret, [
      callSpan(v1, since - 1, 7, { tokens: [5, 5] }),
      callSpan(v1, since, 11, { tokens: [1, 1] }),
      callSpan(v2, since + 1, 13, { status: 'error' }),
    ]);
    const result = await stats(team.editor, 'canary');
    expect(result.status).toBe(200);
    expect(result.body.since).toBe(splitBody.since);
    expect(result.body.versions.map((v: { spans: number }) => v.spans)).toEqual([1, 1]);
    expect(result.body.versions[0]).toMatchObject({ errorRate: 1, p50LatencyMs: 13, p95LatencyMs: 13 });
    expect(result.body.versions[1]).toMatchObject({ errorRate: 0, p50LatencyMs: 11, inputTokens: 1, outputTokens: 1 });
    // `to` alone keeps `from` at the split's start; `from` alone runs to now.
    const upToSince = await stats(team.viewer, 'canary', `to=${since}`);
    expect(upToSince.body.versions.map((v: { spans: number }) => v.spans)).toEqual([0, 1]);
    const fromBefore = await stats(team.viewer, 'canary', `from=${since - 1}`);
    expect(fromBefore.body.versions.map((v: { spans: number }) => v.spans)).toEqual([1, 2]);
  });
});

describe('split stats: retrievals', () => {
  it('counts the retrievals (200 and 304) that chose each version, within the window’s minutes', async () => {
    const { secret: retrievalSecret } = await newRetrievalKey(team.admin.call, fixture.base);
    const expected = new Map(fixture.ids.map((id) => [id, 0]));
    // Five subjects that the split sends to each version (found by the contract's hash rule).
    const subjects: string[] = [];
    for (const { versionId } of split) {
      for (let i = 0, found = 0; found < 5; i++) {
        if (expectedFor(splitBody.id, split, `subject-${i}`).versionId !== versionId) continue;
        subjects.push(`subject-${i}`);
        found++;
      }
    }
    for (const subject of subjects) {
      const headers = { 'promptloop-subject': subject };
      const first = await retrieve(fixture.prompt.id, retrievalSecret, { query: 'label=canary', headers });
      expect(first.status).toBe(200);
      expect(first.body.versionId).toBe(expectedFor(splitBody.id, split, subject).versionId);
      const again = await retrieve(fixture.prompt.id, retrievalSecret, {
        query: 'label=canary',
        headers: { ...headers, 'if-none-match': first.headers.get('etag')! },
      });
      expect(again.status).toBe(304);
      expected.set(first.body.versionId, expected.get(first.body.versionId)! + 2);
    }
    // Not counted: a version number, an unsplit label, a refusal.
    await retrieve(fixture.prompt.id, retrievalSecret, { query: 'version=2' });
    await retrieve(fixture.prompt.id, retrievalSecret, { query: 'label=staging' });
    await retrieve(fixture.prompt.id, retrievalSecret, {
      query: 'label=canary',
      headers: { 'promptloop-subject': '' },
    });

    // Read at once, without waiting for the activity flush.
    const result = await stats(team.viewer, 'canary');
    expect(result.status).toBe(200);
    expect(result.body.versions.map((v: { retrievals: number }) => v.retrievals)).toEqual([
      expected.get(fixture.ids[1]),
      expected.get(fixture.ids[0]),
    ]);
    expect([expected.get(fixture.ids[1]), expected.get(fixture.ids[0])]).toEqual([10, 10]);
    // The retrievals happened this minute: a window that ends an hour ago has none; one up to now has all.
    const old = await stats(team.viewer, 'canary', `from=${from}&to=${to}`);
    expect(old.body.versions.map((v: { retrievals: number }) => v.retrievals)).toEqual([0, 0]);
    // A window that ends just before the split began has none, even within the split's first minute.
    const justBefore = Date.parse(splitBody.since) - 1;
    const before = await stats(team.viewer, 'canary', `from=${justBefore - 1}&to=${justBefore}`);
    expect(before.body.versions.map((v: { retrievals: number }) => v.retrievals)).toEqual([0, 0]);
    const upToNow = await stats(team.viewer, 'canary', `from=${Date.parse(splitBody.since)}&to=${Date.now()}`);
    expect(upToNow.body.versions.map((v: { retrievals: number }) => v.retrievals)).toEqual(
      result.body.versions.map((v: { retrievals: number }) => v.retrievals),
    );
  });
});

describe('split stats: refusals', () => {
  it('a label pointing at one version is 409 invalid_state (no_split); an unknown label 404', async () => {
    const single = await stats(team.viewer, 'staging');
    expect(single.status).toBe(409);
    expect(single.body.error).toMatchObject({ code: 'invalid_state', details: { state: 'no_split' } });
    const unknown = await stats(team.viewer, 'nowhere');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
    const badName = await stats(team.viewer, 'Not_A_Label');
    expect(badName.status).toBe(400);
  });

  it('validates the query: from after to, unknown, duplicated, empty or non-integer parameters are 400', async () => {
    for (const query of [
      `from=${to}&to=${from}`,
      'since=1',
      'from=1&from=2',
      'from=',
      'from=1.5',
      'to=-1',
      'from=abc',
      `to=${8.64e15 + 1}`,
    ]) {
      const result = await stats(team.viewer, 'canary', query);
      expect(result.status, query).toBe(400);
      expect(result.body.error.code, query).toBe('invalid_request');
    }
    expect((await stats(team.viewer, 'canary', `from=${from}&to=${from}`)).status).toBe(200);
  });

  it('every member may read; a non-member, another organization’s prompt and an unknown prompt are 404', async () => {
    for (const user of [team.admin, team.editor, team.viewer]) expect((await stats(user, 'canary')).status).toBe(200);
    const outsider = await newUser();
    const asOutsider = await stats(outsider, 'canary');
    expect(asOutsider.status).toBe(404);
    // The outsider's own organization, naming this organization's prompt.
    const theirs = await newOrganization(outsider);
    const crossed = await outsider.call(
      'GET',
      `/organizations/${theirs.id}/prompts/${fixture.prompt.id}/labels/canary/split-stats`,
    );
    expect(crossed.status).toBe(404);
    expect(crossed.body.error.code).toBe('not_found');
    const unknownPrompt = await team.viewer.call(
      'GET',
      `/organizations/${team.org.id}/prompts/prm_doesnotexist/labels/canary/split-stats`,
    );
    expect(unknownPrompt.status).toBe(404);
    expect((await call('GET', `${fixture.base}/labels/canary/split-stats`)).status).toBe(401);
  });

  it('a split that ended is no_split; a new split has its own id and start', async () => {
    const own = await promptWithVersions(team.admin, team.org.id, 2);
    const path = `${own.base}/labels/production`;
    const split = {
      split: [
        { versionId: own.ids[0], weight: 50 },
        { versionId: own.ids[1], weight: 50 },
      ],
    };
    expect((await team.admin.call('PUT', path, { body: split })).status).toBe(200);
    const first = await team.viewer.call('GET', `${path}/split-stats`);
    expect(first.status).toBe(200);
    expect((await team.admin.call('PUT', path, { body: { versionId: own.ids[1] } })).status).toBe(200);
    const ended = await team.viewer.call('GET', `${path}/split-stats`);
    expect(ended.status).toBe(409);
    expect(ended.body.error.details.state).toBe('no_split');
    expect((await team.admin.call('PUT', path, { body: split })).status).toBe(200);
    const again = await team.viewer.call('GET', `${path}/split-stats`);
    expect(again.status).toBe(200);
    expect(again.body.splitId).not.toBe(first.body.splitId);
    expect(Date.parse(again.body.since)).toBeGreaterThanOrEqual(Date.parse(first.body.since));
  });
});
