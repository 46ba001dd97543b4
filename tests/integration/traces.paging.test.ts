import { TRPCError } from '@trpc/server';
import { beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { storeBatch } from '@/server/traces/ingest';
import type { SpanSnapshot, TraceBatch } from '@/server/traces/ingest-schema';
import { createCaller } from '@/server/trpc/root';
import { createTrpcContext } from '@/server/trpc/init';
import { hex, newIngestionKey } from '../helpers/ingestion';
import { newTeam } from '../helpers/api';

// GET …/traces/{traceId} returns at most 1,000 spans per page, ordered by (startedAt, spanId), and
// nextCursor for the rest (API.md, Input hygiene).

beforeAll(() => getDb().then(() => undefined), 120_000);

const cursorOf = (values: unknown) => Buffer.from(JSON.stringify(values)).toString('base64url');

// A trace of `count` spans sent through ingestion; many share a start time, so ties are ordered by spanId.
async function bigTrace(organizationId: string, count: number) {
  const { keyId } = await newIngestionKey(organizationId);
  const traceId = hex(16);
  const root = hex(8);
  const t0 = Date.now() - 3_600_000;
  const events: SpanSnapshot[] = [
    {
      traceId,
      spanId: root,
      rootSpanId: root,
      revision: 0,
      name: 'root',
      service: 'api',
      kind: 'execution',
      status: 'running',
      startedAt: t0,
    } as SpanSnapshot,
  ];
  for (let i = 1; i < count; i++) {
    events.push({
      traceId,
      spanId: hex(8),
      rootSpanId: root,
      parentSpanId: root,
      revision: 0,
      name: `step ${i}`,
      service: 'api',
      kind: 'tool',
      status: 'success',
      startedAt: t0 + Math.floor(i / 7),
      endedAt: t0 + Math.floor(i / 7) + 1,
    } as SpanSnapshot);
  }
  const db = await getDb();
  for (let i = 0; i < events.length; i += 50)
    await storeBatch(db, keyId, { version: 1, events: events.slice(i, i + 50) } as TraceBatch);
  const order = events
    .map((e) => [e.startedAt, e.spanId] as const)
    .sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : 1));
  return { traceId, expected: order.map(([, spanId]) => spanId) };
}

describe('trace paging', () => {
  it('pages a 2,500-span trace through the API and tRPC: 1,000 + 1,000 + 500, none lost or repeated', async () => {
    const { org, viewer } = await newTeam();
    const { traceId, expected } = await bigTrace(org.id, 2500);

    const rest: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await viewer.call('GET', `/organizations/${org.id}/traces/${traceId}`, {
        query: cursor ? `cursor=${cursor}` : undefined,
      });
      expect(page.status, JSON.stringify(page.body).slice(0, 300)).toBe(200);
      expect(page.body).toMatchObject({ traceId, spanCount: 2500 });
      sizes.push(page.body.spans.length);
      rest.push(...page.body.spans.map((s: any) => s.spanId));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(sizes).toEqual([1000, 1000, 500]);
    expect(rest).toEqual(expected);

    const caller = createCaller(
      await createTrpcContext({ actor: { userId: viewer.id, clientId: 'dashboard', human: true } }),
    );
    const viaTrpc: string[] = [];
    let next: string | null | undefined;
    do {
      const page = await caller.traces.get({ organizationId: org.id, traceId, ...(next ? { cursor: next } : {}) });
      expect(page.spanCount).toBe(2500);
      viaTrpc.push(...page.spans.map((s) => s.spanId));
      next = page.nextCursor;
    } while (next);
    expect(viaTrpc).toEqual(expected);
  }, 120_000);

  it('a trace of at most 1,000 spans comes in one page with nextCursor null', async () => {
    const { org, viewer } = await newTeam();
    const { traceId, expected } = await bigTrace(org.id, 1000);
    const page = await viewer.call('GET', `/organizations/${org.id}/traces/${traceId}`);
    expect(page.body.spans.map((s: any) => s.spanId)).toEqual(expected);
    expect(page.body.nextCursor).toBeNull();
  }, 60_000);

  it.each([
    ['not base64 JSON', 'nope'],
    ['a string start', cursorOf(['abc', 'x'])],
    ['a fractional start', cursorOf([1.5, 'x'])],
    ['a number span id', cursorOf([1, 2])],
    ['one value', cursorOf([1])],
    ['three values', cursorOf([1, 'a', 'b'])],
    ['an object', cursorOf({ a: 1 })],
    ['too long', 'x'.repeat(501)],
    ['empty', ''],
  ])('a cursor that is %s → 400 invalid_request (REST and tRPC)', async (_label, cursor) => {
    const { org, viewer } = await newTeam();
    const { traceId } = await bigTrace(org.id, 2);
    const result = await viewer.call('GET', `/organizations/${org.id}/traces/${traceId}`, {
      query: `cursor=${encodeURIComponent(cursor)}`,
    });
    expect(result.status, JSON.stringify(result.body)).toBe(400);
    expect(result.body.error.code).toBe('invalid_request');
    const caller = createCaller(
      await createTrpcContext({ actor: { userId: viewer.id, clientId: 'dashboard', human: true } }),
    );
    const error = await caller.traces.get({ organizationId: org.id, traceId, cursor }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TRPCError);
    expect((error as TRPCError).code).toBe('BAD_REQUEST');
  });

  it('an unknown query parameter → 400; an unknown trace with a cursor → 404', async () => {
    const { org, viewer } = await newTeam();
    const { traceId } = await bigTrace(org.id, 2);
    const unknown = await viewer.call('GET', `/organizations/${org.id}/traces/${traceId}`, { query: 'limit=5' });
    expect(unknown.status).toBe(400);
    const missing = await viewer.call('GET', `/organizations/${org.id}/traces/${hex(16)}`, {
      query: `cursor=${cursorOf([1, 'a'])}`,
    });
    expect(missing.status).toBe(404);
  });
});
