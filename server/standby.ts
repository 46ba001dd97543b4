import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import { getDatabase, rowsOf, type Database, type Reader } from '@/db/client';
import { preparedValues } from '@/db/prepared';
import { config } from './config';
import { awaitAfterCommit, type DbContext } from './context';
import { AppError } from './errors';
import { log } from './log';
import { waitForRetrievalCaches } from './retrieval/answer-cache';

// Retrieval may read a Postgres hot standby (RETRIEVAL_DATABASE_URL, docs/deploy.md). A write that
// changes what retrieval returns answers only once that standby has applied it, so a request sent
// after the answer never sees the state before it, whichever machine serves it. The wait is on the
// standby itself: its replay position against the primary's WAL position read after the commit
// (synchronous_standby_names with remote_apply would be server-wide and wait without a limit while
// the standby is down). Past RETRIEVAL_STANDBY_WAIT_MS the write answers 503, committed.

// A primary (or a promoted standby) applies its own commits: null replay position, no recovery.
const appliedStatement = 'select coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, not pg_is_in_recovery())';

// A healthy standby applies within a few milliseconds: it is asked every millisecond at first, then
// less and less often (2, 4, … up to 50 ms) when it lags.
function pauseBefore(look: number): number {
  return Math.min(2 ** Math.max(0, look - 10), 50);
}

/**
 * Called inside its transaction by every write that changes what retrieval reads (retrieval_keys,
 * prompts' name and state, prompt_versions, prompt_labels, prompt_split_versions): after the commit,
 * the answer waits for the retrieval standby, when one is configured, then for every retrieval
 * process that keeps answers in memory to drop them (server/retrieval/answer-cache.ts).
 */
export function changesRetrieval(ctx: DbContext): void {
  awaitAfterCommit(ctx, afterRetrievalChange);
}

// One function, so that an operation making several such writes waits once (runInTransaction).
const afterRetrievalChange = () => waitForRetrievalReaders();

/**
 * The standby first, then the processes' kept answers (only processes that read the primary keep
 * any: server/retrieval/answer-cache.ts), even when the standby's wait fails. A replay
 * (`announce: false`, server/api/idempotency.ts) waits for what its first answer may have left
 * waiting (a 503), without dropping anything again.
 */
export async function waitForRetrievalReaders(announce = true): Promise<void> {
  const standby = waitForRetrievalStandby().then(
    () => null,
    (error: unknown) => error,
  );
  const failed = await standby;
  await waitForRetrievalCaches(await getDatabase(), announce);
  if (failed) throw failed;
}

/**
 * Creating a retrieval key: it waits for the standby as changesRetrieval does, but past the wait it
 * answers anyway, because its answer carries the one secret a 503 would lose. The new key may then
 * be refused (401) until the standby applies it; nothing stale is served. (No process keeps an
 * answer for a key it has not seen, so there is nothing to drop.)
 */
export function addsRetrievalKey(ctx: DbContext): void {
  if (config().retrievalDatabaseUrl) awaitAfterCommit(ctx, waitForNewKey);
}

const waitForNewKey = () =>
  waitForRetrievalStandby().catch((error: unknown) =>
    log.warn({ err: error }, 'a new retrieval key answered before the retrieval standby applied it'),
  );

/**
 * Resolves once the retrieval standby has applied everything committed on the primary before this
 * call; throws 503 unavailable when it has not within RETRIEVAL_STANDBY_WAIT_MS (also when it cannot
 * be reached meanwhile). Also used before an idempotent replay, whose write may have answered 503.
 */
export async function waitForRetrievalStandby(): Promise<void> {
  const { retrievalDatabaseUrl, retrievalStandbyWaitMs: waitMs } = config();
  if (!retrievalDatabaseUrl) return;
  const database = await getDatabase();
  const reader = database.reader?.();
  if (!reader) return;
  const deadline = performance.now() + waitMs;
  // Written and flushed past this transaction's commit record, which committed before this read.
  const [{ lsn }] = rowsOf<{ lsn: string }>(await database.db.execute(sql`select pg_current_wal_lsn()::text as lsn`));
  for (let look = 0; ; look++) {
    if (await applied(reader, lsn, deadline)) return;
    const left = deadline - performance.now();
    if (left <= 0) throw standbyBehind(waitMs);
    await sleep(Math.min(pauseBefore(look), left));
  }
}

// One look at the standby, given up at the deadline; a standby that cannot be reached has not applied it.
async function applied(reader: Reader, lsn: string, deadline: number): Promise<boolean> {
  const look = preparedValues(reader, appliedStatement, [lsn]).then(
    (rows) => rows[0]?.[0] === true,
    () => false,
  );
  const stop = new AbortController();
  const late = sleep(Math.max(deadline - performance.now(), 0), false, { signal: stop.signal }).catch(() => false);
  try {
    return await Promise.race([look, late]);
  } finally {
    stop.abort();
  }
}

function standbyBehind(waitMs: number): AppError {
  return new AppError(
    'unavailable',
    `The change is saved, but the retrieval standby has not applied it within ${waitMs} ms, so retrieval may still answer what was there before. Retry with the same Idempotency-Key (its saved answer is replayed once the standby has caught up), or read it back.`,
    { reason: 'retrieval_standby_behind' },
    { 'retry-after': '1' },
  );
}

/**
 * At start, in every role that reads or writes retrieval's data: RETRIEVAL_DATABASE_URL must answer
 * (a wrong URL stops the process instead of failing every retrieval). Says whether it is a standby.
 */
export async function checkRetrievalStandby(database: Database): Promise<'standby' | 'primary'> {
  const reader = database.reader?.();
  if (!reader) throw new Error('RETRIEVAL_DATABASE_URL needs DATABASE_URL: the embedded database has no standby.');
  // A host that drops packets (a wrong address, a firewall) never refuses: the check gives up after
  // a while instead of leaving the process neither serving nor stopped.
  let timer: NodeJS.Timeout | undefined;
  const silence = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer within ${standbyCheckTimeoutMs / 1000} s`)),
      standbyCheckTimeoutMs,
    );
  });
  try {
    const [[recovering]] = await Promise.race([preparedValues(reader, 'select pg_is_in_recovery()', []), silence]);
    return recovering === true ? 'standby' : 'primary';
  } catch (error) {
    throw new Error(`RETRIEVAL_DATABASE_URL: the retrieval standby cannot be reached (${(error as Error).message})`);
  } finally {
    clearTimeout(timer);
  }
}

const standbyCheckTimeoutMs = 15_000;
