import fc from 'fast-check';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { spanKindBits, traces } from '@/db/schema';
import { AppError } from '@/server/errors';
import { storeBatch } from '@/server/traces/ingest';
import type { SpanSnapshot, TraceBatch } from '@/server/traces/ingest-schema';
import { hex, newIngestionKey } from '../helpers/ingestion';
import { expectSummariesMatch } from '../helpers/trace-summaries';
import { newOrganization, newUser } from '../helpers/api';

// The trace summaries (traces) that ingest_spans keeps by differences must always equal an
// aggregate computed from scratch over the stored spans, whatever the batches did.

beforeAll(() => getDb().then(() => undefined), 120_000);

async function newOrgWithKey() {
  const org = await newOrganization(await newUser());
  const { keyId } = await newIngestionKey(org.id);
  return { organizationId: org.id, keyId };
}

const t0 = Date.now() - 60_000;
const kinds = ['execution', 'model', 'tool', 'custom'] as const;

// One event for span `slot` of trace `trace`; identity (trace, root, parent) is fixed per slot, all
// else varies, so batches update, revise out of order, change startedAt/kind/session, and send
// roots late. Same-revision different content and reopening are generated too: those batches are
// refused and must leave the summaries as they were.
const eventArb = fc.record({
  trace: fc.nat({ max: 2 }),
  // Most updates keep the slot's usual kind, session, end user and tokens (the differences path);
  // some change them (the recompute path).
  vary: fc.constantFrom(false, false, false, true),
  slot: fc.nat({ max: 3 }),
  // Added to the batch's position: mostly newer revisions, some older (out of order) or equal.
  revisionOffset: fc.constantFrom(-2, 0, 0, 0, 1),
  status: fc.constantFrom('running', 'success', 'error'),
  // Mostly the slot's usual start, so most updates keep it and some move it.
  jitter: fc.constantFrom(0, 0, 0, 1, 5),
  length: fc.nat({ max: 5 }),
  kind: fc.constantFrom(...kinds),
  name: fc.constantFrom('a', 'b'),
  service: fc.constantFrom('api', 'worker'),
  sessionId: fc.option(fc.constantFrom('s1', 's2', 's3'), { nil: undefined }),
  endUserId: fc.option(fc.constantFrom('u1', 'u2'), { nil: undefined }),
  inputTokens: fc.option(fc.nat({ max: 50 }), { nil: undefined }),
  outputTokens: fc.option(fc.nat({ max: 50 }), { nil: undefined }),
  costUsdNanos: fc.option(fc.nat({ max: 1000 }), { nil: undefined }),
});
type GeneratedEvent = typeof eventArb extends fc.Arbitrary<infer T> ? T : never;

function toSnapshot(
  ids: { traceIds: string[]; spanIds: string[][] },
  e: GeneratedEvent,
  position: number,
): SpanSnapshot {
  const traceId = ids.traceIds[e.trace];
  // The third trace never gets its root: its head is always its earliest span.
  const slot = e.trace === 2 && e.slot === 0 ? 1 : e.slot;
  const spanId = ids.spanIds[e.trace][slot];
  const usual = {
    kind: kinds[slot],
    sessionId: slot % 2 ? 's1' : undefined,
    endUserId: slot === 1 ? 'u1' : undefined,
    inputTokens: slot * 3,
    outputTokens: undefined,
    costUsdNanos: slot === 2 ? 7 : undefined,
  };
  const v = e.vary ? e : usual;
  const root = ids.spanIds[e.trace][0];
  const startedAt = t0 + (slot * 2 + e.jitter) * 10;
  return {
    traceId,
    spanId,
    rootSpanId: root,
    ...(slot === 0 ? {} : { parentSpanId: root }),
    revision: Math.max(0, position + e.revisionOffset),
    name: e.name,
    service: e.service,
    kind: v.kind,
    status: e.status as SpanSnapshot['status'],
    startedAt,
    ...(e.status === 'running' ? {} : { endedAt: startedAt + e.length * 10 }),
    ...(v.sessionId ? { sessionId: v.sessionId } : {}),
    ...(v.endUserId ? { endUserId: v.endUserId } : {}),
    ...(v.inputTokens === undefined
      ? {}
      : { inputTokens: v.inputTokens + (e.vary ? 0 : Math.max(0, e.revisionOffset + position)) }),
    ...(v.outputTokens === undefined ? {} : { outputTokens: v.outputTokens }),
    ...(v.costUsdNanos === undefined ? {} : { costUsdNanos: v.costUsdNanos, costSource: 'provider_reported' }),
  } as SpanSnapshot;
}

async function send(keyId: string, events: SpanSnapshot[]): Promise<boolean> {
  try {
    await storeBatch(await getDb(), keyId, { version: 1, events } as TraceBatch);
    return true;
  } catch (error) {
    if (error instanceof AppError && error.code === 'invalid_state') return false;
    throw error;
  }
}

describe('trace summaries', () => {
  it('equal a from-scratch aggregate of the spans after any sequence of batches', async () => {
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(eventArb, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 10 }),
        async (batches) => {
          const { organizationId, keyId } = await newOrgWithKey();
          const ids = {
            traceIds: [hex(16), hex(16), hex(16)],
            spanIds: [0, 1, 2].map(() => [hex(8), hex(8), hex(8), hex(8)]),
          };
          for (const [position, events] of batches.entries())
            if (
              await send(
                keyId,
                events.map((e) => toSnapshot(ids, e, position)),
              )
            )
              accepted++;
          await expectSummariesMatch(organizationId);
        },
      ),
      { numRuns: 100 },
    );
    // The generator must mostly produce valid batches, or the property says little.
    expect(accepted).toBeGreaterThan(100);
  }, 300_000);

  it('follow the changes deltas cannot: a later start, a changed kind or session, tokens removed, the head moving', async () => {
    const { organizationId, keyId } = await newOrgWithKey();
    const traceId = hex(16);
    const [root, a, b] = [hex(8), hex(8), hex(8)];
    const base = { traceId, rootSpanId: root, parentSpanId: root, service: 'api', name: 'child' } as const;
    const at = (ms: number) => t0 + ms;
    expect(
      await send(keyId, [
        {
          ...base,
          spanId: a,
          revision: 0,
          kind: 'model',
          status: 'running',
          startedAt: at(10),
          sessionId: 's1',
          inputTokens: 5,
        },
        {
          ...base,
          spanId: b,
          revision: 0,
          kind: 'tool',
          status: 'success',
          startedAt: at(20),
          endedAt: at(90),
          sessionId: 's2',
        },
      ] as SpanSnapshot[]),
    ).toBe(true);
    await expectSummariesMatch(organizationId);
    // The head (no root yet) is updated in place: same start, new status.
    expect(
      await send(keyId, [
        {
          ...base,
          spanId: a,
          revision: 1,
          kind: 'model',
          status: 'error',
          startedAt: at(10),
          endedAt: at(12),
          sessionId: 's1',
          inputTokens: 5,
        },
      ] as SpanSnapshot[]),
    ).toBe(true);
    await expectSummariesMatch(organizationId);
    // The earliest span (the head while the root is missing) starts later, changes kind and session and loses its tokens.
    expect(
      await send(keyId, [
        {
          ...base,
          spanId: a,
          revision: 2,
          kind: 'custom',
          status: 'success',
          startedAt: at(30),
          endedAt: at(40),
          sessionId: 's3',
        },
      ] as SpanSnapshot[]),
    ).toBe(true);
    await expectSummariesMatch(organizationId);
    const [summary] = await (await getDb()).select().from(traces).where(eq(traces.traceId, traceId));
    expect(summary).toMatchObject({
      headSpanId: b,
      startedAt: at(20),
      sessionId: 's2',
      inputTokens: null,
      kinds: spanKindBits.custom | spanKindBits.tool,
      runningCount: 0,
      maxEndedAt: at(90),
    });
    // A finished span ends earlier; then the root arrives late and becomes the head.
    expect(
      await send(keyId, [
        {
          ...base,
          spanId: b,
          revision: 1,
          kind: 'tool',
          status: 'success',
          startedAt: at(20),
          endedAt: at(25),
          sessionId: 's2',
        },
      ] as SpanSnapshot[]),
    ).toBe(true);
    expect(
      await send(keyId, [
        {
          traceId,
          spanId: root,
          rootSpanId: root,
          service: 'web',
          name: 'root',
          revision: 0,
          kind: 'execution',
          status: 'running',
          startedAt: at(50),
        },
      ] as SpanSnapshot[]),
    ).toBe(true);
    await expectSummariesMatch(organizationId);
    const [late] = await (await getDb()).select().from(traces).where(eq(traces.traceId, traceId));
    expect(late).toMatchObject({
      headSpanId: root,
      name: 'root',
      service: 'web',
      status: 'running',
      sessionId: 's2',
      startedAt: at(20),
      runningCount: 1,
      spanCount: 3,
    });
  });

  it('stay exact under concurrent batches of one trace', async () => {
    const { organizationId, keyId } = await newOrgWithKey();
    const traceId = hex(16);
    const root = hex(8);
    const children = Array.from({ length: 60 }, () => hex(8));
    const child = (spanId: string, revision: number, i: number): SpanSnapshot =>
      ({
        traceId,
        spanId,
        rootSpanId: root,
        parentSpanId: root,
        revision,
        name: `c${i}`,
        service: 'api',
        kind: i % 2 ? 'model' : 'tool',
        status: revision ? 'success' : 'running',
        startedAt: t0 + i,
        ...(revision ? { endedAt: t0 + 100 + i, inputTokens: i } : {}),
      }) as SpanSnapshot;
    const batches: SpanSnapshot[][] = [];
    for (let i = 0; i < children.length; i += 5) {
      batches.push(children.slice(i, i + 5).map((id, j) => child(id, 0, i + j)));
      batches.push(children.slice(i, i + 5).map((id, j) => child(id, 1, i + j)));
    }
    batches.push([
      {
        traceId,
        spanId: root,
        rootSpanId: root,
        revision: 0,
        name: 'root',
        service: 'api',
        kind: 'execution',
        status: 'success',
        startedAt: t0 + 30,
        endedAt: t0 + 500,
      } as SpanSnapshot,
    ]);
    const results = await Promise.all(batches.map((events) => send(keyId, events)));
    expect(results.every(Boolean)).toBe(true);
    await expectSummariesMatch(organizationId);
    const [summary] = await (await getDb()).select().from(traces).where(eq(traces.traceId, traceId));
    expect(summary).toMatchObject({
      spanCount: 61,
      runningCount: 0,
      headSpanId: root,
      startedAt: t0,
      maxEndedAt: t0 + 500,
    });
  }, 60_000);
});
