import { PgBoss, fromPglite, type PGliteLike } from 'pg-boss';
import type { Database } from '@/db/client';
import { log } from '@/server/log';

// pg-boss on the application's own database: its connection string on Postgres; on the embedded
// PGlite through pg-boss's PGlite adapter on the same instance (parameterless multi-statement SQL
// goes through PGlite's exec, PGlite serializes it with the app's own transactions).

export const evalRunQueue = 'eval-run';
export type EvalRunJob = { runId: string };

// `sendOnly`: a web process that queues runs but neither works them nor maintains pg-boss.
export async function startBoss(database: Database, databaseUrl: string | undefined, options: { sendOnly?: boolean } = {}): Promise<PgBoss> {
  const roles = options.sendOnly ? { supervise: false, schedule: false } : {};
  const boss =
    database.kind === 'postgres'
      ? new PgBoss({ connectionString: databaseUrl, max: options.sendOnly ? 2 : 4, application_name: 'promptloop-boss', ...roles })
      : new PgBoss({ db: fromPglite((database.db as unknown as { $client: PGliteLike }).$client), backend: 'pglite', ...roles });
  boss.on('error', (error: unknown) => log.error({ err: error }, 'pg-boss error'));
  await boss.start();
  // `short`: at most one queued job per run (singletonKey = runId) while any number may be active,
  // so a sweep can queue a run again while a dead worker's job still looks active.
  await boss.createQueue(evalRunQueue, { policy: 'short', expireInSeconds: 3600, retryLimit: 5, retryDelay: 5, retentionSeconds: 86_400, deleteAfterSeconds: 86_400 });
  return boss;
}

export async function sendRuns(boss: PgBoss, runIds: string[]): Promise<void> {
  for (const runId of runIds) await boss.send(evalRunQueue, { runId } satisfies EvalRunJob, { singletonKey: runId });
}
