import { sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { config } from '@/server/config';
import { log } from '@/server/log';
import {
  claimNextCase,
  finishCase,
  loadRun,
  type CaseOutcome,
  type ClaimedCase,
  type ClaimSettings,
  type RunInfo,
} from './claim';
import { executeCase, prepareRun, type PreparedRun } from './execute';
import { settlePreModelFailures } from './pre-model';
import { refreshRun } from './progress';
import { rowsOf } from '@/db/client';
import { sleep } from './sql';

// Executes runs. Runs of the same organization and model route share one group of lanes in this
// process (min(EVAL_CONCURRENCY_PER_ORG, _PER_ROUTE) of them); a lane takes a slot of its
// organization's and its route's semaphore, then claims, executes and stores cases of the group's
// runs in turn (round robin, so runs started together advance together), storing each case's
// outcome in the same database call that claims its next case. While another group waits for one
// of its semaphores, a lane stores on its own and gives its slots back after each case. The claim
// itself counts running cases of the organization in the database, so several worker processes
// together respect the organization's bound too.

class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly limit: number) {}
  get contended(): boolean {
    return this.waiting.length > 0;
  }
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
  return {
    perOrg: cfg.evalConcurrencyPerOrg,
    perRoute: cfg.evalConcurrencyPerRoute,
    heartbeatMs: cfg.evalWorkerHeartbeatMs,
    maxAttempts: cfg.evalMaxAttempts,
  };
}

export type Engine = {
  db: Db;
  workerId: string;
  settings: EngineSettings;
  stopping: boolean;
  // Runs this process is working on now (the sweep does not queue them again).
  activeRuns: Map<string, number>;
  // Lane groups by organization and model route.
  groups: Map<string, Group>;
};

export function newEngine(db: Db, workerId: string, settings = engineSettings()): Engine {
  return { db, workerId, settings, stopping: false, activeRuns: new Map(), groups: new Map() };
}

export async function heartbeat(engine: Engine): Promise<void> {
  await engine.db.execute(sql`
    insert into eval_workers (id, created_at, heartbeat_at) values (${engine.workerId}, now(), now())
    on conflict (id) do update set heartbeat_at = now()`);
}

export async function removeWorker(engine: Engine): Promise<void> {
  await engine.db.execute(sql`delete from eval_workers where id = ${engine.workerId}`);
}

// One run worked by a group: done once nothing in it was claimable (`drained`) and every case this
// process claimed from it is stored (`held` = 0), or when the group's last lane stopped.
type RunEntry = {
  run: RunInfo;
  prepared: PreparedRun;
  claimSettings: ClaimSettings;
  held: number;
  drained: boolean;
  error: unknown;
  finished: boolean;
  done: Promise<void>;
  resolve: () => void;
};

type Group = { key: string; organizationId: string; routeKey: string; runs: RunEntry[]; cursor: number; lanes: number };

function settle(group: Group, entry: RunEntry): void {
  if (entry.finished || !(entry.drained && entry.held === 0)) return;
  entry.finished = true;
  group.runs = group.runs.filter((e) => e !== entry);
  entry.resolve();
}

// The next run of the group with claimable work, round robin.
function nextRun(group: Group): RunEntry | null {
  const open = group.runs.filter((e) => !e.drained);
  if (open.length === 0) return null;
  group.cursor = (group.cursor + 1) % open.length;
  return open[group.cursor];
}

function enlist(engine: Engine, run: RunInfo, prepared: PreparedRun): RunEntry {
  const { settings } = engine;
  const routeKey = run.content.modelRouteId;
  const key = `${run.organizationId}\u0000${routeKey}`;
  let group = engine.groups.get(key);
  if (!group)
    engine.groups.set(
      key,
      (group = { key, organizationId: run.organizationId, routeKey, runs: [], cursor: 0, lanes: 0 }),
    );
  let entry = group.runs.find((e) => e.run.id === run.id && !e.finished);
  if (entry)
    entry.drained = false; // queued again: there may be claimable work again (a takeover)
  else {
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    const claimSettings: ClaimSettings = {
      workerId: engine.workerId,
      staleMs: 3 * settings.heartbeatMs,
      maxInFlightPerOrg: settings.perOrg,
      maxAttempts: settings.maxAttempts,
    };
    entry = { run, prepared, claimSettings, held: 0, drained: false, error: undefined, finished: false, done, resolve };
    group.runs.push(entry);
  }
  const lanes = Math.max(1, Math.min(settings.perOrg, settings.perRoute));
  while (group.lanes < lanes) {
    group.lanes++;
    void lane(engine, group);
  }
  return entry;
}

type Held = { entry: RunEntry; claimed: ClaimedCase; outcome: CaseOutcome };

async function lane(engine: Engine, group: Group): Promise<void> {
  const { db, settings } = engine;
  const orgSemaphore = semaphore(`org:${group.organizationId}`, settings.perOrg);
  const routeSemaphore = semaphore(`route:${group.routeKey}`, settings.perRoute);
  // The case executed last, stored with the next claim.
  let held: Held | null = null;
  const stored = (h: Held, written: boolean | null) => {
    if (written === false)
      log.warn(
        { resultId: h.claimed.id, runId: h.entry.run.id },
        'evaluation case was taken over before it finished; its outcome is dropped',
      );
    h.entry.held--;
    settle(group, h.entry);
    scheduleRefresh(engine, h.entry.run.id);
  };
  const storeAlone = async (h: Held) => {
    let written: boolean | null = null;
    try {
      written = await finishCase(db, h.claimed.id, engine.workerId, h.outcome);
    } catch (error) {
      h.entry.error ??= error;
      throw error;
    } finally {
      stored(h, written);
    }
  };
  let failure: unknown;
  try {
    for (;;) {
      const releaseOrg = await orgSemaphore.acquire();
      const releaseRoute = await routeSemaphore.acquire();
      let busy = false;
      try {
        for (;;) {
          const entry = engine.stopping ? null : nextRun(group);
          if (!entry) {
            if (!held) return;
            // Stored before deciding to stop: a run enlisted meanwhile finds this lane still working.
            const h = held;
            held = null;
            await storeAlone(h);
            continue;
          }
          const finished = held;
          held = null;
          // A claim in flight counts as held: the run is not done while another lane may be getting its last case.
          entry.held++;
          let claim: Awaited<ReturnType<typeof claimNextCase>>;
          try {
            claim = await claimNextCase(
              db,
              entry.run,
              entry.claimSettings,
              finished ? { resultId: finished.claimed.id, outcome: finished.outcome } : undefined,
            );
          } catch (error) {
            entry.held--;
            entry.error ??= error;
            entry.drained = true;
            if (finished) stored(finished, null);
            settle(group, entry);
            throw error;
          }
          if (finished) stored(finished, claim.stored);
          const { outcome } = claim;
          if (outcome.kind !== 'claimed') {
            entry.held--;
            if (outcome.kind === 'busy') {
              settle(group, entry);
              busy = true;
              break;
            }
            if (outcome.kind === 'none' || outcome.kind === 'refused') entry.drained = true;
            try {
              if (outcome.kind === 'refused' || outcome.kind === 'gave_up') await refreshRun({ db }, entry.run.id);
            } finally {
              settle(group, entry);
            }
            continue;
          }
          const { claimed } = outcome;
          // The run was pending: it shows as running (and so does its evaluation) while this case executes.
          if (claimed.firstOfRun) scheduleRefresh(engine, entry.run.id, 0);
          held = { entry, claimed, outcome: await executeCase(entry.run, claimed, entry.prepared) };
          // Another group waits for a slot: store now and give the slots back (fair turns).
          if (orgSemaphore.contended || routeSemaphore.contended) {
            const h = held;
            held = null;
            await storeAlone(h);
            break;
          }
        }
      } finally {
        releaseRoute();
        releaseOrg();
      }
      if (busy) await sleep(100 + Math.random() * 200);
    }
  } catch (error) {
    failure = error;
    log.error({ err: error }, 'evaluation lane failed');
  } finally {
    group.lanes--;
    if (group.lanes === 0) {
      // No lane is left to work the group's runs: they end here (the engine stops, or a database failure).
      for (const entry of [...group.runs]) {
        if (!entry.drained && failure !== undefined) entry.error ??= failure;
        entry.drained = true;
        entry.held = 0;
        settle(group, entry);
      }
      if (engine.groups.get(group.key) === group && group.runs.length === 0) engine.groups.delete(group.key);
    }
  }
}

// Progress refreshes off the lanes' path, coalesced per run on a timer: at most one every
// refreshEveryMs while cases finish (the counts shown are read live from the results; a refresh
// moves statuses), one at once when a run's first case is claimed (pending → running), and
// processRun refreshes once more when the run is done here.
const refreshEveryMs = 250;
const refreshes = new Map<
  string,
  { timer: NodeJS.Timeout | undefined; running: Promise<void> | undefined; again: boolean }
>();
function scheduleRefresh(engine: Engine, runId: string, delayMs = refreshEveryMs): void {
  let entry = refreshes.get(runId);
  if (!entry) refreshes.set(runId, (entry = { timer: undefined, running: undefined, again: false }));
  if (entry.running) {
    entry.again ||= delayMs === 0;
    return;
  }
  if (entry.timer) {
    if (delayMs > 0) return;
    clearTimeout(entry.timer);
  }
  const current = entry;
  current.timer = setTimeout(() => {
    current.timer = undefined;
    current.again = false;
    current.running = refreshRun({ db: engine.db }, runId)
      .catch((error: unknown) => log.error({ err: error, runId }, 'evaluation progress refresh failed'))
      .finally(() => {
        current.running = undefined;
        if (current.again) scheduleRefresh(engine, runId, 0);
        else if (!current.timer) refreshes.delete(runId);
      });
  }, delayMs);
}

// Drops a pending timed refresh of the run and waits for one in flight (the caller refreshes next).
async function settledRefresh(runId: string): Promise<void> {
  for (let entry = refreshes.get(runId); entry; entry = refreshes.get(runId)) {
    clearTimeout(entry.timer);
    entry.timer = undefined;
    if (entry.running) await entry.running;
    else refreshes.delete(runId);
  }
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
