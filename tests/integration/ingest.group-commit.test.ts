import fc from 'fast-check';
import { and, eq, inArray, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { ingestionKeys, spans, traces } from '@/db/schema';
import { config } from '@/server/config';
import { AppError } from '@/server/errors';
import type { MappedSpan } from '@/server/otlp/mapping';
import { commitOtlpSpans, type OtlpRejection } from '@/server/otlp/store';
import { commitBatch, storeBatch } from '@/server/traces/ingest';
import type { SpanSnapshot, TraceBatch } from '@/server/traces/ingest-schema';
import { newOrganization, newUser } from '../helpers/api';
import { hex, newIngestionKey, setReadOnly } from '../helpers/ingestion';
import { expectSummariesMatch } from '../helpers/trace-summaries';

// Group commit (server/traces/group-commit.ts, db/functions/ingest_groups.sql) against a real
// database. Calls submitted in one tick arrive together: the first are stored at once, the others
// wait for them and go as one group. Which spans share a transaction is read from their xmin.

beforeAll(() => getDb().then(() => undefined), 120_000);

const t0 = Date.now() - 60_000;

type Actor = { keyId: string; organizationId: string };

async function newActor(organizationId?: string): Promise<Actor> {
  const orgId = organizationId ?? (await newOrganization(await newUser())).id;
  const { keyId } = await newIngestionKey(orgId);
  return { keyId, organizationId: orgId };
}

// A trace of a root and `children` finished children, all at revision `revision`.
function traceEvents(children = 4, revision = 0): SpanSnapshot[] {
  const traceId = hex(16);
  const root = hex(8);
  const event = (spanId: string, i: number): SpanSnapshot =>
    ({
      traceId,
      spanId,
      rootSpanId: root,
      ...(i === 0 ? {} : { parentSpanId: root }),
      revision,
      name: `span ${i}`,
      service: 'api',
      kind: i === 0 ? 'execution' : 'model',
      status: 'success',
      startedAt: t0 + i,
      endedAt: t0 + 100 + i,
      inputTokens: i,
      contentJson: JSON.stringify({ i, text: 'x'.repeat(i * 100) }),
      metadataJson: '{"m":1}',
    }) as SpanSnapshot;
  return [event(root, 0), ...Array.from({ length: children }, (_, i) => event(hex(8), i + 1))];
}

const batchOf = (events: SpanSnapshot[]) => ({ version: 1, events }) as TraceBatch;

type Outcome = { ok: true; accepted: number } | { ok: false; code: string; details: unknown };

const outcome = (promise: Promise<number>): Promise<Outcome> =>
  promise.then(
    (accepted) => ({ ok: true, accepted }),
    (error: unknown) => {
      if (!(error instanceof AppError)) throw error;
      return { ok: false, code: error.code, details: error.details };
    },
  );

async function storedRows(organizationId: string, spanIds: string[]) {
  const db = await getDb();
  return db
    .select({
      spanId: spans.spanId,
      revision: spans.revision,
      name: spans.name,
      keyId: spans.ingestionKeyId,
      xmin: sql<string>`${spans}.xmin::text`,
    })
    .from(spans)
    .where(and(eq(spans.organizationId, organizationId), inArray(spans.spanId, spanIds)));
}

// Submits every batch in one tick (as requests arriving together), and reads each answered batch
// back the moment its answer comes: a 200 means its spans are there.
async function submitTogether(calls: { actor: Actor; events: SpanSnapshot[] }[]): Promise<Outcome[]> {
  const db = await getDb();
  return Promise.all(
    calls.map(({ actor, events }) =>
      outcome(commitBatch(db, actor, batchOf(events))).then(async (result) => {
        if (result.ok) {
          const rows = await storedRows(actor.organizationId, [...new Set(events.map((e) => e.spanId))]);
          expect(rows).toHaveLength(new Set(events.map((e) => e.spanId)).size);
        }
        return result;
      }),
    ),
  );
}

async function transactionsOf(organizationIds: string[]): Promise<number> {
  const db = await getDb();
  const [row] = await db
    .select({ n: sql<number>`count(distinct ${spans}.xmin::text)::int` })
    .from(spans)
    .where(inArray(spans.organizationId, organizationIds));
  return row.n;
}

// Calls submitted in one tick: the first ones go at once, one per database connection of the process
// (INGEST_DB_CONNECTIONS); all the others wait for them and go as one group.
const expectedTransactions = (calls: number) => Math.min(calls, config().ingestDbConnections) + 1;

describe('group commit of native batches', () => {
  it('stores batches of several keys and organizations that arrive together in one transaction, each answered', async () => {
    const a1 = await newActor();
    const a2 = await newActor(a1.organizationId);
    const b = await newActor();
    const c = await newActor();
    const calls = [a1, a2, b, c, a1, a2, b, c].map((actor) => ({ actor, events: traceEvents() }));
    const results = await submitTogether(calls);
    expect(results).toEqual(calls.map(() => ({ ok: true, accepted: 5 })));
    expect(await transactionsOf([a1.organizationId, b.organizationId, c.organizationId])).toBe(
      expectedTransactions(calls.length),
    );
    for (const { actor, events } of calls) {
      const rows = await storedRows(
        actor.organizationId,
        events.map((e) => e.spanId),
      );
      expect(rows.map((r) => r.keyId)).toEqual(events.map(() => actor.keyId));
    }
    for (const org of [a1, b, c]) await expectSummariesMatch(org.organizationId);
  });

  it('answers a bad batch of a group on its own and stores its neighbours', async () => {
    const db = await getDb();
    const good = await newActor();
    const stored = traceEvents(2, 1);
    await storeBatch(db, good.keyId, batchOf(stored));
    const storedChild = stored[1];
    const revoked = await newActor();
    await db.update(ingestionKeys).set({ revokedAt: new Date() }).where(eq(ingestionKeys.id, revoked.keyId));
    const readOnly = await newActor();
    await setReadOnly(readOnly.organizationId, true);

    const bad = {
      // The stored revision again with other content.
      revisionConflict: [{ ...storedChild, name: 'renamed' }],
      // A newer revision under another parent.
      identityChanged: [{ ...storedChild, revision: 2, parentSpanId: hex(8) }],
      revokedKey: traceEvents(),
      readOnly: traceEvents(),
    };
    const calls = [
      { actor: good, events: traceEvents() },
      { actor: good, events: traceEvents() },
      { actor: good, events: bad.revisionConflict },
      { actor: good, events: traceEvents() },
      { actor: revoked, events: bad.revokedKey },
      { actor: good, events: bad.identityChanged },
      { actor: readOnly, events: bad.readOnly },
      { actor: good, events: traceEvents() },
    ];
    const results = await submitTogether(calls);
    // Each answer is the one the batch gets alone (stored again on its own, now that the group is over).
    for (const [i, { actor, events }] of calls.entries()) {
      if (results[i].ok) continue;
      expect(results[i]).toEqual(await outcome(storeBatch(db, actor.keyId, batchOf(events))));
    }
    expect(results.map((r) => (r.ok ? 'ok' : r.code))).toEqual([
      'ok',
      'ok',
      'invalid_state',
      'ok',
      'unauthorized',
      'invalid_state',
      'read_only',
      'ok',
    ]);
    expect(results[2]).toMatchObject({ details: { state: 'revision_conflict', storedRevision: 1 } });
    expect(results[5]).toMatchObject({ details: { state: 'identity_changed' } });
    // Nothing of the bad batches was stored; the stored child is unchanged.
    expect(
      await storedRows(
        revoked.organizationId,
        bad.revokedKey.map((e) => e.spanId),
      ),
    ).toEqual([]);
    expect(
      await storedRows(
        readOnly.organizationId,
        bad.readOnly.map((e) => e.spanId),
      ),
    ).toEqual([]);
    const [child] = await storedRows(good.organizationId, [storedChild.spanId]);
    expect(child).toMatchObject({ revision: 1, name: storedChild.name });
    await expectSummariesMatch(good.organizationId);
  });

  it('keeps batches of one trace and span in arrival order when they arrive together', async () => {
    const actor = await newActor();
    const [root, c1, c2] = traceEvents(2, 0).map(
      (e) => ({ ...e, status: 'running', endedAt: undefined }) as SpanSnapshot,
    );
    const finished = (e: SpanSnapshot, revision: number, name = e.name) =>
      ({ ...e, revision, name, status: 'success', endedAt: t0 + 500 }) as SpanSnapshot;
    const other = traceEvents();
    const calls = [
      { actor, events: [root, c1] },
      { actor, events: [finished(c1, 1), c2] },
      { actor, events: other },
      // Arrives after c1's revision 1 with other content: a conflict, as stored one after the other.
      { actor, events: [finished(c1, 1, 'other content')] },
      { actor, events: [finished(root, 1), finished(c2, 1)] },
      // An older revision after a newer one: acknowledged, not written.
      { actor, events: [c2] },
    ] as { actor: Actor; events: SpanSnapshot[] }[];
    const results = await submitTogether(calls);
    expect(results.map((r) => (r.ok ? 'ok' : r.code))).toEqual(['ok', 'ok', 'ok', 'invalid_state', 'ok', 'ok']);
    const rows = await storedRows(actor.organizationId, [root.spanId, c1.spanId, c2.spanId]);
    expect(Object.fromEntries(rows.map((r) => [r.spanId, [r.revision, r.name]]))).toEqual({
      [root.spanId]: [1, root.name],
      [c1.spanId]: [1, c1.name],
      [c2.spanId]: [1, c2.name],
    });
    const db = await getDb();
    const [summary] = await db.select().from(traces).where(eq(traces.traceId, root.traceId));
    expect(summary).toMatchObject({ spanCount: 3, runningCount: 0 });
    await expectSummariesMatch(actor.organizationId);
  });

  it('answers and stores any sequence of batches arriving together as stored one after the other', async () => {
    // Two traces of three span slots each; events revise, repeat, conflict and reopen at random.
    const eventArb = fc.record({
      trace: fc.nat({ max: 1 }),
      slot: fc.nat({ max: 2 }),
      revision: fc.nat({ max: 3 }),
      status: fc.constantFrom('running', 'success'),
      name: fc.constantFrom('a', 'b'),
      tokens: fc.option(fc.nat({ max: 9 }), { nil: undefined }),
    });
    const batchesArb = fc.array(fc.array(eventArb, { minLength: 1, maxLength: 4 }), { minLength: 2, maxLength: 7 });
    await fc.assert(
      fc.asyncProperty(batchesArb, async (generated) => {
        const ids = [0, 1].map(() => ({ traceId: hex(16), spans: [hex(8), hex(8), hex(8)] }));
        const toEvents = (batch: (typeof generated)[number]) =>
          batch.map((e) => {
            const { traceId, spans: spanIds } = ids[e.trace];
            return {
              traceId,
              spanId: spanIds[e.slot],
              rootSpanId: spanIds[0],
              ...(e.slot === 0 ? {} : { parentSpanId: spanIds[0] }),
              revision: e.revision,
              name: e.name,
              service: 'api',
              kind: e.slot === 0 ? 'execution' : 'tool',
              status: e.status,
              startedAt: t0 + e.slot,
              ...(e.status === 'running' ? {} : { endedAt: t0 + 50 }),
              ...(e.tokens === undefined ? {} : { inputTokens: e.tokens }),
            } as SpanSnapshot;
          });
        const batches = generated.map(toEvents);
        const db = await getDb();
        const alone = await newActor();
        const expected: Outcome[] = [];
        for (const events of batches) expected.push(await outcome(storeBatch(db, alone.keyId, batchOf(events))));
        const together = await newActor();
        const results = await submitTogether(batches.map((events) => ({ actor: together, events })));
        expect(results).toEqual(expected);
        const snapshot = async (organizationId: string) =>
          (
            await db
              .select({ spanId: spans.spanId, revision: spans.revision, name: spans.name, status: spans.status })
              .from(spans)
              .where(eq(spans.organizationId, organizationId))
              .orderBy(spans.spanId)
          ).map((row) => row);
        expect(await snapshot(together.organizationId)).toEqual(await snapshot(alone.organizationId));
        await expectSummariesMatch(together.organizationId);
      }),
      { numRuns: 12 },
    );
  }, 120_000);

  it('acknowledges a retried group without writing anything', async () => {
    const actor = await newActor();
    const calls = Array.from({ length: 6 }, () => ({ actor, events: traceEvents() }));
    expect((await submitTogether(calls)).every((r) => r.ok)).toBe(true);
    const spanIds = calls.flatMap((c) => c.events.map((e) => e.spanId));
    const before = await storedRows(actor.organizationId, spanIds);
    const again = await submitTogether(calls);
    expect(again).toEqual(calls.map(() => ({ ok: true, accepted: 5 })));
    expect(await storedRows(actor.organizationId, spanIds)).toEqual(before);
    await expectSummariesMatch(actor.organizationId);
  });
});

describe('group commit of OTLP exports', () => {
  function otlpSpans(count: number): MappedSpan[] {
    const traceId = hex(16);
    const root = hex(8);
    return Array.from({ length: count }, (_, i) => ({
      traceId,
      spanId: i === 0 ? root : hex(8),
      ...(i === 0 ? {} : { parentSpanId: root }),
      name: `op ${i}`,
      service: 'checkout',
      kind: i === 0 ? 'execution' : 'custom',
      status: 'success',
      startedAt: t0 + i,
      endedAt: t0 + 100,
      omitted: [],
      contentJson: JSON.stringify({ output: `answer ${i}` }),
    })) as MappedSpan[];
  }

  it('stores OTLP exports and native batches of several keys together, and answers a bad one on its own', async () => {
    const db = await getDb();
    const a = await newActor();
    const b = await newActor();
    const revoked = await newActor();
    await db.update(ingestionKeys).set({ revokedAt: new Date() }).where(eq(ingestionKeys.id, revoked.keyId));
    const first = otlpSpans(3);
    const exports = [otlpSpans(4), otlpSpans(2), otlpSpans(3)];
    const native = traceEvents();
    const otlp = (actor: Actor, sent: MappedSpan[], rejected: OtlpRejection[] = []) =>
      commitOtlpSpans(
        db,
        actor,
        sent.map((span, index) => ({ index, span })),
        rejected,
      ).then(
        (result) => ({ ok: true as const, result }),
        (error: AppError) => ({ ok: false as const, code: error.code }),
      );
    const answers = await Promise.all([
      otlp(a, first),
      otlp(a, exports[0]),
      outcome(commitBatch(db, b, batchOf(native))),
      otlp(b, exports[1]),
      otlp(revoked, exports[2]),
    ]);
    expect(answers).toEqual([
      { ok: true, result: { rejectedSpans: 0 } },
      { ok: true, result: { rejectedSpans: 0 } },
      { ok: true, accepted: 5 },
      { ok: true, result: { rejectedSpans: 0 } },
      { ok: false, code: 'unauthorized' },
    ]);
    expect(
      await storedRows(
        a.organizationId,
        [...first, ...exports[0]].map((s) => s.spanId),
      ),
    ).toHaveLength(7);
    expect(
      await storedRows(
        b.organizationId,
        [...native, ...exports[1]].map((s) => s.spanId),
      ),
    ).toHaveLength(7);
    expect(
      await storedRows(
        revoked.organizationId,
        exports[2].map((s) => s.spanId),
      ),
    ).toEqual([]);
    await expectSummariesMatch(a.organizationId);
    await expectSummariesMatch(b.organizationId);

    // The same exports again, together with one whose mapping rejected a span (that one gets its
    // partial answer and warning on its own) and one reusing a stored spanId under another trace
    // (another span, stored); the resends change nothing.
    const reused = { ...exports[0][1], traceId: hex(16), parentSpanId: undefined };
    const rejected = [{ index: 1, reason: 'end time is before start time' }];
    const again = await Promise.all([
      otlp(a, first),
      otlp(a, first),
      otlp(a, otlpSpans(1), rejected),
      otlp(a, [reused]),
      otlp(b, exports[1]),
    ]);
    expect(again.map((r) => (r.ok ? r.result.rejectedSpans : r.code))).toEqual([0, 0, 1, 0, 0]);
    expect(await storedRows(a.organizationId, [reused.spanId])).toMatchObject([{ revision: 0 }, { revision: 0 }]);
    await expectSummariesMatch(a.organizationId);
  });

  it('stores a group of native batches and OTLP exports in one transaction', async () => {
    const db = await getDb();
    const actor = await newActor();
    await Promise.all([
      commitBatch(db, actor, batchOf(traceEvents())),
      commitBatch(db, actor, batchOf(traceEvents())),
      commitOtlpSpans(
        db,
        actor,
        otlpSpans(3).map((span, index) => ({ index, span })),
        [],
      ),
      commitOtlpSpans(
        db,
        actor,
        otlpSpans(2).map((span, index) => ({ index, span })),
        [],
      ),
    ]);
    expect(await transactionsOf([actor.organizationId])).toBe(expectedTransactions(4));
    await expectSummariesMatch(actor.organizationId);
  });
});
