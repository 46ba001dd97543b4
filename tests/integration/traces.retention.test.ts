import { eq, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { getDatabase, getDb, rowsOf } from '@/db/client';
import { organizations, spans, traceRetention, traces } from '@/db/schema';
import { reserveConnection } from '@/db/prepared';
import { storeOtlpSpans } from '@/server/otlp/store';
import { dropExpiredTracePartitions, prepareTraceStore } from '@/server/traces/retention';
import { batch, child, hex, newIngestion, span } from '../helpers/ingestion';

// The partitioned trace store (db/schema/traces.ts, server/traces/retention.ts): each trace is
// kept until its first arrival plus its plan's days, with all its spans in its week's partition;
// the worker drops whole partitions whose week has passed.

beforeAll(() => getDb().then(() => undefined), 120_000);

const day = (offset: number) => sql`(current_date + ${offset}::integer)::text`;

async function today(plus: number): Promise<string> {
  const db = await getDb();
  const [{ value }] = rowsOf<{ value: string }>(await db.execute(sql`select ${day(plus)} as value`));
  return value;
}

async function keptUntil(organizationId: string) {
  const db = await getDb();
  const [traceRows, spanRows] = await Promise.all([
    db
      .select({ traceId: traces.traceId, keepUntil: traces.keepUntil })
      .from(traces)
      .where(eq(traces.organizationId, organizationId)),
    db
      .select({ traceId: spans.traceId, spanId: spans.spanId, keepUntil: spans.keepUntil })
      .from(spans)
      .where(eq(spans.organizationId, organizationId)),
  ]);
  return { traces: new Map(traceRows.map((row) => [row.traceId, row.keepUntil])), spans: spanRows };
}

async function setPlan(organizationId: string, plan: 'free' | 'pro') {
  const db = await getDb();
  await db.update(organizations).set({ plan }).where(eq(organizations.id, organizationId));
}

async function tableExists(name: string): Promise<boolean> {
  const db = await getDb();
  const [{ found }] = rowsOf<{ found: boolean }>(
    await db.execute(sql`select to_regclass(${name}) is not null as found`),
  );
  return found;
}

describe('trace retention', () => {
  it("a trace is kept for its plan's days from its first arrival, and its later spans stay with it", async () => {
    const { send, organizationId } = await newIngestion();
    const root = span();
    expect((await send(batch(root))).status).toBe(200);
    // An upgrade applies to the traces stored from then on; a stored trace keeps its partition.
    await setPlan(organizationId, 'pro');
    const later = span();
    expect((await send(batch(child(root), later))).status).toBe(200);

    const kept = await keptUntil(organizationId);
    expect(kept.traces.get(root.traceId as string)).toBe(await today(30));
    expect(kept.traces.get(later.traceId as string)).toBe(await today(90));
    expect(kept.spans).toHaveLength(3);
    for (const row of kept.spans) expect(row.keepUntil).toBe(kept.traces.get(row.traceId));
  });

  it('a span id stored under a trace of another partition names another span there, native and OTLP', async () => {
    const { send, organizationId, keyId } = await newIngestion();
    const taken = span();
    await send(batch(taken));
    await setPlan(organizationId, 'pro'); // the next trace goes to another partition
    const again: Record<string, unknown> = { ...span({ spanId: taken.spanId, rootSpanId: taken.spanId }), revision: 1 };
    const result = await send(batch(again));
    expect(result.status, JSON.stringify(result.body)).toBe(200);

    const otherTrace = hex(16);
    const otlp = await storeOtlpSpans(
      await getDb(),
      keyId,
      [
        {
          index: 0,
          span: {
            traceId: otherTrace,
            spanId: taken.spanId as string,
            name: 'op',
            service: 'checkout',
            kind: 'execution',
            omitted: [],
            status: 'success',
            startedAt: Date.now() - 1000,
            endedAt: Date.now(),
          },
        },
        {
          index: 1,
          span: {
            traceId: otherTrace,
            spanId: hex(8),
            parentSpanId: taken.spanId as string,
            name: 'op',
            service: 'checkout',
            kind: 'custom',
            omitted: [],
            status: 'success',
            startedAt: Date.now() - 900,
            endedAt: Date.now(),
          },
        },
      ],
      [],
    );
    expect(otlp).toEqual({ rejectedSpans: 0 });

    // Three spans with one id, each in its own trace's partition, the first trace untouched.
    const kept = await keptUntil(organizationId);
    const sorted = (rows: unknown[]) => rows.map((row) => JSON.stringify(row)).sort();
    expect(sorted(kept.spans.filter((row) => row.spanId === taken.spanId))).toEqual(
      sorted([
        { traceId: taken.traceId, spanId: taken.spanId, keepUntil: await today(30) },
        { traceId: again.traceId, spanId: taken.spanId, keepUntil: await today(90) },
        { traceId: otherTrace, spanId: taken.spanId, keepUntil: await today(90) },
      ]),
    );
    expect([...kept.traces.keys()].sort()).toEqual([taken.traceId, again.traceId, otherTrace].sort());
  });

  it('every start writes the configured days and creates the partitions ahead of the longest', async () => {
    const db = await getDb();
    try {
      await prepareTraceStore(db, { free: 30, pro: 130 });
      const rows = await db.select().from(traceRetention).orderBy(traceRetention.plan);
      expect(rows).toEqual([
        { plan: 'free', days: 30 },
        { plan: 'pro', days: 130 },
      ]);
      const [{ monday }] = rowsOf<{ monday: string }>(
        await db.execute(sql`select to_char(date_trunc('week', current_date + 144), 'YYYYMMDD') as monday`),
      );
      expect(await tableExists(`spans_k${monday}`)).toBe(true);
      expect(await tableExists(`traces_k${monday}`)).toBe(true);
      expect(await prepareTraceStore(db, { free: 30, pro: 130 })).toBe(0);
    } finally {
      await prepareTraceStore(db, { free: 30, pro: 90 });
    }
  });

  it('drops whole partitions whose week has passed (attached or left detached), and nothing else', async () => {
    const database = await getDatabase();
    const db = database.db;
    // Two past weeks, as if time had moved on: one attached with a trace in it, one detached already.
    for (const table of ['traces', 'spans'])
      await db.execute(
        sql.raw(
          `create table if not exists ${table}_k20200106 partition of ${table} for values from ('2020-01-06') to ('2020-01-13')`,
        ),
      );
    await db.execute(sql.raw(`create table if not exists spans_k20200113 (like spans)`));
    const { send, organizationId } = await newIngestion();
    const current = span();
    await send(batch(current));
    const old = hex(16);
    await db.execute(sql`insert into traces (organization_id, trace_id, root_span_id, head_span_id, head_started_at, name, service,
      status, started_at, running_count, span_count, kinds, keep_until)
      values (${organizationId}, ${old}, 'a1a1a1a1a1a1a1a1', 'a1a1a1a1a1a1a1a1', 1, 'old', 'api', 'success', 1, 0, 1, 1, '2020-01-08')`);
    await db.execute(sql`insert into spans (organization_id, trace_id, span_id, root_span_id, revision, name, service, kind, status,
      started_at, ended_at, snapshot_digest, ingestion_key_id, application, environment, keep_until)
      values (${organizationId}, ${old}, 'a1a1a1a1a1a1a1a1', 'a1a1a1a1a1a1a1a1', 0, 'old', 'api', 'custom', 'success', 1, 2, 'x', 'k', 'a', 'e', '2020-01-08')`);
    expect((await keptUntil(organizationId)).traces.size).toBe(2);

    const dropped = await dropExpiredTracePartitions(database);
    expect(dropped).toEqual(expect.arrayContaining(['traces_k20200106', 'spans_k20200106', 'spans_k20200113']));
    // Nothing else: any other partition dropped is one whose week has really passed (a run that
    // crosses a Monday drops the partition of the week the database was created in).
    const [{ today }] = rowsOf<{ today: string }>(await db.execute(sql`select current_date::text as today`));
    const weekPassed = (name: string) => {
      const match = /^(spans|traces)_k(\d{4})(\d{2})(\d{2})$/.exec(name);
      if (!match) return false;
      const end = Date.UTC(Number(match[2]), Number(match[3]) - 1, Number(match[4]) + 7);
      return end <= Date.parse(`${today}T00:00:00Z`);
    };
    expect(dropped.filter((name) => !weekPassed(name))).toEqual([]);
    for (const name of ['traces_k20200106', 'spans_k20200106', 'spans_k20200113'])
      expect(await tableExists(name)).toBe(false);
    const kept = await keptUntil(organizationId);
    expect([...kept.traces.keys()]).toEqual([current.traceId]);
    expect(kept.spans.map((row) => row.spanId)).toEqual([current.spanId]);
    expect(await dropExpiredTracePartitions(database)).toEqual([]);
  });
});

describe.skipIf(!process.env.DATABASE_URL)('one sweep at a time (Postgres: several worker processes)', () => {
  const lock = `hashtextextended('drop_expired_trace_partitions', 0)`;

  async function expiredWeek(monday: string) {
    const db = await getDb();
    const to = sql`(${monday}::date + 7)::text`;
    const [{ until }] = rowsOf<{ until: string }>(await db.execute(sql`select ${to} as until`));
    for (const table of ['traces', 'spans'])
      await db.execute(
        sql.raw(
          `create table if not exists ${table}_k${monday.replaceAll('-', '')} partition of ${table} for values from ('${monday}') to ('${until}')`,
        ),
      );
  }

  it('skips its run while another process holds the sweep, and drops nothing', async () => {
    const database = await getDatabase();
    await expiredWeek('2019-03-04');
    const other = await reserveConnection(database.db);
    try {
      const [{ locked }] = await other.unsafe(`select pg_try_advisory_lock(${lock}) as locked`);
      expect(locked).toBe(true);
      expect(await dropExpiredTracePartitions(database)).toEqual([]);
      expect(await tableExists('spans_k20190304')).toBe(true);
      expect(await tableExists('traces_k20190304')).toBe(true);
    } finally {
      await other.unsafe(`select pg_advisory_unlock(${lock})`);
      other.release();
    }
    expect(await dropExpiredTracePartitions(database)).toEqual(
      expect.arrayContaining(['traces_k20190304', 'spans_k20190304']),
    );
    expect(await tableExists('spans_k20190304')).toBe(false);
  });

  it('two sweeps at once: each expired table is dropped once, and neither fails', async () => {
    const database = await getDatabase();
    for (const monday of ['2019-04-01', '2019-04-08', '2019-04-15']) await expiredWeek(monday);
    const [first, second] = await Promise.all([
      dropExpiredTracePartitions(database),
      dropExpiredTracePartitions(database),
    ]);
    const all = [...first, ...second];
    expect(new Set(all).size).toBe(all.length);
    expect(all).toEqual(expect.arrayContaining(['spans_k20190401', 'traces_k20190408', 'spans_k20190415']));
    for (const monday of ['20190401', '20190408', '20190415'])
      for (const table of ['spans', 'traces']) expect(await tableExists(`${table}_k${monday}`)).toBe(false);
  });
});
