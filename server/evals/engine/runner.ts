import { sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { config } from '@/server/config';
import { log } from '@/server/log';
import { loadRun } from './claim';
import { prepareRun } from './execute';
import { enlist, stopRun, type Engine, type EngineSettings } from './lanes';
import { settlePreModelFailures } from './pre-model';
import { refreshRun } from './progress';
import { settledRefresh } from './progress-refresh';
import { rowsOf } from '@/db/client';

// Executes runs. Runs of the same organization and model route share one group of lanes in this
// process (min(EVAL_CONCURRENCY_PER_ORG, _PER_ROUTE) of them); a lane takes a slot of its
// organization's and its route's semaphore, then claims, executes and stores cases of the group's
// runs in turn (round robin, so runs started together advance together), storing each case's
// outcome in the same database call that claims its next case. While another group waits for one
// of its semaphores, a lane stores on its own and gives its slots back after each case. The claim
// itself counts running cases of the organization in the database, so several worker processes
// together respect the organization's bound too.
// The lanes are in lanes.ts, their semaphores in semaphores.ts, the coalesced progress refreshes
// in progress-refresh.ts.

export type { Engine, EngineSettings } from './lanes';

export function engineSettings(): EngineSettings {
  const cfg = config();
  return {
    perOrg: cfg.evalConcurrencyPerOrg,
    perRoute: cfg.evalConcurrencyPerRoute,
    heartbeatMs: cfg.evalWorkerHeartbeatMs,
    maxAttempts: cfg.evalMaxAttempts,
  };
}

export function newEngine(db: Db, workerId: string, settings = engineSettings()): Engine {
  return { db, workerId, settings, stopping: false, activeRuns: new Map(), groups: new Map() };
}

// Also stops this process's work on runs cancelled since the last beat (cancel is another process's write).
export async function heartbeat(engine: Engine): Promise<void> {
  await engine.db.execute(sql`
    insert into eval_workers (id, created_at, heartbeat_at) values (${engine.workerId}, now(), now())
    on conflict (id) do update set heartbeat_at = now()`);
  const active = [...engine.activeRuns.keys()];
  if (active.length === 0) return;
  const cancelled = rowsOf<{ id: string }>(
    await engine.db.execute(sql`
      select id from eval_runs where id in (select jsonb_array_elements_text(${JSON.stringify(active)}::jsonb))
        and status = 'cancelled'`),
  );
  for (const { id } of cancelled) stopRun(engine, id);
}

export async function removeWorker(engine: Engine): Promise<void> {
  await engine.db.execute(sql`delete from eval_workers where id = ${engine.workerId}`);
}

// Works one run until nothing in it is claimable, then refreshes its progress. Cases that would
// fail before any model call are settled first, uncharged. Never throws for a case's failure
// (that is the case's `error`); a database failure is logged and rethrown.
export async function processRun(engine: Engine, runId: string): Promise<void> {
  const run = await loadRun(engine.db, runId);
  if (!run) return;
  engine.activeRuns.set(runId, (engine.activeRuns.get(runId) ?? 0) + 1);
  try {
    const prepared = prepareRun(run);
    await settlePreModelFailures(engine.db, run, prepared);
    const entry = enlist(engine, run, prepared);
    await entry.done;
    if (entry.error !== undefined) throw entry.error;
    await settledRefresh(runId);
    await refreshRun({ db: engine.db }, runId);
  } catch (error) {
    log.error({ err: error, runId }, 'evaluation run failed in the engine');
    throw error;
  } finally {
    const left = (engine.activeRuns.get(runId) ?? 1) - 1;
    if (left > 0) engine.activeRuns.set(runId, left);
    else engine.activeRuns.delete(runId);
  }
}

// Runs of pending or running evaluations that have claimable work: a pending case, or one held by
// a worker whose heartbeat is stale (or gone).
export async function claimableRuns(
  db: Db,
  staleMs: number,
  limit = 200,
  organizationIds?: readonly string[],
): Promise<string[]> {
  const scope = organizationIds ? JSON.stringify(organizationIds) : null;
  const rows = rowsOf<{ runId: string }>(
    await db.execute(sql`
      select distinct r.run_id as "runId"
      from eval_results r
      join eval_runs run on run.id = r.run_id and run.status in ('pending', 'running')
      where (${scope}::jsonb is null or run.organization_id in (select jsonb_array_elements_text(${scope}::jsonb)))
        and (r.status = 'pending' or (r.status = 'running' and not exists (
          select 1 from eval_workers w where w.id = r.worker_id and w.heartbeat_at > now() - (${staleMs} * interval '1 millisecond'))))
        and not exists (
          select 1 from evaluations e
          where (e.candidate_run_id = r.run_id or e.production_run_id = r.run_id) and e.status in ('cancelled', 'paused'))
      limit ${limit}`),
  );
  return rows.map((r) => r.runId);
}
