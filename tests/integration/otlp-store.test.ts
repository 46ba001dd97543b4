import fc from 'fast-check';
import { and, eq, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { ingestionKeys, spans, traces } from '@/db/schema';
import { AppError } from '@/server/errors';
import { costOf } from '@/server/models/pricing';
import { mapOtlpSpan, type MappedSpan } from '@/server/otlp/mapping';
import { storeOtlpSpans, type OtlpRejection } from '@/server/otlp/store';
import { storeBatch } from '@/server/traces/ingest';
import type { TraceBatch } from '@/server/traces/ingest-schema';
import { newOrganization, newUser, type TestUser } from '../helpers/api';
import { hex, newIngestionKey, setReadOnly, storedSpan } from '../helpers/ingestion';
import { warningRow } from '../helpers/warnings';

// The storage step of OTLP ingestion (server/otlp/store.ts, db/functions/ingest_otlp_spans.sql),
// against a real database: spans and summaries, order independence, resends, partial rejection
// and its warning.

beforeAll(() => getDb().then(() => undefined), 120_000);

const t0 = Date.now() - 60_000;

type Tenant = { owner: TestUser; organizationId: string; keyId: string };

async function newTenant(): Promise<Tenant> {
  const owner = await newUser();
  const org = await newOrganization(owner);
  const { keyId } = await newIngestionKey(org.id);
  return { owner, organizationId: org.id, keyId };
}

function otlpSpan(fields: Partial<MappedSpan> & { traceId: string; spanId: string }): MappedSpan {
  return {
    name: `op ${fields.spanId.slice(0, 4)}`,
    service: 'checkout',
    kind: fields.parentSpanId ? 'custom' : 'execution',
    status: 'success',
    startedAt: t0,
    endedAt: t0 + 100,
    omitted: [],
    ...fields,
  };
}

async function store(keyId: string, sent: MappedSpan[], rejected: OtlpRejection[] = []) {
  return storeOtlpSpans(
    await getDb(),
    keyId,
    sent.map((span, index) => ({ index, span })),
    rejected,
  );
}

async function spansOf(organizationId: string, traceId: string) {
  const db = await getDb();
  return db
    .select()
    .from(spans)
    .where(and(eq(spans.organizationId, organizationId), eq(spans.traceId, traceId)))
    .orderBy(spans.spanId);
}

async function summaryOf(organizationId: string, traceId: string) {
  const db = await getDb();
  const [row] = await db
    .select()
    .from(traces)
    .where(and(eq(traces.organizationId, organizationId), eq(traces.traceId, traceId)));
  return row;
}

async function listItem(tenant: Tenant, traceId: string) {
  const page = await tenant.owner.call('GET', `/organizations/${tenant.organizationId}/traces`, {
    query: 'limit=100',
  });
  expect(page.status).toBe(200);
  return (page.body.items as { traceId: string }[]).find((item) => item.traceId === traceId);
}

// Everything stored for a trace that must not depend on arrival order or on the tenant.
async function storedTrace(tenant: Tenant, traceId: string) {
  const rows = await spansOf(tenant.organizationId, traceId);
  const summary = await summaryOf(tenant.organizationId, traceId);
  return {
    spans: rows.map(({ organizationId: _o, receivedAt: _r, ingestionKeyId: _k, ...row }) => row),
    summary: summary && { ...summary, organizationId: undefined },
    item: await listItem(tenant, traceId),
  };
}

async function expectSummaryIsAggregate(organizationId: string, traceId: string) {
  const before = await summaryOf(organizationId, traceId);
  const db = await getDb();
  await db.execute(sql`select recompute_trace_summaries(${organizationId}, ARRAY[${traceId}]::text[])`);
  expect(await summaryOf(organizationId, traceId)).toEqual(before);
}

const rejectionWarning = (organizationId: string, keyId: string) =>
  warningRow(organizationId, 'otlp_spans_rejected', keyId);

describe('OTLP storage: order does not matter', () => {
  let inOrder: Tenant;
  let shuffled: Tenant;
  beforeAll(async () => {
    inOrder = await newTenant();
    shuffled = await newTenant();
  }, 60_000);

  // A small tree (root R; A, B under R; A1, A2 under A; B1 under B), the root sometimes never sent,
  // sometimes a second parentless span; random starts (ties included), random order, random split
  // into requests, some spans sent twice.
  const fieldsArb = fc.record({
    sessionId: fc.constantFrom(undefined, 's1', 's2'),
    endUserId: fc.constantFrom(undefined, 'u1', 'u2'),
    status: fc.constantFrom('success', 'error'),
    kind: fc.constantFrom('model', 'tool', 'custom'),
    inputTokens: fc.option(fc.nat({ max: 100 }), { nil: undefined }),
    model: fc.constantFrom(undefined, 'gpt-4o-mini'),
  });
  const treeArb = fc.record({
    fields: fc.array(fieldsArb, { minLength: 7, maxLength: 7 }),
    starts: fc.array(fc.nat({ max: 4 }), { minLength: 7, maxLength: 7 }),
    withRoot: fc.boolean(),
    withSecondParentless: fc.boolean(),
    order: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 7, maxLength: 7 }),
    cuts: fc.array(fc.boolean(), { minLength: 7, maxLength: 7 }),
    resend: fc.array(fc.boolean(), { minLength: 7, maxLength: 7 }),
  });

  it('children before their root, over any number of requests, store what the in-order request stores', async () => {
    await fc.assert(
      fc.asyncProperty(treeArb, async (tree) => {
        const traceId = hex(16);
        const [r, a, b, a1, a2, b1, x] = Array.from({ length: 7 }, () => hex(8));
        const parents: (string | undefined)[] = [undefined, r, r, a, a, b, undefined];
        const all = [r, a, b, a1, a2, b1, x].map((spanId, i) => {
          const { kind, status, ...optional } = tree.fields[i];
          const span = otlpSpan({
            traceId,
            spanId,
            ...(parents[i] ? { parentSpanId: parents[i], kind } : {}),
            status,
            startedAt: t0 + tree.starts[i] * 10,
            endedAt: t0 + 100 + i,
            outputTokens: 3,
          });
          for (const [key, value] of Object.entries(optional))
            if (value !== undefined) Object.assign(span, { [key]: value });
          return span;
        });
        const sent = all.filter((_, i) => (i !== 0 || tree.withRoot) && (i !== 6 || tree.withSecondParentless));
        expect(await store(inOrder.keyId, sent)).toEqual({ rejectedSpans: 0 });

        const permuted = sent
          .map((span, i) => ({ span, key: tree.order[i] }))
          .sort((p, q) => p.key - q.key)
          .map((p) => p.span);
        const requests: MappedSpan[][] = [[]];
        permuted.forEach((span, i) => {
          requests[requests.length - 1].push(span);
          if (tree.resend[i]) requests[requests.length - 1].push(span);
          if (tree.cuts[i]) requests.push([]);
        });
        for (const request of requests) expect(await store(shuffled.keyId, request)).toEqual({ rejectedSpans: 0 });

        const expected = await storedTrace(inOrder, traceId);
        expect(await storedTrace(shuffled, traceId)).toEqual(expected);
        // Both summaries are the aggregate recompute_trace_summaries defines (the first request of a
        // trace builds it from the inserted rows, later ones recompute it).
        await expectSummaryIsAggregate(inOrder.organizationId, traceId);
        await expectSummaryIsAggregate(shuffled.organizationId, traceId);
        // The root: the earliest parentless span sent, else the parent of the earliest span.
        const byStart = [...sent].sort((p, q) => p.startedAt - q.startedAt || (p.spanId < q.spanId ? -1 : 1));
        const root = byStart.find((span) => !span.parentSpanId)?.spanId ?? byStart[0].parentSpanId;
        expect(new Set(expected.spans.map((span) => span.rootSpanId))).toEqual(new Set([root]));
        expect(expected.summary).toMatchObject({ rootSpanId: root, spanCount: sent.length });
        expect(expected.item).toMatchObject({ rootSpanId: root, spanCount: sent.length });
      }),
      { numRuns: 40 },
    );
  }, 300_000);
});

describe('OTLP storage: resends and replacements', () => {
  it('an identical resend writes nothing; a different one replaces the span (revision + 1) and its summary', async () => {
    const tenant = await newTenant();
    const traceId = hex(16);
    const root = otlpSpan({ traceId, spanId: hex(8), name: 'handle' });
    const child = otlpSpan({ traceId, spanId: hex(8), parentSpanId: root.spanId, endedAt: t0 + 50 });
    await store(tenant.keyId, [root, child]);
    const first = await spansOf(tenant.organizationId, traceId);
    const firstSummary = await summaryOf(tenant.organizationId, traceId);
    expect(first.map((span) => span.revision)).toEqual([0, 0]);

    expect(await store(tenant.keyId, [child, root])).toEqual({ rejectedSpans: 0 });
    expect(await spansOf(tenant.organizationId, traceId)).toEqual(first);
    expect(await summaryOf(tenant.organizationId, traceId)).toEqual(firstSummary);

    const changed = { ...child, endedAt: t0 + 500, status: 'error' as const };
    expect(await store(tenant.keyId, [root, changed])).toEqual({ rejectedSpans: 0 });
    const after = await storedSpan(tenant.organizationId, child.spanId);
    expect(after).toMatchObject({ revision: 1, endedAt: t0 + 500, status: 'error', rootSpanId: root.spanId });
    expect(after.snapshotDigest).not.toBe(first.find((span) => span.spanId === child.spanId)!.snapshotDigest);
    expect((await storedSpan(tenant.organizationId, root.spanId)).revision).toBe(0);
    expect(await summaryOf(tenant.organizationId, traceId)).toMatchObject({
      ...firstSummary,
      maxEndedAt: t0 + 500,
    });
    // Twice more: the revision counts replacements.
    await store(tenant.keyId, [{ ...changed, name: 'renamed' }]);
    expect((await storedSpan(tenant.organizationId, child.spanId)).revision).toBe(2);
  });

  it('a span stored by the native batch API is replaced by its OTLP snapshot', async () => {
    const tenant = await newTenant();
    const traceId = hex(16);
    const rootId = hex(8);
    await storeBatch(await getDb(), tenant.keyId, {
      version: 1,
      events: [
        {
          traceId,
          spanId: rootId,
          rootSpanId: rootId,
          revision: 3,
          name: 'native',
          service: 'api',
          kind: 'execution',
          status: 'running',
          startedAt: t0,
        },
      ],
    } as TraceBatch);
    await store(tenant.keyId, [otlpSpan({ traceId, spanId: rootId, name: 'otlp' })]);
    expect(await storedSpan(tenant.organizationId, rootId)).toMatchObject({
      revision: 4,
      name: 'otlp',
      status: 'success',
      endedAt: t0 + 100,
    });
    expect(await summaryOf(tenant.organizationId, traceId)).toMatchObject({ runningCount: 0, name: 'otlp' });
  });

  it('a replacement never takes the revision past the spec’s 1,000,000', async () => {
    const tenant = await newTenant();
    const traceId = hex(16);
    const rootId = hex(8);
    await storeBatch(await getDb(), tenant.keyId, {
      version: 1,
      events: [
        {
          traceId,
          spanId: rootId,
          rootSpanId: rootId,
          revision: 1_000_000,
          name: 'native',
          service: 'api',
          kind: 'execution',
          status: 'running',
          startedAt: t0,
        },
      ],
    } as TraceBatch);
    for (const name of ['otlp', 'otlp again']) await store(tenant.keyId, [otlpSpan({ traceId, spanId: rootId, name })]);
    expect(await storedSpan(tenant.organizationId, rootId)).toMatchObject({ revision: 1_000_000, name: 'otlp again' });
  });
});

describe('OTLP storage: roots', () => {
  it('of several parentless spans the earliest is the root, whichever came first', async () => {
    const tenant = await newTenant();
    const traceId = hex(16);
    const late = otlpSpan({ traceId, spanId: hex(8), name: 'late', startedAt: t0 + 20 });
    const early = otlpSpan({ traceId, spanId: hex(8), name: 'early', startedAt: t0 + 10 });
    const child = otlpSpan({ traceId, spanId: hex(8), parentSpanId: late.spanId, startedAt: t0 + 30 });
    await store(tenant.keyId, [late, child]);
    expect(await listItem(tenant, traceId)).toMatchObject({ rootSpanId: late.spanId, name: 'late' });
    await store(tenant.keyId, [early]);
    expect((await spansOf(tenant.organizationId, traceId)).map((span) => span.rootSpanId)).toEqual([
      early.spanId,
      early.spanId,
      early.spanId,
    ]);
    expect(await listItem(tenant, traceId)).toMatchObject({ rootSpanId: early.spanId, name: 'early', spanCount: 3 });
  });

  it('a provisional root (the parent of the earliest span) until the parentless span arrives', async () => {
    const tenant = await newTenant();
    const traceId = hex(16);
    const [r, a, a1] = [hex(8), hex(8), hex(8)];
    const grandchild = otlpSpan({ traceId, spanId: a1, parentSpanId: a, name: 'grandchild', startedAt: t0 + 30 });
    await store(tenant.keyId, [grandchild]);
    expect(await summaryOf(tenant.organizationId, traceId)).toMatchObject({
      rootSpanId: a,
      headSpanId: a1,
      name: 'grandchild',
    });
    await store(tenant.keyId, [otlpSpan({ traceId, spanId: a, parentSpanId: r, name: 'child', startedAt: t0 + 20 })]);
    expect(await summaryOf(tenant.organizationId, traceId)).toMatchObject({
      rootSpanId: r,
      headSpanId: a,
      name: 'child',
    });
    expect((await storedSpan(tenant.organizationId, a1)).rootSpanId).toBe(r);
    await store(tenant.keyId, [otlpSpan({ traceId, spanId: r, name: 'root', startedAt: t0 + 25 })]);
    expect(await summaryOf(tenant.organizationId, traceId)).toMatchObject({
      rootSpanId: r,
      headSpanId: r,
      name: 'root',
      startedAt: t0 + 20,
      spanCount: 3,
    });
    expect(await listItem(tenant, traceId)).toMatchObject({ rootSpanId: r, name: 'root' });
  });

  it('a native root and OTLP children share the trace, and the native root can still be updated', async () => {
    const tenant = await newTenant();
    const db = await getDb();
    const traceId = hex(16);
    const rootId = hex(8);
    const nativeRoot = (revision: number, status: 'running' | 'success') =>
      ({
        version: 1,
        events: [
          {
            traceId,
            spanId: rootId,
            rootSpanId: rootId,
            revision,
            name: 'native root',
            service: 'api',
            kind: 'execution',
            status,
            startedAt: t0,
            ...(status === 'running' ? {} : { endedAt: t0 + 900 }),
          },
        ],
      }) as TraceBatch;
    await storeBatch(db, tenant.keyId, nativeRoot(0, 'running'));
    const children = [hex(8), hex(8)].map((spanId, i) =>
      otlpSpan({ traceId, spanId, parentSpanId: rootId, startedAt: t0 + 10 + i }),
    );
    expect(await store(tenant.keyId, children)).toEqual({ rejectedSpans: 0 });
    expect((await spansOf(tenant.organizationId, traceId)).every((span) => span.rootSpanId === rootId)).toBe(true);
    await storeBatch(db, tenant.keyId, nativeRoot(1, 'success'));
    expect(await summaryOf(tenant.organizationId, traceId)).toMatchObject({
      rootSpanId: rootId,
      headSpanId: rootId,
      name: 'native root',
      runningCount: 0,
      spanCount: 3,
      maxEndedAt: t0 + 900,
    });

    // OTLP children first, the native root after them.
    const otherTrace = hex(16);
    const otherRoot = hex(8);
    await store(tenant.keyId, [otlpSpan({ traceId: otherTrace, spanId: hex(8), parentSpanId: otherRoot })]);
    await storeBatch(db, tenant.keyId, {
      version: 1,
      events: [
        { ...nativeRoot(0, 'success').events[0], traceId: otherTrace, spanId: otherRoot, rootSpanId: otherRoot },
      ],
    } as TraceBatch);
    expect(await summaryOf(tenant.organizationId, otherTrace)).toMatchObject({
      rootSpanId: otherRoot,
      headSpanId: otherRoot,
      spanCount: 2,
    });
  });

  it('an earlier parentless OTLP span never takes the root a native span declared; the native client goes on', async () => {
    const tenant = await newTenant();
    const db = await getDb();
    const traceId = hex(16);
    const [rootId, childId, laterChild] = [hex(8), hex(8), hex(8)];
    const native = (spanId: string, revision: number, status: 'running' | 'success', startedAt: number) => ({
      traceId,
      spanId,
      rootSpanId: rootId,
      ...(spanId === rootId ? {} : { parentSpanId: rootId }),
      revision,
      name: `native ${spanId.slice(0, 4)}`,
      service: 'api',
      kind: spanId === rootId ? ('execution' as const) : ('custom' as const),
      status,
      startedAt,
      ...(status === 'running' ? {} : { endedAt: t0 + 900 }),
    });
    await storeBatch(db, tenant.keyId, {
      version: 1,
      events: [native(rootId, 0, 'running', t0), native(childId, 0, 'running', t0 + 10)],
    } as TraceBatch);
    // From OpenTelemetry in the same application: no parent, and five seconds earlier than the root.
    const early = hex(8);
    expect(await store(tenant.keyId, [otlpSpan({ traceId, spanId: early, startedAt: t0 - 5_000 })])).toEqual({
      rejectedSpans: 0,
    });
    const stored = new Map((await spansOf(tenant.organizationId, traceId)).map((span) => [span.spanId, span]));
    expect(stored.get(rootId)).toMatchObject({ rootSpanId: rootId, parentSpanId: null, revision: 0 });
    expect(stored.get(childId)).toMatchObject({ rootSpanId: rootId, parentSpanId: rootId, revision: 0 });
    expect(stored.get(early)).toMatchObject({ rootSpanId: rootId, fromOtlp: true });
    expect(await summaryOf(tenant.organizationId, traceId)).toMatchObject({ rootSpanId: rootId, spanCount: 3 });

    // The native client finishes its spans and adds one, with the ids it always had.
    await storeBatch(db, tenant.keyId, {
      version: 1,
      events: [
        native(rootId, 1, 'success', t0),
        native(childId, 1, 'success', t0 + 10),
        native(laterChild, 0, 'success', t0 + 20),
      ],
    } as TraceBatch);
    expect(await summaryOf(tenant.organizationId, traceId)).toMatchObject({
      rootSpanId: rootId,
      runningCount: 0,
      spanCount: 4,
    });
    // An OTLP-only trace still takes its earliest parentless span as the root, whatever the order.
    const otlpTrace = hex(16);
    const [late, earlier] = [hex(8), hex(8)];
    await store(tenant.keyId, [otlpSpan({ traceId: otlpTrace, spanId: late, startedAt: t0 })]);
    await store(tenant.keyId, [otlpSpan({ traceId: otlpTrace, spanId: earlier, startedAt: t0 - 1_000 })]);
    expect((await spansOf(tenant.organizationId, otlpTrace)).map((span) => span.rootSpanId)).toEqual([
      earlier,
      earlier,
    ]);
  });
});

describe('OTLP storage: span identity, partial rejection and its warning', () => {
  it('a spanId stored under another trace is another span there: stored, nothing rejected (OpenTelemetry)', async () => {
    const tenant = await newTenant();
    const [traceA, traceB] = [hex(16), hex(16)];
    const taken = otlpSpan({ traceId: traceA, spanId: hex(8), name: 'in A' });
    await store(tenant.keyId, [taken]);

    const root = otlpSpan({ traceId: traceB, spanId: hex(8) });
    const other = otlpSpan({ traceId: traceB, spanId: hex(8), parentSpanId: root.spanId });
    const reused = { ...taken, traceId: traceB, parentSpanId: root.spanId, name: 'in B' };
    expect(await store(tenant.keyId, [root, reused, other])).toEqual({ rejectedSpans: 0 });
    expect((await spansOf(tenant.organizationId, traceB)).map((span) => span.spanId).sort()).toEqual(
      [root.spanId, taken.spanId, other.spanId].sort(),
    );
    expect(await spansOf(tenant.organizationId, traceA)).toMatchObject([
      { spanId: taken.spanId, name: 'in A', revision: 0 },
    ]);
    expect(await summaryOf(tenant.organizationId, traceB)).toMatchObject({ spanCount: 3, rootSpanId: root.spanId });
    await expectSummaryIsAggregate(tenant.organizationId, traceB);
    await expectSummaryIsAggregate(tenant.organizationId, traceA);
    expect(await rejectionWarning(tenant.organizationId, tenant.keyId)).toBeUndefined();
  });

  it("the mapping's rejections are reported beside the stored spans, with the warning in the same commit", async () => {
    const tenant = await newTenant();
    const traceB = hex(16);
    const mappingRejections = [
      { index: 4, reason: 'end time is before start time', traceId: traceB, spanId: hex(8) },
      { index: 2, reason: 'traceId is all zeros' },
    ];
    const kept = otlpSpan({ traceId: traceB, spanId: hex(8) });
    const first = await store(tenant.keyId, [kept], mappingRejections);
    expect(first).toEqual({ rejectedSpans: 2, errorMessage: '2 spans rejected; first: span 2: traceId is all zeros' });
    expect((await spansOf(tenant.organizationId, traceB)).map((span) => span.spanId)).toEqual([kept.spanId]);
    expect(await rejectionWarning(tenant.organizationId, tenant.keyId)).toMatchObject({
      keyId: tenant.keyId,
      count: 1,
      message: first.errorMessage,
      details: { rejectedSpans: 2, firstIndex: 2, keyName: 'test key' },
      resolvedAt: null,
    });
    // A second request with rejections counts once more and carries the latest message.
    const second = await store(tenant.keyId, [], [mappingRejections[0]]);
    expect(second).toEqual({
      rejectedSpans: 1,
      errorMessage: `1 span rejected; first: span 4 (traceId ${traceB}, spanId ${mappingRejections[0].spanId}): end time is before start time`,
    });
    expect(await rejectionWarning(tenant.organizationId, tenant.keyId)).toMatchObject({
      count: 2,
      message: second.errorMessage,
      details: { rejectedSpans: 1, firstIndex: 4 },
    });
    // Listed by the warnings API with its label's kind.
    const listed = await tenant.owner.call('GET', `/organizations/${tenant.organizationId}/warnings`, {
      query: 'kind=otlp_spans_rejected',
    });
    expect(listed.status).toBe(200);
    expect(listed.body.items).toMatchObject([{ kind: 'otlp_spans_rejected', subjectId: tenant.keyId, count: 2 }]);
  });

  it('a reused spanId takes its part in its own trace: its root and its summary', async () => {
    const tenant = await newTenant();
    const [traceA, traceB] = [hex(16), hex(16)];
    const taken = otlpSpan({ traceId: traceA, spanId: hex(8), startedAt: t0 });
    await store(tenant.keyId, [taken]);
    const child = otlpSpan({ traceId: traceB, spanId: hex(8), parentSpanId: taken.spanId, startedAt: t0 + 50 });
    // The reused span is traceB's earliest parentless span, so its root.
    expect(await store(tenant.keyId, [{ ...taken, traceId: traceB }, child])).toEqual({ rejectedSpans: 0 });
    expect(await summaryOf(tenant.organizationId, traceB)).toMatchObject({
      rootSpanId: taken.spanId,
      headSpanId: taken.spanId,
      spanCount: 2,
      startedAt: t0,
    });
    await expectSummaryIsAggregate(tenant.organizationId, traceB);
  });

  it('duplicates within one request: the last of a (traceId, spanId) wins; the spanId under a second traceId is another span', async () => {
    const tenant = await newTenant();
    const [traceA, traceB] = [hex(16), hex(16)];
    const spanId = hex(8);
    const result = await store(tenant.keyId, [
      otlpSpan({ traceId: traceA, spanId, name: 'first' }),
      otlpSpan({ traceId: traceB, spanId, name: 'elsewhere' }),
      otlpSpan({ traceId: traceA, spanId, name: 'last' }),
    ]);
    expect(result).toEqual({ rejectedSpans: 0 });
    expect(await spansOf(tenant.organizationId, traceA)).toMatchObject([{ spanId, name: 'last', revision: 0 }]);
    expect(await spansOf(tenant.organizationId, traceB)).toMatchObject([{ spanId, name: 'elsewhere', revision: 0 }]);
    expect(await summaryOf(tenant.organizationId, traceB)).toMatchObject({ spanCount: 1 });
    expect(await rejectionWarning(tenant.organizationId, tenant.keyId)).toBeUndefined();
  });

  it('the message stays under 1 KiB whatever the reason', async () => {
    const tenant = await newTenant();
    const result = await store(
      tenant.keyId,
      [],
      [{ index: 0, reason: 'x'.repeat(5000), traceId: hex(16), spanId: hex(8) }],
    );
    expect(result.rejectedSpans).toBe(1);
    expect(Buffer.byteLength(result.errorMessage!)).toBeLessThan(1024);
  });

  it('a read-only organization or a revoked key stores neither spans nor the warning', async () => {
    const tenant = await newTenant();
    const traceId = hex(16);
    const sent = [otlpSpan({ traceId, spanId: hex(8) })];
    const rejected = [{ index: 1, reason: 'spanId is all zeros' }];
    await setReadOnly(tenant.organizationId, true);
    for (const rejections of [[], rejected]) {
      const refused = await store(tenant.keyId, sent, rejections).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(AppError);
      expect((refused as AppError).code).toBe('read_only');
    }
    expect(await spansOf(tenant.organizationId, traceId)).toEqual([]);
    expect(await rejectionWarning(tenant.organizationId, tenant.keyId)).toBeUndefined();

    await setReadOnly(tenant.organizationId, false);
    const db = await getDb();
    await db.update(ingestionKeys).set({ revokedAt: new Date() }).where(eq(ingestionKeys.id, tenant.keyId));
    for (const rejections of [[], rejected]) {
      const refused = await store(tenant.keyId, sent, rejections).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(AppError);
      expect(refused).toMatchObject({
        code: 'unauthorized',
        headers: { 'www-authenticate': 'Bearer error="invalid_token"' },
      });
    }
    expect(await spansOf(tenant.organizationId, traceId)).toEqual([]);
    expect(await summaryOf(tenant.organizationId, traceId)).toBeUndefined();
    expect(await rejectionWarning(tenant.organizationId, tenant.keyId)).toBeUndefined();
    const unknown = await store('ikey_unknown', sent).catch((error: unknown) => error);
    expect(unknown).toMatchObject({ code: 'unauthorized' });
  });
});

describe('OTLP storage: cost, key fields', () => {
  it('costs come from the price catalog for a span with a model; others are unavailable', async () => {
    const tenant = await newTenant();
    const traceId = hex(16);
    const rootId = hex(8);
    const now = Date.now();
    const ns = (ms: number) => `${BigInt(ms) * 1_000_000n}`;
    const mapped = mapOtlpSpan(
      {
        resourceAttributes: [{ key: 'service.name', value: { stringValue: 'support-bot' } }],
        scopeName: 'openai',
        span: {
          traceId,
          spanId: hex(8),
          parentSpanId: rootId,
          name: 'chat gpt-4o-mini',
          startTimeUnixNano: ns(now - 1000),
          endTimeUnixNano: ns(now),
          attributes: [
            { key: 'gen_ai.operation.name', value: { stringValue: 'chat' } },
            { key: 'gen_ai.request.model', value: { stringValue: 'gpt-4o-mini' } },
            { key: 'gen_ai.usage.input_tokens', value: { intValue: '812' } },
            { key: 'gen_ai.usage.output_tokens', value: { intValue: 240 } },
          ],
        },
      },
      now,
    );
    if (!mapped.ok) throw new Error(mapped.reason);
    const unpriced = otlpSpan({
      traceId,
      spanId: hex(8),
      parentSpanId: rootId,
      model: 'some-local-model',
      inputTokens: 5,
      outputTokens: 5,
    });
    const noTokens = otlpSpan({ traceId, spanId: hex(8), parentSpanId: rootId, model: 'gpt-4o-mini' });
    const root = otlpSpan({ traceId, spanId: rootId });
    await store(tenant.keyId, [mapped.span, unpriced, noTokens, root]);
    const expected = costOf('gpt-4o-mini', 812, 240);
    expect(expected.costSource).toBe('catalog_estimate');
    expect(await storedSpan(tenant.organizationId, mapped.span.spanId)).toMatchObject({
      kind: 'model',
      service: 'support-bot',
      model: 'gpt-4o-mini',
      inputTokens: 812,
      outputTokens: 240,
      costUsdNanos: expected.costUsdNanos,
      costSource: 'catalog_estimate',
      pricingVersion: null,
      rootSpanId: rootId,
      revision: 0,
      application: 'test-app',
      environment: 'test',
      ingestionKeyId: tenant.keyId,
    });
    for (const id of [unpriced.spanId, noTokens.spanId, rootId])
      expect(await storedSpan(tenant.organizationId, id)).toMatchObject({
        costUsdNanos: null,
        costSource: 'unavailable',
      });
    expect(await summaryOf(tenant.organizationId, traceId)).toMatchObject({
      costUsdNanos: expected.costUsdNanos,
      inputTokens: 812 + 5,
      spanCount: 4,
    });
    await expectSummaryIsAggregate(tenant.organizationId, traceId);
    const db = await getDb();
    const [key] = await db.select().from(ingestionKeys).where(eq(ingestionKeys.id, tenant.keyId));
    expect(key.lastUsedAt).not.toBeNull();
  });
});

describe('OTLP storage: request size', () => {
  it("stores 10,000 spans (the endpoint's limit) in one call", async () => {
    const tenant = await newTenant();
    const traceIds = Array.from({ length: 100 }, () => hex(16));
    const sent = Array.from({ length: 10_000 }, (_, i) =>
      otlpSpan({
        traceId: traceIds[i % 100],
        spanId: hex(8),
        ...(i < 100 ? {} : { parentSpanId: hex(8) }),
        contentJson: JSON.stringify({ input: `question ${i}`, output: null, system: null }),
        metadataJson: JSON.stringify({ i }),
      }),
    );
    expect(await store(tenant.keyId, sent)).toEqual({ rejectedSpans: 0 });
    const db = await getDb();
    const rows = await db
      .select({ spanCount: traces.spanCount })
      .from(traces)
      .where(eq(traces.organizationId, tenant.organizationId));
    expect(rows.map((row) => row.spanCount)).toEqual(Array(100).fill(100));
    const last = await storedSpan(tenant.organizationId, sent[9_999].spanId);
    expect(last).toMatchObject({ contentJson: sent[9_999].contentJson, metadataJson: '{"i":9999}' });
  }, 120_000);
});

describe('OTLP storage: concurrency', () => {
  it('requests of one trace in parallel end as the same requests one after the other', async () => {
    const serial = await newTenant();
    const parallel = await newTenant();
    for (let round = 0; round < 5; round++) {
      const traceId = hex(16);
      const rootId = hex(8);
      const [a, b] = [hex(8), hex(8)];
      const requests = [
        [otlpSpan({ traceId, spanId: a, parentSpanId: rootId, startedAt: t0 + 5 })],
        [otlpSpan({ traceId, spanId: b, parentSpanId: a, startedAt: t0 + 8 })],
        [
          otlpSpan({ traceId, spanId: rootId, startedAt: t0 + 1 }),
          otlpSpan({ traceId, spanId: hex(8), parentSpanId: b }),
        ],
        Array.from({ length: 20 }, (_, i) => otlpSpan({ traceId, spanId: hex(8), parentSpanId: a, startedAt: t0 + i })),
      ];
      for (const request of requests) await store(serial.keyId, request);
      const results = await Promise.all(requests.map((request) => store(parallel.keyId, request)));
      expect(results.every((result) => result.rejectedSpans === 0)).toBe(true);
      const expected = await storedTrace(serial, traceId);
      expect(await storedTrace(parallel, traceId)).toEqual(expected);
      expect(expected.summary).toMatchObject({ rootSpanId: rootId, headSpanId: rootId, spanCount: 24 });
      await expectSummaryIsAggregate(parallel.organizationId, traceId);
    }
  }, 60_000);
});
