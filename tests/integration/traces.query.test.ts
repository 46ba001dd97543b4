import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { spans } from '@/db/schema';
import { createCaller } from '@/server/trpc/root';
import { createTrpcContext } from '@/server/trpc/init';
import { versionHref } from '@/components/traces/format';
import { call, newOrganization, newTeam, newUser } from '../helpers/api';
import { promptWithVersions } from '../helpers/prompts';
import { caller, rejection } from '../helpers/trpc';

type SpanInsert = typeof spans.$inferInsert;

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const t0 = 1_760_000_000_000;

// The day a trace first stored today is kept until with `days` of retention.
const keepUntil = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

// Stored snapshots as the ingestion endpoint leaves them (spans and their traces' summaries); tests
// write the spans directly and have the summaries computed from them.
async function insertSpans(organizationId: string, rows: Partial<SpanInsert>[]) {
  const values = rows.map((row) => ({
    organizationId,
    traceId: hex(16),
    spanId: hex(8),
    rootSpanId: row.spanId ?? hex(8),
    revision: 1,
    name: 'span',
    service: 'api',
    kind: 'custom',
    status: 'success',
    startedAt: t0,
    endedAt: t0 + 10,
    snapshotDigest: hex(32),
    ingestionKeyId: 'ikey_test',
    application: 'checkout',
    environment: 'production',
    keepUntil: keepUntil(30),
    ...row,
  })) as SpanInsert[];
  const db = await getDb();
  await db.insert(spans).values(values);
  const traceIds = [...new Set(values.map((value) => value.traceId))];
  await db.execute(
    sql`select recompute_trace_summaries(${organizationId}, string_to_array(${traceIds.join(',')}, ','))`,
  );
}

// A root with two children (one model call) in one trace.
async function insertTrace(
  organizationId: string,
  options: {
    startedAt?: number;
    service?: string;
    status?: string;
    sessionId?: string;
    endUserId?: string;
    name?: string;
  } = {},
) {
  const traceId = hex(16);
  const root = hex(8);
  const start = options.startedAt ?? t0;
  await insertSpans(organizationId, [
    {
      traceId,
      spanId: root,
      rootSpanId: root,
      name: options.name ?? 'handle request',
      service: options.service ?? 'api',
      kind: 'execution',
      status: options.status ?? 'success',
      startedAt: start,
      endedAt: start + 1000,
      sessionId: options.sessionId,
      endUserId: options.endUserId,
    },
    {
      traceId,
      spanId: hex(8),
      rootSpanId: root,
      parentSpanId: root,
      name: 'llm',
      kind: 'model',
      status: 'success',
      startedAt: start + 100,
      endedAt: start + 900,
      inputTokens: 120,
      outputTokens: 30,
      costUsdNanos: 1_500_000,
      costSource: 'provider_reported',
      provider: 'openai',
      model: 'gpt-x',
    },
    {
      traceId,
      spanId: hex(8),
      rootSpanId: root,
      parentSpanId: root,
      name: 'lookup',
      kind: 'tool',
      status: 'success',
      startedAt: start + 50,
      endedAt: start + 80,
      inputTokens: 5,
    },
  ]);
  return { traceId, rootSpanId: root };
}

function expectError(result: { status: number; body: any }, status: number, code: string) {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.body.error.code).toBe(code);
}

describe('trace list', () => {
  it('summarises each trace from its root and aggregates over all spans', async () => {
    const { org, viewer } = await newTeam();
    const { traceId, rootSpanId } = await insertTrace(org.id, { sessionId: 'sess-1', endUserId: 'user-9' });
    const list = await viewer.call('GET', `/organizations/${org.id}/traces`);
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    expect(list.body).toEqual({
      items: [
        {
          traceId,
          rootSpanId,
          name: 'handle request',
          service: 'api',
          status: 'success',
          startedAt: t0,
          endedAt: t0 + 1000,
          durationMs: 1000,
          spanCount: 3,
          inputTokens: 125,
          outputTokens: 30,
          costUsdNanos: 1_500_000,
          sessionId: 'sess-1',
          endUserId: 'user-9',
        },
      ],
      nextCursor: null,
    });
  });

  it('lists a trace whose root has not arrived, from its earliest span; running spans leave it open', async () => {
    const { org, admin } = await newTeam();
    const traceId = hex(16);
    const root = hex(8);
    await insertSpans(org.id, [
      {
        traceId,
        rootSpanId: root,
        parentSpanId: root,
        name: 'second',
        startedAt: t0 + 20,
        status: 'running',
        endedAt: null,
      },
      {
        traceId,
        rootSpanId: root,
        parentSpanId: root,
        name: 'first',
        service: 'worker',
        startedAt: t0 + 10,
        endedAt: t0 + 15,
        sessionId: 's-child',
      },
    ]);
    const [item] = (await admin.call('GET', `/organizations/${org.id}/traces`)).body.items;
    expect(item).toMatchObject({
      traceId,
      rootSpanId: root,
      name: 'first',
      service: 'worker',
      startedAt: t0 + 10,
      endedAt: null,
      durationMs: null,
      spanCount: 2,
      inputTokens: null,
      outputTokens: null,
      costUsdNanos: null,
      sessionId: 's-child',
    });
  });

  it('orders newest first and pages with a keyset cursor, ties broken by trace id', async () => {
    const { org, admin } = await newTeam();
    const traces = [];
    for (let i = 0; i < 5; i++) traces.push(await insertTrace(org.id, { startedAt: t0 + i * 1000 }));
    const tie = await insertTrace(org.id, { startedAt: t0 + 4000 });
    const expected = [
      ...traces
        .slice(0, 4)
        .map((t) => t.traceId)
        .reverse(),
    ];
    const top = [traces[4].traceId, tie.traceId].sort().reverse();
    const all = [...top, ...expected];

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await admin.call('GET', `/organizations/${org.id}/traces`, {
        query: `limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      });
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((t: any) => t.traceId));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all);
  });

  it('pages through filtered lists (head filters and time range) without gaps or repeats', async () => {
    const { org, admin } = await newTeam();
    const api: string[] = [];
    for (let i = 0; i < 7; i++) {
      const { traceId } = await insertTrace(org.id, { startedAt: t0 + i * 100, service: i % 2 ? 'worker' : 'api' });
      if (i % 2 === 0) api.push(traceId);
    }
    const collect = async (query: string) => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: any = await admin.call('GET', `/organizations/${org.id}/traces`, {
          query: `limit=2&${query}${cursor ? `&cursor=${cursor}` : ''}`,
        });
        expect(page.status, JSON.stringify(page.body)).toBe(200);
        seen.push(...page.body.items.map((t: any) => t.traceId));
        cursor = page.body.nextCursor;
      } while (cursor);
      return seen;
    };
    expect(await collect('service=api')).toEqual([...api].reverse());
    expect(await collect(`from=${t0 + 200}&kind=model`)).toHaveLength(5);
  });

  it('filters by service, status, kind, time range, session and end user', async () => {
    const { org, admin } = await newTeam();
    const a = await insertTrace(org.id, {
      service: 'api',
      status: 'success',
      startedAt: t0,
      sessionId: 's1',
      endUserId: 'u1',
    });
    const b = await insertTrace(org.id, {
      service: 'worker',
      status: 'error',
      startedAt: t0 + 5000,
      sessionId: 's2',
      endUserId: 'u2',
    });
    const cTrace = hex(16);
    const cRoot = hex(8);
    await insertSpans(org.id, [
      {
        traceId: cTrace,
        spanId: cRoot,
        rootSpanId: cRoot,
        service: 'api',
        kind: 'retrieval',
        status: 'running',
        endedAt: null,
        startedAt: t0 + 10_000,
      },
    ]);
    const ids = async (query: string) => {
      const result = await admin.call('GET', `/organizations/${org.id}/traces`, { query });
      expect(result.status, JSON.stringify(result.body)).toBe(200);
      return result.body.items.map((t: any) => t.traceId);
    };
    expect(await ids('service=api')).toEqual([cTrace, a.traceId]);
    expect(await ids('service=worker')).toEqual([b.traceId]);
    expect(await ids('status=error')).toEqual([b.traceId]);
    expect(await ids('status=running')).toEqual([cTrace]);
    expect(await ids('kind=model')).toEqual([b.traceId, a.traceId]);
    expect(await ids('kind=retrieval')).toEqual([cTrace]);
    expect(await ids('kind=attempt')).toEqual([]);
    expect(await ids(`from=${t0 + 1}`)).toEqual([cTrace, b.traceId]);
    expect(await ids(`to=${t0 + 5000}`)).toEqual([b.traceId, a.traceId]);
    expect(await ids(`from=${t0 + 5000}&to=${t0 + 5000}`)).toEqual([b.traceId]);
    expect(await ids('sessionId=s1')).toEqual([a.traceId]);
    expect(await ids('endUserId=u2')).toEqual([b.traceId]);
    expect(await ids('service=api&kind=model')).toEqual([a.traceId]);
    expect(await ids('service=api&status=error')).toEqual([]);
  });

  it('never shows another organization’s traces, and outsiders get 404', async () => {
    const { org, admin } = await newTeam();
    const other = await newOrganization(admin);
    await insertTrace(other.id);
    expect((await admin.call('GET', `/organizations/${org.id}/traces`)).body.items).toEqual([]);
    const outsider = await newUser();
    expectError(await outsider.call('GET', `/organizations/${other.id}/traces`), 404, 'not_found');
  });

  it.each([
    'limit=0',
    'limit=101',
    'limit=x',
    'cursor=nope',
    `cursor=${Buffer.from(JSON.stringify(['abc', 'x'])).toString('base64url')}`,
    `cursor=${Buffer.from(JSON.stringify([1.5, 'x'])).toString('base64url')}`,
    `cursor=${Buffer.from(JSON.stringify([1, 2])).toString('base64url')}`,
    `cursor=${Buffer.from(JSON.stringify([1])).toString('base64url')}`,
    'status=done',
    'kind=llm',
    'from=-1',
    'from=1.5',
    'to=abc',
    `from=${t0 + 1}&to=${t0}`,
    'service=',
    `service=${'x'.repeat(101)}`,
    'service=a&service=b',
    'traceId=abc',
  ])('list with %s → 400 invalid_request', async (query) => {
    const { org, admin } = await newTeam();
    expectError(await admin.call('GET', `/organizations/${org.id}/traces`, { query }), 400, 'invalid_request');
  });

  it('a value that fails two checks saying the same thing is one issue', async () => {
    const { org, admin } = await newTeam();
    const refused = await admin.call('GET', `/organizations/${org.id}/traces`, { query: 'to=9999999999999999' });
    expectError(refused, 400, 'invalid_request');
    expect(refused.body.error.details.issues).toEqual([{ path: 'to', message: expect.any(String) }]);
  });
});

describe('get trace', () => {
  it('returns every span with all stored fields, in start order; viewers may read', async () => {
    const { org, viewer } = await newTeam();
    const traceId = hex(16);
    const root = hex(8);
    const child = hex(8);
    await insertSpans(org.id, [
      {
        traceId,
        spanId: child,
        rootSpanId: root,
        parentSpanId: root,
        revision: 3,
        name: 'chat completion',
        service: 'api',
        kind: 'model',
        status: 'error',
        startedAt: t0 + 5,
        endedAt: t0 + 50,
        sessionId: 's',
        endUserId: 'u',
        provider: 'anthropic',
        model: 'claude',
        promptVersionId: 'ver_1',
        pricingVersion: '2026-01',
        inputTokens: 10,
        outputTokens: 0,
        costUsdNanos: 42,
        costSource: 'catalog_estimate',
        contentJson: '{"input":[{"role":"user","content":"hi"}]}',
        metadataJson: '{"region":"eu"}',
        omitted: ['output'],
      },
      {
        traceId,
        spanId: root,
        rootSpanId: root,
        name: 'root',
        kind: 'execution',
        status: 'running',
        startedAt: t0,
        endedAt: null,
      },
    ]);
    const result = await viewer.call('GET', `/organizations/${org.id}/traces/${traceId}`);
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(result.body.traceId).toBe(traceId);
    expect(result.body.spans.map((s: any) => s.spanId)).toEqual([root, child]);
    expect(result.body.spans[1]).toEqual({
      traceId,
      spanId: child,
      rootSpanId: root,
      parentSpanId: root,
      revision: 3,
      name: 'chat completion',
      service: 'api',
      kind: 'model',
      status: 'error',
      startedAt: t0 + 5,
      endedAt: t0 + 50,
      sessionId: 's',
      endUserId: 'u',
      provider: 'anthropic',
      model: 'claude',
      promptVersionId: 'ver_1',
      pricingVersion: '2026-01',
      inputTokens: 10,
      outputTokens: 0,
      costUsdNanos: 42,
      costSource: 'catalog_estimate',
      contentJson: '{"input":[{"role":"user","content":"hi"}]}',
      metadataJson: '{"region":"eu"}',
      omitted: ['output'],
      application: 'checkout',
      environment: 'production',
      // Present on every span; null until online evaluation scores it (M11).
      onlineScore: null,
    });
    expect(result.body.spans[0]).toMatchObject({
      parentSpanId: null,
      endedAt: null,
      status: 'running',
      omitted: [],
      costSource: null,
    });
  });

  it('unknown, malformed and other organizations’ trace ids → 404', async () => {
    const { org, admin } = await newTeam();
    const other = await newOrganization(admin);
    const { traceId } = await insertTrace(other.id);
    expectError(await admin.call('GET', `/organizations/${org.id}/traces/${traceId}`), 404, 'not_found');
    expectError(await admin.call('GET', `/organizations/${org.id}/traces/${hex(16)}`), 404, 'not_found');
    expectError(await admin.call('GET', `/organizations/${org.id}/traces/NOT-HEX`), 404, 'not_found');
    expectError(await admin.call('GET', `/organizations/${org.id}/traces/${traceId.toUpperCase()}`), 404, 'not_found');
    const outsider = await newUser();
    expectError(await outsider.call('GET', `/organizations/${other.id}/traces/${traceId}`), 404, 'not_found');
  });

  it('is served over tRPC to the dashboard with the same shape', async () => {
    const { org, viewer } = await newTeam();
    const { traceId } = await insertTrace(org.id);
    const caller = createCaller(
      await createTrpcContext({ actor: { userId: viewer.id, clientId: 'dashboard', human: true } }),
    );
    const list = await caller.traces.list({ organizationId: org.id, limit: 10, kind: 'model' });
    expect(list.items.map((t) => t.traceId)).toEqual([traceId]);
    const trace = await caller.traces.get({ organizationId: org.id, traceId });
    expect(trace.spans).toHaveLength(3);
    const rest = await viewer.call('GET', `/organizations/${org.id}/traces/${traceId}`);
    expect(rest.body).toEqual(trace);
  });
});

describe('a span’s prompt version', () => {
  it('resolves to its prompt and number for the dashboard’s link, only within the organization', async () => {
    const { org, admin, viewer } = await newTeam();
    const versions = await promptWithVersions(admin, org.id, 2);
    const other = await newOrganization(admin);
    const foreign = await promptWithVersions(admin, other.id, 1);
    const asViewer = await caller(viewer.id);
    expect(await asViewer.traces.promptVersion({ organizationId: org.id, versionId: versions.ids[1] })).toEqual({
      promptId: versions.prompt.id,
      promptName: 'Support answers',
      version: 2,
    });
    // Whatever an application sent that is not one of this organization's versions links nowhere.
    expect(await asViewer.traces.promptVersion({ organizationId: org.id, versionId: foreign.ids[0] })).toBeNull();
    expect(await asViewer.traces.promptVersion({ organizationId: org.id, versionId: 'v1.2-from-my-app' })).toBeNull();
    // Outsiders learn nothing; malformed input is a 400.
    const outsider = await caller((await newUser()).id);
    expect(
      (await rejection(outsider.traces.promptVersion({ organizationId: org.id, versionId: versions.ids[0] }))).code,
    ).toBe('NOT_FOUND');
    expect((await rejection(asViewer.traces.promptVersion({ organizationId: org.id, versionId: '' }))).code).toBe(
      'BAD_REQUEST',
    );
    expect(
      (await rejection(asViewer.traces.promptVersion({ organizationId: org.id, versionId: 'x'.repeat(101) }))).code,
    ).toBe('BAD_REQUEST');
  });

  it('links to that version on the versions page (never a comparison of a version with itself)', () => {
    expect(versionHref('org_1', 'prm_1', 3)).toBe('/organizations/org_1/prompts/prm_1/versions?version=3');
    expect(versionHref('org_1', 'prm_1', 1)).toBe('/organizations/org_1/prompts/prm_1/versions?version=1');
  });
});

describe('traces sent through the ingestion endpoint', () => {
  it('a batch posted with a key created over the API lists with the key’s application and environment', async () => {
    const { org, admin, viewer } = await newTeam();
    const created = await admin.call('POST', `/organizations/${org.id}/ingestion-keys`, {
      body: { name: 'k', application: 'shop', environment: 'staging' },
    });
    const traceId = hex(16);
    const root = hex(8);
    const now = Date.now();
    const sent = await call('POST', '/traces', {
      headers: { authorization: `Bearer ${created.body.secret}` },
      body: {
        version: 1,
        events: [
          {
            traceId,
            spanId: root,
            rootSpanId: root,
            revision: 0,
            name: 'checkout',
            service: 'shop-api',
            kind: 'execution',
            status: 'success',
            startedAt: now - 500,
            endedAt: now,
          },
          {
            traceId,
            spanId: hex(8),
            rootSpanId: root,
            parentSpanId: root,
            revision: 0,
            name: 'llm',
            service: 'shop-api',
            kind: 'model',
            status: 'success',
            startedAt: now - 400,
            endedAt: now - 100,
            inputTokens: 7,
            outputTokens: 3,
            costUsdNanos: 900,
            costSource: 'catalog_estimate',
          },
        ],
      },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const list = await viewer.call('GET', `/organizations/${org.id}/traces`, { query: 'kind=model' });
    expect(list.body.items).toEqual([
      expect.objectContaining({
        traceId,
        rootSpanId: root,
        name: 'checkout',
        durationMs: 500,
        spanCount: 2,
        inputTokens: 7,
        outputTokens: 3,
        costUsdNanos: 900,
      }),
    ]);
    const trace = await viewer.call('GET', `/organizations/${org.id}/traces/${traceId}`);
    expect(trace.body.spans.map((s: any) => [s.application, s.environment])).toEqual([
      ['shop', 'staging'],
      ['shop', 'staging'],
    ]);
  });
});
