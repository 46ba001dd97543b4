import { beforeAll, describe, expect, it } from 'vitest';
import { eq, sql } from 'drizzle-orm';
import { getDb, rowsOf } from '@/db/client';
import { runInTransaction } from '@/server/context';
import { storeBatch } from '@/server/traces/ingest';
import type { TraceBatch } from '@/server/traces/ingest-schema';
import { ingestionKeys, traces } from '@/db/schema';
import { batch, child, hex, newIngestion, newIngestionKey, span, storedSpan, storedSpans } from '../helpers/ingestion';

// Opening (and, on PGlite, migrating) the database can take longer than one test's timeout.
beforeAll(() => getDb().then(() => undefined), 120_000);

const finished = (event: Record<string, unknown>, revision: number, overrides: Record<string, unknown> = {}) => ({
  ...event,
  revision,
  status: 'success',
  endedAt: (event.startedAt as number) + 250,
  ...overrides,
});

function expectConflict(result: { status: number; body: any }, state: string) {
  expect(result.status, JSON.stringify(result.body)).toBe(409);
  expect(result.body.error.code).toBe('invalid_state');
  expect(result.body.error.details.state).toBe(state);
}

describe('span state: revisions', () => {
  it('a higher revision replaces the stored snapshot', async () => {
    const { send, organizationId } = await newIngestion();
    const root = span({ metadataJson: '{"step":1}' });
    expect((await send(batch(root))).status).toBe(200);
    const done = finished(root, 1, { metadataJson: '{"step":2}', inputTokens: 10 });
    expect((await send(batch(done))).body).toEqual({ accepted: 1 });
    const row = await storedSpan(organizationId, root.spanId as string);
    expect(row).toMatchObject({
      revision: 1,
      status: 'success',
      endedAt: done.endedAt,
      metadataJson: '{"step":2}',
      inputTokens: 10,
    });
  });

  it('an identical retry is acknowledged and changes nothing', async () => {
    const { send, organizationId } = await newIngestion();
    const root = span({ contentJson: '{"input":"hi"}' });
    const body = batch(root, child(root));
    expect((await send(body)).body).toEqual({ accepted: 2 });
    const before = await storedSpans(organizationId);
    const retry = await send(body);
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual({ accepted: 2 });
    expect(await storedSpans(organizationId)).toEqual(before);
  });

  it('the same revision with different content → 409 revision_conflict, stored snapshot kept', async () => {
    const { send, organizationId } = await newIngestion();
    const root = span({ name: 'original' });
    await send(batch(root));
    const result = await send(batch({ ...root, name: 'changed' }));
    expectConflict(result, 'revision_conflict');
    expect(result.body.error.details).toMatchObject({
      path: 'events.0',
      spanId: root.spanId,
      traceId: root.traceId,
      storedRevision: 0,
    });
    expect((await storedSpan(organizationId, root.spanId as string)).name).toBe('original');
  });

  it('a lower revision than stored is acknowledged and ignored', async () => {
    const { send, organizationId } = await newIngestion();
    const root = span();
    await send(batch(finished(root, 3)));
    const older = await send(batch({ ...root, revision: 1, name: 'stale' }));
    expect(older.status).toBe(200);
    expect(older.body).toEqual({ accepted: 1 });
    expect(await storedSpan(organizationId, root.spanId as string)).toMatchObject({
      revision: 3,
      name: root.name,
      status: 'success',
    });
  });

  it('children may arrive before their root', async () => {
    const { send, organizationId } = await newIngestion();
    const root = span();
    expect((await send(batch(child(root), child(root)))).status).toBe(200);
    expect((await send(batch(root))).status).toBe(200);
    expect(await storedSpans(organizationId)).toHaveLength(3);
  });

  it('stores every field of the snapshot, with the key application and environment', async () => {
    const { send, organizationId, keyId } = await newIngestion();
    const root = span();
    const event = child(root, {
      kind: 'model',
      sessionId: 'sess-1',
      endUserId: 'user-9',
      provider: 'openai',
      model: 'gpt-x',
      promptVersionId: 'ver_1',
      pricingVersion: '2026-01',
      inputTokens: 100,
      outputTokens: 20,
      costUsdNanos: 123_456,
      costSource: 'provider_reported',
      contentJson: '{"output":"ok"}',
      metadataJson: '{"region":"eu"}',
      omitted: ['input'],
    });
    expect((await send(batch(event))).status).toBe(200);
    const row = await storedSpan(organizationId, event.spanId as string);
    expect(row).toMatchObject({
      traceId: event.traceId,
      rootSpanId: root.spanId,
      parentSpanId: root.spanId,
      revision: 0,
      kind: 'model',
      status: 'success',
      startedAt: event.startedAt,
      endedAt: event.endedAt,
      sessionId: 'sess-1',
      endUserId: 'user-9',
      provider: 'openai',
      model: 'gpt-x',
      promptVersionId: 'ver_1',
      pricingVersion: '2026-01',
      inputTokens: 100,
      outputTokens: 20,
      costUsdNanos: 123_456,
      costSource: 'provider_reported',
      contentJson: '{"output":"ok"}',
      metadataJson: '{"region":"eu"}',
      omitted: ['input'],
      ingestionKeyId: keyId,
      application: 'test-app',
      environment: 'test',
    });
    expect(row.snapshotDigest).toMatch(/^[0-9a-f]{64}$/);
  });

  it('keeps last_used_at of the key fresh', async () => {
    const { send, keyId } = await newIngestion();
    await send(batch(span()));
    const db = await getDb();
    const [key] = await db.select().from(ingestionKeys).where(eq(ingestionKeys.id, keyId));
    expect(key.lastUsedAt).toBeInstanceOf(Date);
    expect(Math.abs(key.lastUsedAt!.getTime() - Date.now())).toBeLessThan(60_000);
  });

  it('spans are kept per organization: the same ids in another organization are another span', async () => {
    const first = await newIngestion();
    const second = await newIngestion();
    const root = span();
    expect((await first.send(batch(root))).status).toBe(200);
    expect((await second.send(batch({ ...root, name: 'other org' }))).status).toBe(200);
    expect((await storedSpan(first.organizationId, root.spanId as string)).name).toBe(root.name);
    expect((await storedSpan(second.organizationId, root.spanId as string)).name).toBe('other org');
  });

  it('two keys of one organization write the same spans', async () => {
    const { send, organizationId } = await newIngestion();
    const other = await newIngestionKey(organizationId, { application: 'worker', environment: 'prod' });
    const root = span();
    await send(batch(root));
    const { call } = await import('../helpers/api');
    const result = await call('POST', '/traces', {
      body: batch(finished(root, 1)),
      headers: { authorization: `Bearer ${other.secret}` },
    });
    expect(result.status).toBe(200);
    expect(await storedSpan(organizationId, root.spanId as string)).toMatchObject({
      revision: 1,
      application: 'worker',
      ingestionKeyId: other.keyId,
    });
  });
});

describe('span identity: traceId and spanId name a span (OpenTelemetry)', () => {
  it('the same spanId under another traceId is another span: both stored, each updated on its own', async () => {
    const { send, organizationId } = await newIngestion();
    const first = span();
    expect((await send(batch(first))).status).toBe(200);
    // Another trace whose root, and a child of it, reuse span ids of the first trace.
    const second = span({ spanId: first.spanId });
    const reused = child(second, { spanId: hex(8) });
    const inFirst = child(first, { spanId: reused.spanId });
    const sent = await send(batch(second, reused, inFirst));
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const rows = await storedSpans(organizationId);
    expect(rows.map((r) => [r.traceId, r.spanId]).sort()).toEqual(
      [
        [first.traceId, first.spanId],
        [first.traceId, reused.spanId],
        [second.traceId, first.spanId],
        [second.traceId, reused.spanId],
      ].sort(),
    );
    // A newer revision of one of them changes that one only; an identical retry changes nothing.
    expect((await send(batch(finished(second, 1, { name: 'second done' })))).status).toBe(200);
    expect((await send(batch(second, reused, inFirst))).status).toBe(200);
    const after = await storedSpans(organizationId);
    const named = (traceId: unknown) => after.find((r) => r.traceId === traceId && r.spanId === first.spanId);
    expect(named(second.traceId)).toMatchObject({ revision: 1, name: 'second done', status: 'success' });
    expect(named(first.traceId)).toMatchObject({ revision: 0, name: first.name, status: 'running' });
    // Each trace's summary counts its own spans.
    const db = await getDb();
    const summaries = await db.select().from(traces).where(eq(traces.organizationId, organizationId));
    expect(Object.fromEntries(summaries.map((t) => [t.traceId, t.spanCount]))).toEqual({
      [first.traceId as string]: 2,
      [second.traceId as string]: 2,
    });
  });

  it('two events of one batch with the same spanId under two traces are two spans', async () => {
    const { send, organizationId } = await newIngestion();
    const a = span();
    const b = span({ spanId: a.spanId });
    expect((await send(batch(a, b))).body).toEqual({ accepted: 2 });
    expect((await storedSpans(organizationId)).map((r) => r.traceId).sort()).toEqual([a.traceId, b.traceId].sort());
  });
});

describe('span state: received_at', () => {
  // The online-evaluation scanner's bound (server/online/scanner.ts) relies on it: a transaction
  // shows in pg_stat_activity before its spans are stamped, so a pass that did not see it there read
  // earlier than every stamp.
  it('is the clock when the call writes, not the start of its transaction', async () => {
    const { organizationId, keyId } = await newIngestion();
    const db = await getDb();
    const root = span();
    const began = await runInTransaction(db, async (tx) => {
      const [{ at }] = rowsOf<{ at: string }>(await tx.execute(sql`select now()::text as at, pg_sleep(0.2)`));
      await storeBatch(tx, keyId, { version: 1, events: [root] } as TraceBatch);
      return at;
    });
    const [row] = rowsOf<{ late: boolean }>(
      await db.execute(sql`select received_at >= ${began}::timestamptz + interval '200 milliseconds' as late
        from spans where organization_id = ${organizationId}`),
    );
    expect(row.late).toBe(true);
  });

  // The column keeps milliseconds. Rounded to the nearest, a stamp taken less than half a millisecond
  // after the transaction began could be stored before that start, inside a scanner pass's bound
  // while still uncommitted: that pass skipped it for good. Twenty calls, each stored no earlier than
  // the clock read just before it (rounding to the nearest fails this for about a third of calls).
  it('is never stored before the clock it was taken from (rounded up to the millisecond)', async () => {
    const { organizationId, keyId } = await newIngestion();
    const db = await getDb();
    const checks: { spanId: string; before: string }[] = [];
    for (let i = 0; i < 20; i++) {
      const event = span();
      // Both statements are sent at once (pipelined), so the clock is read just before the call's.
      const before = await runInTransaction(db, async (tx) => {
        const clock = tx
          .execute(sql`select clock_timestamp()::text as at`)
          .then((r) => rowsOf<{ at: string }>(r)[0].at);
        await storeBatch(tx, keyId, { version: 1, events: [event] } as TraceBatch);
        return clock;
      });
      checks.push({ spanId: event.spanId as string, before });
    }
    for (const { spanId, before } of checks) {
      const [row] = rowsOf<{ ok: boolean; at: string }>(
        await db.execute(sql`select received_at >= ${before}::timestamptz as ok, received_at::text as at
          from spans where organization_id = ${organizationId} and span_id = ${spanId}`),
      );
      expect(row, `${row.at} before ${before}`).toMatchObject({ ok: true });
    }
  });
});

describe('span state: identity and reopening → 409, nothing stored', () => {
  it.each([
    ['parentSpanId changes', (c: Record<string, unknown>) => ({ ...c, revision: 1, parentSpanId: hex(8) })],
    ['rootSpanId changes', (c: Record<string, unknown>) => ({ ...c, revision: 1, rootSpanId: hex(8) })],
  ])('%s', async (_label, change) => {
    const { send, organizationId } = await newIngestion();
    const root = span();
    const first = child(root, { status: 'running', endedAt: undefined });
    delete first.endedAt;
    await send(batch(root, first));
    const bystander = span();
    const result = await send(batch(bystander, change(first)));
    expectConflict(result, 'identity_changed');
    expect(result.body.error.details.path).toBe('events.1');
    expect(await storedSpan(organizationId, first.spanId as string)).toMatchObject({
      revision: 0,
      traceId: root.traceId,
      parentSpanId: root.spanId,
    });
    expect(await storedSpan(organizationId, bystander.spanId as string)).toBeUndefined();
  });

  it.each([
    ['parentSpanId', (c: Record<string, unknown>) => ({ ...c, revision: 1, parentSpanId: hex(8) })],
    ['rootSpanId', (c: Record<string, unknown>) => ({ ...c, revision: 1, rootSpanId: hex(8) })],
  ])('an older revision naming another %s → 409 identity_changed, like a newer one', async (_label, change) => {
    const { send, organizationId } = await newIngestion();
    const root = span();
    const first = child(root);
    await send(batch(root, { ...first, revision: 2 }));
    const result = await send(batch(change(first)));
    expectConflict(result, 'identity_changed');
    expect(await storedSpan(organizationId, first.spanId as string)).toMatchObject({
      revision: 2,
      parentSpanId: root.spanId,
      rootSpanId: root.spanId,
    });
    // The same older revision with the stored identity is still acknowledged without a write.
    expect((await send(batch({ ...first, revision: 1, name: 'stale' }))).body).toEqual({ accepted: 1 });
    expect((await storedSpan(organizationId, first.spanId as string)).name).toBe(first.name);
  });

  it('a new child naming another root than its stored trace → 409 identity_changed', async () => {
    const { send, organizationId } = await newIngestion();
    const root = span();
    await send(batch(root));
    const stray = child(root, { rootSpanId: hex(8) });
    expectConflict(await send(batch(stray)), 'identity_changed');
    expect(await storedSpans(organizationId)).toHaveLength(1);
  });

  it('a finished span cannot go back to running', async () => {
    const { send, organizationId } = await newIngestion();
    const root = span();
    await send(batch(finished(root, 1)));
    const result = await send(batch({ ...root, revision: 2 }));
    expectConflict(result, 'reopened');
    expect(await storedSpan(organizationId, root.spanId as string)).toMatchObject({ revision: 1, status: 'success' });
  });

  it('a finished span may be revised while it stays finished', async () => {
    const { send, organizationId } = await newIngestion();
    const root = span();
    await send(batch(finished(root, 1)));
    expect((await send(batch(finished(root, 2, { status: 'error' })))).status).toBe(200);
    expect((await storedSpan(organizationId, root.spanId as string)).status).toBe('error');
  });

  it('a conflict late in a batch rolls back the spans written before it', async () => {
    const { send, organizationId } = await newIngestion();
    const existing = span({ name: 'kept' });
    await send(batch(existing));
    // New spans sort before and after the conflicting one, so some are inserted before it is checked.
    const fresh = Array.from({ length: 10 }, () => span());
    const result = await send(batch(...fresh, { ...existing, name: 'rewritten' }));
    expectConflict(result, 'revision_conflict');
    expect(result.body.error.details.path).toBe('events.10');
    const rows = await storedSpans(organizationId);
    expect(rows.map((r) => r.spanId)).toEqual([existing.spanId]);
    expect(rows[0].name).toBe('kept');
  });
});

describe('span state: several events for one span in one batch', () => {
  it('equals sending them one by one in revision order', async () => {
    const { send, organizationId } = await newIngestion();
    const root = span();
    const result = await send(batch(finished(root, 2), { ...root, revision: 1, name: 'middle' }, root));
    expect(result.body).toEqual({ accepted: 3 });
    expect(await storedSpan(organizationId, root.spanId as string)).toMatchObject({
      revision: 2,
      status: 'success',
      name: root.name,
    });
  });

  it('an identical event twice in a batch is fine', async () => {
    const { send, organizationId } = await newIngestion();
    const root = span();
    expect((await send(batch(root, root))).body).toEqual({ accepted: 2 });
    expect(await storedSpans(organizationId)).toHaveLength(1);
  });

  it.each([
    [
      'same revision with different content',
      (root: Record<string, unknown>) => [root, { ...root, name: 'other' }],
      'revision_conflict',
    ],
    [
      'running after finished',
      (root: Record<string, unknown>) => [finished(root, 1), { ...root, revision: 2 }],
      'reopened',
    ],
    [
      'a changed parent',
      (root: Record<string, unknown>) => {
        const first = child(root);
        return [first, { ...first, revision: 1, parentSpanId: hex(8) }];
      },
      'identity_changed',
    ],
  ])('%s → 409, nothing stored', async (_label, events, state) => {
    const { send, organizationId } = await newIngestion();
    expectConflict(await send(batch(span(), ...events(span()))), state);
    expect(await storedSpans(organizationId)).toHaveLength(0);
  });

  it('a stored revision inside the batch with other content → 409 even when a higher one follows', async () => {
    const { send, organizationId } = await newIngestion();
    const root = span();
    await send(batch(root));
    expectConflict(await send(batch({ ...root, name: 'rewritten' }, finished(root, 1))), 'revision_conflict');
    expect((await storedSpan(organizationId, root.spanId as string)).revision).toBe(0);
  });

  it('a running revision inside the batch after a stored finished one → 409 reopened', async () => {
    const { send, organizationId } = await newIngestion();
    const root = span();
    await send(batch(finished(root, 1)));
    expectConflict(await send(batch({ ...root, revision: 2 }, finished(root, 3))), 'reopened');
    expect((await storedSpan(organizationId, root.spanId as string)).revision).toBe(1);
  });
});

describe('span state: concurrent batches', () => {
  it('batches for one span with different revisions end at the highest, whatever the interleaving', async () => {
    const { send, organizationId } = await newIngestion();
    const root = span();
    const revisions = Array.from({ length: 12 }, (_, i) => i);
    const results = await Promise.all(
      revisions.map((revision) =>
        send(batch(revision === 11 ? finished(root, 11) : { ...root, revision, name: `rev ${revision}` })),
      ),
    );
    for (const result of results) expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(await storedSpan(organizationId, root.spanId as string)).toMatchObject({ revision: 11, status: 'success' });
  });

  it('batches sharing spans in different orders never deadlock and all land', async () => {
    const { send, organizationId } = await newIngestion();
    const spans = Array.from({ length: 8 }, () => span());
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, round) => {
        const order = round % 2 === 0 ? spans : [...spans].reverse();
        return send(batch(...order.map((s) => ({ ...s, revision: round, name: `round ${round}` }))));
      }),
    );
    for (const result of results) expect(result.status, JSON.stringify(result.body)).toBe(200);
    const rows = await storedSpans(organizationId);
    expect(rows).toHaveLength(8);
    for (const row of rows) expect(row.revision).toBe(5);
  });

  it('the same revision with different content at once → exactly one 200, the other 409', async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const { send, organizationId } = await newIngestion();
      const root = span();
      const [a, b] = await Promise.all([
        send(batch({ ...root, name: 'writer a' })),
        send(batch({ ...root, name: 'writer b' })),
      ]);
      const statuses = [a.status, b.status].sort();
      expect(statuses).toEqual([200, 409]);
      const loser = a.status === 409 ? a : b;
      expect(loser.body.error.details.state).toBe('revision_conflict');
      const winner = a.status === 200 ? 'writer a' : 'writer b';
      expect((await storedSpan(organizationId, root.spanId as string)).name).toBe(winner);
    }
  });

  it('first batches of one new trace naming different roots at once → one 200, the others 409', async () => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const { send, organizationId } = await newIngestion();
      const first = span();
      const roots = [first, ...Array.from({ length: 5 }, () => span({ traceId: first.traceId }))];
      const results = await Promise.all(roots.map((root) => send(batch(root, child(root)))));
      expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
      for (const lost of results.filter((r) => r.status === 409))
        expect(lost.body.error.details.state).toBe('identity_changed');
      expect(new Set((await storedSpans(organizationId)).map((row) => row.rootSpanId)).size).toBe(1);
    }
  });
});
