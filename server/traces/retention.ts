import { sql } from 'drizzle-orm';
import { rowsOf, type Database, type Db } from '@/db/client';
import { traceRetention } from '@/db/schema';
import { reserveConnection } from '@/db/prepared';
import { config } from '../config';

// Trace retention (API.md "Scale settings", docs/decisions.md "Partitioned trace store"). spans and
// traces are partitioned by keep_until, a week per partition (db/schema/traces.ts): a trace is kept
// for its plan's days from the day it was first stored, and goes with its whole partition in the
// week after that. Nothing is deleted row by row.

type RetentionDays = { free: number; pro: number };

const partitionDays = 7;

/**
 * At every start and hourly: the configured days where the ingestion functions read them, and
 * the partitions a trace stored from now until the next run can need (two weeks past the longest
 * retention). Answers how many partition tables it created.
 */
export async function prepareTraceStore(db: Db, days: RetentionDays = config().traceRetentionDays): Promise<number> {
  await db
    .insert(traceRetention)
    .values([
      { plan: 'free', days: days.free },
      { plan: 'pro', days: days.pro },
    ])
    .onConflictDoUpdate({
      target: traceRetention.plan,
      set: { days: sql`excluded.days` },
      setWhere: sql`${traceRetention.days} <> excluded.days`,
    });
  const ahead = Math.max(days.free, days.pro) + 2 * partitionDays;
  const [{ created }] = rowsOf<{ created: number }>(
    await db.execute(sql`select ensure_trace_partitions(current_date + ${ahead}::integer) as created`),
  );
  return created;
}

/**
 * The days in force: what the ingestion functions read (written by the last process to start),
 * else this process's own settings. What the Billing page and the trace explorer show, so that they
 * say what is applied even where one process was started with other values.
 */
export async function retentionInForce(db: Db): Promise<RetentionDays> {
  const days = { ...config().traceRetentionDays };
  for (const row of await db.select().from(traceRetention)) {
    if (row.plan === 'free' || row.plan === 'pro') days[row.plan] = row.days;
  }
  return days;
}

const sweepLock = `hashtextextended('drop_expired_trace_partitions', 0)`;

// One sweep at a time across processes (several workers, or `all` beside a worker, whose hours can
// coincide): a session advisory lock held on a connection of its own for the sweep, since DETACH …
// CONCURRENTLY cannot run inside a transaction (so a transaction's lock cannot cover it). A process
// that does not get the lock skips its run: another one is sweeping. PGlite is one process.
async function oneSweepAtATime(database: Pick<Database, 'db' | 'kind'>, sweep: () => Promise<string[]>) {
  if (database.kind !== 'postgres') return sweep();
  const held = await reserveConnection(database.db);
  try {
    const [{ locked }] = await held.unsafe(`select pg_try_advisory_lock(${sweepLock}) as locked`);
    if (locked !== true) return [];
    try {
      return await sweep();
    } finally {
      await held.unsafe(`select pg_advisory_unlock(${sweepLock})`);
    }
  } finally {
    held.release();
  }
}

/**
 * Hourly in the worker: the partitions whose week has passed are detached (CONCURRENTLY on
 * Postgres, so ingestion and reads never wait on it; one left half-way by a crash is finalized)
 * and dropped, spans and traces of a week alike. Answers the tables dropped (none when another
 * process was sweeping at the same time).
 */
export function dropExpiredTracePartitions(database: Pick<Database, 'db' | 'kind'>): Promise<string[]> {
  return oneSweepAtATime(database, () => sweepExpired(database));
}

async function sweepExpired({ db, kind }: Pick<Database, 'db' | 'kind'>): Promise<string[]> {
  const expired = rowsOf<{ parent: string; partition: string; attached: boolean; pending: boolean }>(
    await db.execute(sql`select parent, "partition", attached, pending from expired_trace_partitions()`),
  );
  for (const table of expired) {
    // Names come from the catalog and match ^(spans|traces)_k[0-9]{8}$ (expired_trace_partitions).
    const [parent, partition] = [sql.identifier(table.parent), sql.identifier(table.partition)];
    if (table.attached) {
      const how = table.pending ? sql`finalize` : kind === 'postgres' ? sql`concurrently` : sql``;
      await db.execute(sql`alter table ${parent} detach partition ${partition} ${how}`);
    }
    await db.execute(sql`drop table if exists ${partition}`);
  }
  return expired.map((table) => table.partition);
}
