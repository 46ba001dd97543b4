import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from '@/db/client';
import { preparedValues } from '@/db/prepared';
import { config } from '../config';
import { AppError } from '../errors';
import { log } from '../log';

// Retrieval answers kept in memory until a change (docs/decisions.md, "P2 retrieval answers kept
// until a change"). A retrieval process keeps what a lookup answered (the key, its prompt, what the
// selector resolved to) and answers the next requests for the same key, prompt and selector from
// memory, without a statement. It stays never stale because every write that changes what retrieval
// returns answers only after every such process has dropped its answers:
//
// - The writer, after its commit, takes the next value of the sequence `retrieval_changes` and sends
//   it on the channel of the same name (NOTIFY), then waits until every process whose lease has not
//   run out has acked that value or a later one (`retrieval_caches`).
// - A process drops every answer when it hears of a change, then acks it. It also reads the
//   sequence each time it renews its lease, so a notification it missed costs the writer at most
//   one renewal period, never a stale answer.
// - A process answers from memory only while its lease runs, as it counts it: from the moment it
//   SENT the renewal that the database accepted. The database's `lease_until` is later than that,
//   so writers never stop waiting for a process that may still answer from memory. A process that
//   died or cannot reach the database stops answering from memory when its lease runs out, and
//   writers stop waiting for it at the same time (at most RETRIEVAL_CACHE_LEASE_MS).
// - An answer is kept only if no change was heard and the lease never lapsed between the moment its
//   lookup was queued and the moment it returned (the `generation` moves on both), so a lookup that
//   read the state before a change never refills what the change dropped.
//
// Only on Postgres and only in a process that reads the primary: the embedded database keeps one
// lookup per request, and a standby (RETRIEVAL_DATABASE_URL) may not have applied a change when it is
// announced. RETRIEVAL_CACHE=false turns it off.

const changesChannel = 'retrieval_changes';
// Bounded by the bytes of what is kept (`weigh`), oldest first out.
const maxBytes = Number(process.env.RETRIEVAL_ANSWER_CACHE_BYTES ?? 64 * 1024 * 1024);

const renewStatement = `insert into retrieval_caches (id, lease_until, acked) values ($1, now() + $2::int4 * interval '1 millisecond', $3)
on conflict (id) do update set lease_until = excluded.lease_until, acked = greatest(retrieval_caches.acked, excluded.acked)
returning (select case when is_called then last_value else 0 end from retrieval_changes)::text`;
const ackStatement = 'update retrieval_caches set acked = greatest(acked, $2) where id = $1';
const leaveStatement = 'delete from retrieval_caches where id = $1';
// Rows of processes gone for a minute (they stopped without leaving): read by nobody, removed by the next renewal.
const sweepStatement = `delete from retrieval_caches where lease_until < now() - interval '1 minute'`;

export class AnswerCache<T> {
  readonly id = randomUUID();
  private readonly entries = new Map<string, { value: T; bytes: number }>();
  private bytes = 0;
  // Moves on every change heard and every lapse of the lease: an answer is kept only when it has not moved.
  private generation = 0;
  // The lease as this process counts it (performance.now() milliseconds).
  private validUntil = 0;
  // The last change whose answers were dropped, and the last one acked.
  private processed = 0;
  private acked = 0;
  private acking = false;
  private renewals = 0;
  private timer: NodeJS.Timeout | undefined;
  private started: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly database: Database,
    private readonly leaseMs: number,
  ) {}

  /** Starts listening and renewing (once); answers come from memory once the first lease is granted. */
  start(): void {
    this.started ??= this.listenAndRenew().catch((error: unknown) => {
      log.warn({ err: error }, 'retrieval: no change listener yet; every request is looked up (retried in 5 s)');
      // Tried again later: a database that was down when the first request came is not the end of it.
      setTimeout(() => {
        this.started = undefined;
        if (!this.stopped) this.start();
      }, 5000).unref();
    });
  }

  private async listenAndRenew(): Promise<void> {
    const listen = this.database.listen;
    if (!listen) return;
    await listen(
      changesChannel,
      (payload) => this.heard(Number(payload)),
      // (Re)connected: what was sent while the connection was away is lost, so everything goes.
      () => this.drop(this.processed),
    );
    await this.renew();
    const every = Math.max(10, Math.floor(this.leaseMs / 5));
    this.timer = setInterval(() => void this.renew(), every);
    this.timer.unref();
  }

  private valid(): boolean {
    return performance.now() < this.validUntil;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The answer kept for `key`, while the lease runs. */
  get(key: string): T | undefined {
    return this.valid() ? this.entries.get(key)?.value : undefined;
  }

  /** Taken when a lookup is queued; `keep` later stores its answer only if nothing moved meanwhile. */
  token(): number {
    return this.valid() ? this.generation : -1;
  }

  /** Stores (or merges into) the answer for `key` if no change was heard since `token`. */
  keep(token: number, key: string, merge: (kept: T | undefined) => T, weigh: (value: T) => number): void {
    if (token !== this.generation || !this.valid()) return;
    const kept = this.entries.get(key);
    const value = merge(kept?.value);
    const bytes = weigh(value);
    if (kept) {
      this.entries.delete(key);
      this.bytes -= kept.bytes;
    }
    this.entries.set(key, { value, bytes });
    this.bytes += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= maxBytes || this.entries.size <= 1) break;
      this.entries.delete(oldest);
      this.bytes -= entry.bytes;
    }
  }

  private drop(change: number): void {
    this.generation++;
    this.entries.clear();
    this.bytes = 0;
    if (change > this.processed) this.processed = change;
  }

  private heard(change: number): void {
    if (!Number.isSafeInteger(change)) return;
    this.drop(change);
    void this.ack();
  }

  // One ack statement at a time; changes heard meanwhile go with the next.
  private async ack(): Promise<void> {
    if (this.acking || this.acked >= this.processed || this.stopped) return;
    this.acking = true;
    const change = this.processed;
    try {
      await preparedValues(this.database.db, ackStatement, [this.id, change]);
      if (change > this.acked) this.acked = change;
    } catch (error) {
      log.warn({ err: error }, 'retrieval: could not ack a change (the next lease renewal will)');
    } finally {
      this.acking = false;
    }
    if (this.acked < this.processed) void this.ack();
  }

  private async renew(): Promise<void> {
    if (this.stopped) return;
    const sent = performance.now();
    const change = this.processed;
    try {
      const [[latest]] = await preparedValues(this.database.db, renewStatement, [this.id, this.leaseMs, change]);
      if (this.stopped) return;
      if (change > this.acked) this.acked = change;
      // The lease lapsed before this renewal was granted: a writer may have stopped waiting for this
      // process meanwhile, so nothing read before now may be kept.
      if (performance.now() >= this.validUntil) this.drop(this.processed);
      const announced = Number(latest);
      if (announced > this.processed) {
        this.drop(announced);
        void this.ack();
      }
      this.validUntil = sent + this.leaseMs * 0.9;
      if (++this.renewals % 600 === 0) await preparedValues(this.database.db, sweepStatement, []);
    } catch (error) {
      log.warn({ err: error }, 'retrieval: could not renew the answer cache lease');
    }
  }

  /** Stops answering from memory and leaves `retrieval_caches`, so that writers stop waiting for it. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.validUntil = 0;
    this.drop(this.processed);
    if (this.timer) clearInterval(this.timer);
    if (this.started) await preparedValues(this.database.db, leaveStatement, [this.id]).catch(() => undefined);
  }
}

const caches = new WeakMap<Database, AnswerCache<unknown>>();

/** The process's answer cache for this database, started on first use; null where there is none. */
export function answerCache<T>(database: Database): AnswerCache<T> | null {
  const { retrievalCache, retrievalCacheLeaseMs, retrievalDatabaseUrl } = config();
  // A standby may not have applied a change yet when it is announced: a process reading one keeps nothing.
  if (!retrievalCache || retrievalDatabaseUrl || database.kind !== 'postgres' || !database.listen) return null;
  let cache = caches.get(database);
  if (cache === undefined) {
    cache = new AnswerCache<unknown>(database, retrievalCacheLeaseMs);
    caches.set(database, cache);
    cache.start();
  }
  return cache as AnswerCache<T>;
}

/** At shutdown: leaves `retrieval_caches` at once instead of making writers wait for the lease. */
export async function stopAnswerCache(database: Database): Promise<void> {
  await caches.get(database)?.stop();
}

const announceStatement = `select c.n::text, pg_notify('${changesChannel}', c.n::text) from (select nextval('retrieval_changes') as n) c`;
const latestStatement = `select (case when is_called then last_value else 0 end)::text from retrieval_changes`;
const waitingStatement = 'select count(*)::int4 from retrieval_caches where lease_until > now() and acked < $1';

// Every process acks within a millisecond or two when it is running: asked every millisecond at
// first, then less and less often (up to 20 ms).
function pauseBefore(look: number): number {
  return Math.min(2 ** Math.max(0, look - 8), 20);
}

/**
 * After a commit that changed what retrieval returns: tells every retrieval process, and resolves
 * once each live one has dropped what it kept (or its lease ran out). Past the lease and a second
 * more (the database unreachable meanwhile) it throws 503, the write committed. `announce: false`
 * (an idempotent replay) only waits for the changes announced so far.
 */
export async function waitForRetrievalCaches(database: Database, announce = true): Promise<void> {
  if (database.kind !== 'postgres') return;
  const deadline = performance.now() + config().retrievalCacheLeaseMs + 1000;
  const [[change]] = await preparedValues(database.db, announce ? announceStatement : latestStatement, []).catch(
    (error: unknown) => {
      log.warn({ err: error }, 'retrieval: could not announce a change to the retrieval processes');
      throw cachesBehind();
    },
  );
  for (let look = 0; ; look++) {
    await sleep(pauseBefore(look));
    const [[waiting]] = await preparedValues(database.db, waitingStatement, [change]).catch(() => [[-1]]);
    if (waiting === 0) return;
    if (performance.now() > deadline) throw cachesBehind();
  }
}

function cachesBehind(): AppError {
  return new AppError(
    'unavailable',
    'The change is saved, but not every retrieval process has confirmed it yet, so retrieval may still answer what was there before. Retry with the same Idempotency-Key (its saved answer is replayed once they have), or read it back.',
    { reason: 'retrieval_cache_behind' },
    { 'retry-after': '1' },
  );
}
