import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import {
  InvalidRequestError,
  NetworkError,
  Promptloop,
  TraceExporter,
  newSpanId,
  newTraceId,
  type FetchLike,
  type StaleInfo,
  type TraceExportError,
} from '@/sdk/src/index';
import { newOrganization, newUser, type TestUser } from '../helpers/api';
import { promptWithVersions } from '../helpers/prompts';
import { newRetrievalKey } from '../helpers/retrieval';
import { newIngestionKey, storedSpan } from '../helpers/ingestion';
import { listenForSdk, type SdkListener } from '../helpers/sdk-listener';
import { expectedFor, splitLabel } from '../helpers/splits';

// The SDK's subject (Promptloop-Subject) and per-version span tagging, against the real handlers.
beforeAll(() => getDb().then(() => undefined), 120_000);

let listener: SdkListener;
let owner: TestUser;
let organizationId: string;
let fixture: Awaited<ReturnType<typeof promptWithVersions>>;
let secret: string;

beforeAll(async () => {
  listener = await listenForSdk();
  owner = await newUser();
  organizationId = (await newOrganization(owner)).id;
  fixture = await promptWithVersions(owner, organizationId, 2);
  ({ secret } = await newRetrievalKey(owner.call, fixture.base));
}, 120_000);
afterAll(() => listener.stop());

const since = (count: number) => listener.requests.slice(count);

describe('getPrompt with a subject', () => {
  it('sends Promptloop-Subject, and no such header without a subject', async () => {
    const pl = new Promptloop({ baseUrl: listener.url, apiKey: secret });
    const before = listener.requests.length;
    expect(await pl.getPrompt(fixture.prompt.id, { label: 'production', subject: 'user-1' })).toMatchObject({
      versionId: fixture.ids[0],
      version: 1,
      source: 'server',
    });
    await pl.getPrompt(fixture.prompt.id, { version: 2, subject: 'José' });
    await pl.getPrompt(fixture.prompt.id);
    expect(since(before).map((r) => [r.status, r.headers['promptloop-subject']])).toEqual([
      [200, 'user-1'],
      [200, 'José'],
      [200, undefined],
    ]);
  });

  it('keeps one cached copy per subject: each revalidates with its own ETag, none shares another’s', async () => {
    const pl = new Promptloop({ baseUrl: listener.url, apiKey: secret });
    const before = listener.requests.length;
    const id = fixture.prompt.id;
    expect(await pl.getPrompt(id, { label: 'staging', subject: 'a' })).toMatchObject({ source: 'server' });
    expect(await pl.getPrompt(id, { label: 'staging', subject: 'a' })).toMatchObject({ source: 'revalidated' });
    expect(await pl.getPrompt(id, { label: 'staging', subject: 'b' })).toMatchObject({ source: 'server' });
    expect(await pl.getPrompt(id, { label: 'staging' })).toMatchObject({ source: 'server' });
    expect(await pl.getPrompt(id, { label: 'staging', subject: 'b' })).toMatchObject({ source: 'revalidated' });
    const seen = since(before).map((r) => [r.status, r.headers['promptloop-subject'], r.headers['if-none-match']]);
    const etag = seen[1][2];
    expect(etag).toMatch(/^"/);
    expect(seen).toEqual([
      [200, 'a', undefined],
      [304, 'a', etag],
      [200, 'b', undefined],
      [200, undefined, undefined],
      [304, 'b', etag],
    ]);
    // One snapshot entry per selector, whatever the subjects.
    expect(Object.keys(pl.snapshot().prompts[id])).toEqual(['label:staging']);
    pl.clearCache(id);
    expect(pl.snapshot().prompts).toEqual({});
  });

  it('serves a subject’s own cached copy when the server is down, never another subject’s', async () => {
    let down = false;
    const fetchThrough: FetchLike = (input, init) =>
      down ? Promise.reject(new TypeError('fetch failed')) : fetch(input, init);
    const stale: StaleInfo[] = [];
    const pl = new Promptloop({
      baseUrl: listener.url,
      apiKey: secret,
      fetch: fetchThrough,
      onStale: (info) => stale.push(info),
    });
    await pl.getPrompt(fixture.prompt.id, { version: 2, subject: 'kept' });
    down = true;
    expect(await pl.getPrompt(fixture.prompt.id, { version: 2, subject: 'kept' })).toMatchObject({
      version: 2,
      source: 'stale',
    });
    expect(stale).toMatchObject([{ selector: 'version:2', subject: 'kept', source: 'stale' }]);
    await expect(pl.getPrompt(fixture.prompt.id, { version: 2, subject: 'other' })).rejects.toBeInstanceOf(
      NetworkError,
    );
  });

  it('refuses an invalid subject locally, before any request', async () => {
    const pl = new Promptloop({ baseUrl: listener.url, apiKey: secret });
    const before = listener.requests.length;
    for (const subject of [
      '',
      'x'.repeat(201),
      ' padded',
      'padded ',
      'line\nbreak',
      'tab\there',
      '日本',
      '\u0000',
      42,
    ]) {
      const refused = await pl
        .getPrompt(fixture.prompt.id, { subject } as { subject: string })
        .catch((e: unknown) => e);
      expect(refused, JSON.stringify(subject)).toBeInstanceOf(InvalidRequestError);
      expect(refused).toMatchObject({ status: 0, code: 'invalid_request', details: { issues: [{ path: 'subject' }] } });
    }
    expect(listener.requests.length).toBe(before);
    // The limits themselves are fine.
    expect(await pl.getPrompt(fixture.prompt.id, { subject: 'x'.repeat(200) })).toMatchObject({ version: 1 });
    expect(await pl.getPrompt(fixture.prompt.id, { subject: 'é' })).toMatchObject({ version: 1 });
    expect(since(before).map((r) => r.headers['promptloop-subject'])).toEqual(['x'.repeat(200), 'é']);
  });
});

describe('spans tagged with the Prompt from getPrompt', () => {
  it('export(span, { prompt }) stores the span with the version the call was given', async () => {
    const { secret: ingestionKey } = await newIngestionKey(organizationId);
    const errors: TraceExportError[] = [];
    const exporter = new TraceExporter({ url: listener.url, ingestionKey, onError: (e) => errors.push(e) });
    const pl = new Promptloop({ baseUrl: listener.url, apiKey: secret });
    const prompt = await pl.getPrompt(fixture.prompt.id, { version: 2, subject: 'user-7' });
    const traceId = newTraceId();
    const spanId = newSpanId();
    const startedAt = Date.now() - 500;
    const call = {
      traceId,
      spanId,
      rootSpanId: spanId,
      revision: 0,
      name: 'answer ticket',
      service: 'support-bot',
      kind: 'model',
      status: 'running',
      startedAt,
    } as const;
    exporter.export(call, { prompt });
    exporter.export({ ...call, revision: 1, status: 'success', endedAt: startedAt + 120 }, { prompt });
    // A compiled prompt names its version too.
    const otherId = newSpanId();
    exporter.export(
      {
        ...call,
        traceId: newTraceId(),
        spanId: otherId,
        rootSpanId: otherId,
        status: 'success',
        endedAt: startedAt + 1,
      },
      { prompt: prompt.compile({ input: 'hi' }) },
    );
    // A span naming another version than the prompt it is exported with is refused, not guessed.
    exporter.export({ ...call, spanId: newSpanId(), promptVersionId: fixture.ids[0] }, { prompt });
    expect(await exporter.shutdown()).toBe(true);
    expect(errors, JSON.stringify(errors)).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'invalid_span' });
    expect(await storedSpan(organizationId, spanId)).toMatchObject({
      promptVersionId: fixture.ids[1],
      revision: 1,
      status: 'success',
    });
    expect((await storedSpan(organizationId, otherId))?.promptVersionId).toBe(fixture.ids[1]);
  });
});

describe('a split that starts and ends under a cached copy', () => {
  it('a copy revalidated by a 304 reports the split it is served from, and none once the split has ended', async () => {
    const [v1, v2] = fixture.ids;
    await owner.call('PUT', `${fixture.base}/labels/beta`, { body: { versionId: v1 } });
    const pl = new Promptloop({ baseUrl: listener.url, apiKey: secret });
    const subjects = Array.from({ length: 20 }, (_, i) => `beta-${i}`);
    for (const subject of subjects)
      expect((await pl.getPrompt(fixture.prompt.id, { label: 'beta', subject })).split).toBeUndefined();

    const split = [
      { versionId: v1, weight: 40 },
      { versionId: v2, weight: 60 },
    ];
    const splitId = await splitLabel(owner, fixture.base, split, 'beta');
    const onV1 = subjects.find((subject) => expectedFor(splitId, split, subject).versionId === v1)!;
    const during = await pl.getPrompt(fixture.prompt.id, { label: 'beta', subject: onV1 });
    expect(during).toMatchObject({ versionId: v1, source: 'revalidated', split: { id: splitId, weight: 40 } });

    // The split ends on version 1: the same copy is still good (304), and no longer split.
    await owner.call('PUT', `${fixture.base}/labels/beta`, { body: { versionId: v1 } });
    const after = await pl.getPrompt(fixture.prompt.id, { label: 'beta', subject: onV1 });
    expect(after).toMatchObject({ versionId: v1, source: 'revalidated' });
    expect(after.split).toBeUndefined();
    expect(during.split).toEqual({ id: splitId, weight: 40 }); // a Prompt already returned does not change
  });
});

describe('a sticky split, end to end', () => {
  it('each subject keeps its version; spans exported with its Prompt are counted for that version', async () => {
    const [v1, v2] = fixture.ids;
    const split = [
      { versionId: v1, weight: 30 },
      { versionId: v2, weight: 70 },
    ];
    const splitId = await splitLabel(owner, fixture.base, split, 'canary');
    const { secret: ingestionKey } = await newIngestionKey(organizationId);
    const errors: TraceExportError[] = [];
    const pl = new Promptloop({
      baseUrl: listener.url,
      apiKey: secret,
      ingestionKey,
      traces: { onError: (e) => errors.push(e) },
    });
    // Another process (its own cache): the same subject gets the same version there too.
    const elsewhere = new Promptloop({ baseUrl: listener.url, apiKey: secret });
    // Four subjects per version, found by the contract's hash rule.
    const subjects: string[] = [];
    for (const { versionId } of split)
      for (let i = 0, found = 0; found < 4; i++) {
        if (expectedFor(splitId, split, `user-${i}`).versionId !== versionId) continue;
        subjects.push(`user-${i}`);
        found++;
      }
    const retrievals = new Map([
      [v1, 0],
      [v2, 0],
    ]);
    const latencies = new Map<string, number[]>([
      [v1, []],
      [v2, []],
    ]);
    for (const [n, subject] of subjects.entries()) {
      const { versionId, weight } = expectedFor(splitId, split, subject);
      const first = await pl.getPrompt(fixture.prompt.id, { label: 'canary', subject });
      expect(first).toMatchObject({ versionId, version: fixture.ids.indexOf(versionId) + 1, source: 'server' });
      expect(first.split).toEqual({ id: splitId, weight });
      const again = await pl.getPrompt(fixture.prompt.id, { label: 'canary', subject });
      expect(again).toMatchObject({ versionId, source: 'revalidated', split: { id: splitId, weight } });
      expect(await elsewhere.getPrompt(fixture.prompt.id, { label: 'canary', subject })).toMatchObject({ versionId });
      retrievals.set(versionId, retrievals.get(versionId)! + 3);

      // The call made with this prompt, tagged with it.
      const spanId = newSpanId();
      const startedAt = Date.now(); // after the split began: the default window is the split's life
      const latency = 10 * (n + 1);
      latencies.get(versionId)!.push(latency);
      pl.traces.export(
        {
          traceId: newTraceId(),
          spanId,
          rootSpanId: spanId,
          revision: 0,
          name: 'answer',
          service: 'support-bot',
          kind: 'model',
          status: n % 4 === 0 ? 'error' : 'success',
          startedAt,
          endedAt: startedAt + latency,
          inputTokens: 100,
          outputTokens: 10,
        },
        { prompt: again },
      );
    }
    expect(await pl.traces.flush()).toBe(true);
    expect(errors).toEqual([]);

    const stats = await owner.call('GET', `${fixture.base}/labels/canary/split-stats`);
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({ splitId, versions: [{ versionId: v1 }, { versionId: v2 }] });
    for (const [index, versionId] of [v1, v2].entries()) {
      const sorted = [...latencies.get(versionId)!].sort((a, b) => a - b);
      expect(stats.body.versions[index]).toMatchObject({
        weight: split[index].weight,
        retrievals: retrievals.get(versionId),
        spans: 4,
        errorRate: 1 / 4, // the first span of each version is an error
        p50LatencyMs: sorted[1],
        p95LatencyMs: sorted[3],
        inputTokens: 400,
        outputTokens: 40,
      });
    }
  });
});
