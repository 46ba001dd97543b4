import type { Db } from '@/db/client';
import { log } from '@/server/log';
import {
  claimNextCase,
  finishCase,
  type CaseOutcome,
  type ClaimedCase,
  type ClaimSettings,
  type RunInfo,
} from './claim';
import { executeCase, type PreparedRun } from './execute';
import { refreshRun } from './progress';
import { scheduleRefresh } from './progress-refresh';
import { semaphore } from './semaphores';
import { sleep } from './sql';

// The engine's lanes (see runner.ts): groups of lanes per organization and model route, each lane
// claiming, executing and storing the cases of its group's runs in turn.

export type EngineSettings = { perOrg: number; perRoute: number; heartbeatMs: number; maxAttempts: number };

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
  // Aborted once the run is cancelled (the heartbeat sees it): its failed calls are not retried.
  stop: AbortController;
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

export function enlist(engine: Engine, run: RunInfo, prepared: PreparedRun): RunEntry {
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
    entry = {
      run,
      prepared,
      claimSettings,
      held: 0,
      drained: false,
      error: undefined,
      finished: false,
      done,
      resolve,
      stop: new AbortController(),
    };
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
    scheduleRefresh(engine.db, h.entry.run.id);
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
          if (claimed.firstOfRun) scheduleRefresh(engine.db, entry.run.id, 0);
          held = { entry, claimed, outcome: await executeCase(entry.run, claimed, entry.prepared, entry.stop.signal) };
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

// A cancelled run: its cases in flight finish, but their failed calls are not retried, and nothing
// more of it is claimed here.
export function stopRun(engine: Engine, runId: string): void {
  for (const group of engine.groups.values())
    for (const entry of group.runs)
      if (entry.run.id === runId) {
        entry.stop.abort();
        entry.drained = true;
      }
}
