import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type PgBoss from 'pg-boss';
import { sql } from 'drizzle-orm';
import { getDatabase, type Database, type Db } from '@/db/client';
import { config } from '@/server/config';
import { log } from '@/server/log';
import { refreshRun } from './progress';
import { registerRunSender } from './queue';
import {
  claimableRuns,
  engineSettings,
  heartbeat,
  newEngine,
  processRun,
  removeWorker,
  type Engine,
  type EngineSettings,
} from './runner';
import { rowsOf } from '@/db/client';
import type { EvalRunJob } from './boss';

// The evaluation worker: pg-boss delivers `eval-run` jobs ({ runId }); each job works its run
// until nothing in it is claimable. A sweep every EVAL_SWEEP_MS queues runs that have claimable
// work and no job working them here (a lost send, or a killed worker whose cases are now stale),
// and settles runs whose every case finished but whose status was not refreshed.

const jobsPerProcess = 8;

function newWorkerId(prefix: string): string {
  return `${prefix}_${hostname().slice(0, 40)}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

// Runs still pending/running although none of their cases is (a crash between finish and refresh).
async function unsettledRuns(db: Db, organizationIds?: readonly string[]): Promise<string[]> {
  const scope = organizationIds ? JSON.stringify(organizationIds) : null;
  const rows = rowsOf<{ id: string }>(
    await db.execute(sql`
      select run.id from eval_runs run
      where run.status in ('pending', 'running')
        and (${scope}::jsonb is null or run.organization_id in (select jsonb_array_elements_text(${scope}::jsonb)))
        and not exists (select 1 from eval_results r where r.run_id = run.id and r.status in ('pending', 'running'))
      limit 100`),
  );
  return rows.map((r) => r.id);
}

function startHeartbeat(engine: Engine): NodeJS.Timeout {
  return setInterval(() => {
    heartbeat(engine).catch((error: unknown) =>
      log.error({ err: error, workerId: engine.workerId }, 'evaluation worker heartbeat failed'),
    );
  }, engine.settings.heartbeatMs);
}

// `boss`: the process's pg-boss instance, which other queues share (webhook deliveries).
export async function startEvalWorker(
  options: { database?: Database } = {},
): Promise<{ boss: PgBoss; stop(): Promise<void> }> {
  const database = options.database ?? (await getDatabase());
  const cfg = config();
  const engine = newEngine(database.db, newWorkerId('wrk'));
  const staleMs = 3 * engine.settings.heartbeatMs;
  await heartbeat(engine);
  const beat = startHeartbeat(engine);
  // Opens the pool's connections for the lanes now (postgres-js opens them on demand): otherwise the
  // first claims of the first run each wait for a new backend.
  if (database.kind === 'postgres') {
    const lanes = Math.max(1, Math.min(engine.settings.perOrg, engine.settings.perRoute));
    await Promise.all(Array.from({ length: lanes }, () => database.db.execute(sql`select 1`))).catch((error: unknown) =>
      log.warn({ err: error }, "could not open the evaluation lanes' connections"),
    );
  }
  const { evalRunQueue, sendRuns, startBoss } = await import('./boss');
  const boss = await startBoss(database, cfg.databaseUrl);
  registerRunSender((runIds) => sendRuns(boss, runIds));

  const jobs = new Set<Promise<void>>();
  // pg-boss 10 works one job at a time per work() call: jobsPerProcess of them.
  for (let i = 0; i < jobsPerProcess; i++) {
    await boss.work<EvalRunJob>(evalRunQueue, { batchSize: 1, pollingIntervalSeconds: 1 }, async ([job]) => {
      if (engine.stopping) throw new Error('worker stopping'); // pg-boss retries the job elsewhere
      const work = processRun(engine, job.data.runId);
      jobs.add(work);
      try {
        await work;
      } finally {
        jobs.delete(work);
      }
    });
  }

  let sweeping = false;
  const sweep = async () => {
    if (sweeping || engine.stopping) return;
    sweeping = true;
    try {
      const runs = (await claimableRuns(database.db, staleMs)).filter((id) => !engine.activeRuns.has(id));
      if (runs.length) await sendRuns(boss, runs);
      for (const runId of await unsettledRuns(database.db)) await refreshRun({ db: database.db }, runId);
      // Rows of workers gone for an hour only make the stale check read more.
      await database.db.execute(sql`delete from eval_workers where heartbeat_at < now() - interval '1 hour'`);
    } catch (error) {
      log.error({ err: error }, 'evaluation sweep failed');
    } finally {
      sweeping = false;
    }
  };
  const sweepTimer = setInterval(() => void sweep(), cfg.evalSweepMs);
  void sweep();
  log.info(
    { workerId: engine.workerId, perOrg: engine.settings.perOrg, perRoute: engine.settings.perRoute },
    'evaluation worker started',
  );

  let stopped: Promise<void> | undefined;
  return {
    boss,
    stop() {
      stopped ??= (async () => {
        // Lanes finish the case they hold and claim no more; pg-boss waits for the handlers.
        engine.stopping = true;
        clearInterval(sweepTimer);
        registerRunSender(undefined);
        await boss
          .stop({ graceful: true, timeout: 30_000, close: true })
          .catch((error: unknown) => log.error({ err: error }, 'pg-boss stop failed'));
        await Promise.race([
          Promise.allSettled([...jobs]),
          new Promise((resolve) => setTimeout(resolve, 30_000).unref()),
        ]);
        clearInterval(beat);
        // Gone from eval_workers: anything still held by this worker can be taken over at once.
        await removeWorker(engine).catch((error: unknown) =>
          log.error({ err: error }, 'could not remove the evaluation worker row'),
        );
        log.info({ workerId: engine.workerId }, 'evaluation worker stopped');
      })();
      return stopped;
    },
  };
}

// The web role (no worker in the process): starts and evaluations are queued through pg-boss.
export async function startEvalSender(database: Database): Promise<{ boss: PgBoss; stop(): Promise<void> }> {
  const { sendRuns, startBoss } = await import('./boss');
  const boss = await startBoss(database, config().databaseUrl, { sendOnly: true });
  registerRunSender((runIds) => sendRuns(boss, runIds));
  return {
    boss,
    async stop() {
      registerRunSender(undefined);
      await boss
        .stop({ graceful: false, close: true })
        .catch((error: unknown) => log.error({ err: error }, 'pg-boss stop failed'));
    },
  };
}

/**
 * Tests and scripts: executes every claimable case in-process (no pg-boss) until none is left, and
 * settles the runs' progress. Work held by another live worker is left to it. Rejects when work is
 * still left after `timeoutMs` (default 30 s).
 */
// `organizationIds` limits the drain to those organizations' runs (tests sharing one database).
export async function drainEvalWork(
  db: Db,
  options: { timeoutMs?: number; settings?: Partial<EngineSettings>; organizationIds?: readonly string[] } = {},
): Promise<void> {
  const engine = newEngine(db, newWorkerId('drain'), { ...engineSettings(), ...options.settings });
  const staleMs = 3 * engine.settings.heartbeatMs;
  await heartbeat(engine);
  const beat = startHeartbeat(engine);
  const timer = setTimeout(() => (engine.stopping = true), options.timeoutMs ?? 30_000);
  try {
    for (;;) {
      for (const runId of await unsettledRuns(db, options.organizationIds)) await refreshRun({ db }, runId);
      const runs = await claimableRuns(db, staleMs, 200, options.organizationIds);
      if (runs.length === 0) return;
      if (engine.stopping)
        throw new Error(
          `drainEvalWork: ${runs.length} run(s) still have claimable work after ${options.timeoutMs ?? 30_000} ms`,
        );
      await Promise.all(runs.map((runId) => processRun(engine, runId)));
    }
  } finally {
    clearTimeout(timer);
    clearInterval(beat);
    await removeWorker(engine);
  }
}
