import { sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { config } from '@/server/config';
import { log } from '@/server/log';
import { claimNextCase, finishCase, loadRun, type ClaimSettings, type RunInfo } from './claim';
import { executeCase } from './execute';
import { refreshRun } from './progress';
import { rowsOf, sleep } from './sql';

// Executes runs: each run gets lanes that claim one case at a time, execute it and write it back.
// Lanes take a slot of their organization's and their model route's semaphore before claiming,
// so in-flight cases stay within EVAL_CONCURRENCY_PER_ORG / _PER_ROUTE in this process; the claim
// itself counts running cases of the organization in the database, so several worker processes
// together respect the organization's bound too.

class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly limit: number) {}
  async acquire(): Promise<() => void> {
    if (this.active < this.limit) this.active++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    };
  }
}

// Shared by every engine in the process (the pg-boss worker and drainEvalWork alike).
const semaphores = new Map<string, Semaphore>();
function semaphore(name: string, limit: number): Semaphore {
  const key = `${name}:${limit}`;
  let s = semaphores.get(key);
  if (!s) semaphores.set(key, (s = new Semaphore(limit)));
  return s;
}

export type EngineSettings = { perOrg: number; perRoute: number; heartbeatMs: number; maxAttempts: number };

export function engineSettings(): EngineSettings {
  const cfg = config();
  return { perOrg: cfg.evalConcurrencyPerOrg, perRoute: cfg.evalConcurrencyPerRoute, heartbeatMs: cfg.evalWorkerHeartbeatMs, maxAttempts: cfg.evalMaxAttempts };
}

export type Engine = {
  db: Db;
  workerId: string;
  settings: EngineSettings;
  stopping: boolean;
  // Runs this process is working on now (the sweep does not queue them again).
  activeRuns: Map<string, number>;
};

export function newEngine(db: Db, workerId: string, settings = engineSettings()): Engine {
  return { db, workerId, settings, stopping: false, activeRuns: new Map() };
}

export async function heartbeat(engine: Engine): Promise<void> {
  await engine.db.execute(sql`
    insert into eval_workers (id, created_at, heartbeat_at) values (${engine.workerId}, now(), now())
    on conflict (id) do update set heartbeat_at = now()`);
}

export async function removeWorker(engine: Engine): Promise<void> {
  await engine.db.execute(sql`delete from eval_workers where id = ${engine.workerId}`);
}

async function lane(engine: Engine, run: RunInfo, claimSettings: ClaimSettings, routeKey: string): Promise<void> {
  const { db, settings } = engine;
  while (!engine.stopping) {
    const releaseOrg = await semaphore(`org:${run.organizationId}`, settings.perOrg).acquire();
    const releaseRoute = await semaphore(`route:${routeKey}`, settings.perRoute).acquire();
    try {
      if (engine.stopping) return;
      const outcome = await claimNextCase(db, run, claimSettings);
      if (outcome.kind === 'none' || outcome.kind === 'refused') {
        if (outcome.kind === 'refused') await refreshRun({ db }, run.id);
        return;
      }
      if (outcome.kind === 'busy') {
        releaseRoute();
        releaseOrg();
        await sleep(100 + Math.random() * 200);
        continue;
      }
      if (outcome.kind === 'gave_up') {
        await refreshRun({ db }, run.id);
        continue;
      }
      const { claimed } = outcome;
      if (claimed.firstOfRun) await refreshRun({ db }, run.id);
      const result = await executeCase(run, claimed);
      const written = await finishCase(db, claimed.id, engine.workerId, result);
      if (!written) log.warn({ resultId: claimed.id, runId: run.id }, 'evaluation case was taken over before it finished; its outcome is dropped');
    } finally {
      releaseRoute();
      releaseOrg();
    }
    // Progress off the lane's path: the next case starts while this one is counted.
    scheduleRefresh(engine, run.id);
  }
}

// At most one progress refresh per run in flight and one queued behind it: a burst of finished
// cases costs two refreshes, and no lane waits for one.
const refreshes = new Map<string, { running: Promise<void>; again: boolean }>();
function scheduleRefresh(engine: Engine, runId: string): void {
  const current = refreshes.get(runId);
  if (current) {
    current.again = true;
    return;
  }
  const entry = { running: Promise.resolve(), again: false };
  entry.running = (async () => {
    try {
      do {
        entry.again = false;
        await refreshRun({ db: engine.db }, runId).catch((error: unknown) => log.error({ err: error, runId }, 'evaluation progress refresh failed'));
      } while (entry.again);
    } finally {
      refreshes.delete(runId);
    }
  })();
  refreshes.set(runId, entry);
}

async function settledRefresh(runId: string): Promise<void> {
  while (refreshes.has(runId)) await refreshes.get(runId)!.running;
}

// Works one run until nothing in it is claimable, then refreshes its progress. Never throws for
// a case's failure (that is the case's `error`); a database failure is logged and rethrown.
export async function processRun(engine: Engine, runId: string): Promise<void> {
  const run = await loadRun(engine.db, runId);
  if (!run) return;
  engine.activeRuns.set(runId, (engine.activeRuns.get(runId) ?? 0) + 1);
  try {
    const { settings } = engine;
    const claimSettings: ClaimSettings = { workerId: engine.workerId, staleMs: 3 * settings.heartbeatMs, maxInFlightPerOrg: settings.perOrg, maxAttempts: settings.maxAttempts };
    const lanes = Math.max(1, Math.min(settings.perOrg, settings.perRoute));
    await Promise.all(Array.from({ length: lanes }, () => lane(engine, run, claimSettings, run.content.modelRouteId)));
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
export async function claimableRuns(db: Db, staleMs: number, limit = 200): Promise<string[]> {
  const rows = rowsOf<{ runId: string }>(
    await db.execute(sql`
      select distinct r.run_id as "runId"
      from eval_results r
      join eval_runs run on run.id = r.run_id and run.status in ('pending', 'running')
      where (r.status = 'pending' or (r.status = 'running' and not exists (
          select 1 from eval_workers w where w.id = r.worker_id and w.heartbeat_at > now() - (${staleMs} * interval '1 millisecond'))))
        and not exists (
          select 1 from evaluations e
          where (e.candidate_run_id = r.run_id or e.production_run_id = r.run_id) and e.status in ('cancelled', 'paused'))
      limit ${limit}`),
  );
  return rows.map((r) => r.runId);
}
