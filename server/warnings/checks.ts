import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '@/db/client';
import { log } from '../log';
import { checkUnusedKeys } from './key-unused';

// The periodic warning checks, run by the worker role (and the all-in-one process).

// archived_prompt_used is resolved once the prompt has not been retrieved for this long, or at
// once when it has no unrevoked retrieval key left (nothing can retrieve it any more).
const archivedQuietDays = 7;
const resolveLimit = 1000;
const warningCheckIntervalMs = 5 * 60 * 1000;

export async function resolveQuietArchivedUse(db: Db, now = new Date()): Promise<number> {
  const at = now.toISOString();
  const rows = rowsOf<{ id: string }>(
    await db.execute(sql`
      update warnings set resolved_at = ${at}::timestamptz
      where id in (
        select w.id from warnings w
        where w.kind = 'archived_prompt_used' and w.resolved_at is null
          and (w.last_seen_at <= ${at}::timestamptz - make_interval(days => ${archivedQuietDays})
            or not exists (select 1 from retrieval_keys k where k.organization_id = w.organization_id and k.prompt_id = w.subject_id and k.revoked_at is null))
        limit ${resolveLimit})
      returning id`),
  );
  return rows.length;
}

export type WarningCheckResult = { keyUnusedRaised: number; keyUnusedResolved: number; archivedUseResolved: number };

// Callable from tests with their own clock.
export async function runWarningChecks(db: Db, now = new Date()): Promise<WarningCheckResult> {
  const keys = await checkUnusedKeys(db, now);
  const archivedUseResolved = await resolveQuietArchivedUse(db, now);
  return { keyUnusedRaised: keys.raised, keyUnusedResolved: keys.resolved, archivedUseResolved };
}

// Every few minutes, and once at start; a run never overlaps the previous one.
export function startWarningChecks(db: Db, keepAlive: boolean): () => void {
  let running = false;
  const run = async () => {
    if (running) return;
    running = true;
    try {
      const result = await runWarningChecks(db);
      if (result.keyUnusedRaised + result.keyUnusedResolved + result.archivedUseResolved > 0)
        log.info({ job: 'warningChecks', ...result }, 'housekeeping');
    } catch (error) {
      log.error({ job: 'warningChecks', err: error }, 'housekeeping failed');
    } finally {
      running = false;
    }
  };
  void run();
  const timer = setInterval(() => void run(), warningCheckIntervalMs);
  if (!keepAlive) timer.unref();
  return () => clearInterval(timer);
}
