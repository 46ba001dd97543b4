import { createRequire } from 'node:module';
import PgBoss from 'pg-boss';
import type { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { rowsOf, type Database } from '@/db/client';
import { log } from '@/server/log';

// pg-boss on the application's own database: its connection string on Postgres; on the embedded
// PGlite through pg-boss's `db` option on the same instance (PGlite serializes it with the app's
// own transactions).

export const evalRunQueue = 'eval-run';
export type EvalRunJob = { runId: string };

// pg-boss's `db` option over PGlite: parameterized SQL through `query` (one statement); the
// parameterless SQL is sometimes several statements (schema creation, migrations, a BEGIN …
// COMMIT block) and goes through `exec`, whose per-statement rows are flattened so a RETURNING
// before the COMMIT is not lost. A failed block leaves PGlite's one session in an aborted
// transaction, which a pool would have discarded with its connection: it is rolled back.
function pgliteDb(client: PGlite): PgBoss.Db {
  return {
    async executeSql(text, values) {
      try {
        if (values?.length) return { rows: (await client.query(text, values)).rows };
        return { rows: (await client.exec(text)).flatMap((result) => result.rows) };
      } catch (error) {
        await client.query('rollback').catch(() => {});
        throw error;
      }
    },
  };
}

// The pg-boss schema this pg-boss creates and works with.
const bossSchemaVersion: number = createRequire(import.meta.url)('pg-boss/version.json').schema;

// A database whose pg-boss schema is newer than this pg-boss (pg-boss 12, used before Q1) would
// fail its queries: that schema is dropped and made again. Its jobs are only "work this run"
// messages; the worker's sweep queues every run that still has work.
async function dropNewerBossSchema(database: Database): Promise<void> {
  const [table] = rowsOf<{ name: string | null }>(
    await database.db.execute(sql`select to_regclass('pgboss.version')::text as name`),
  );
  if (!table?.name) return;
  const [row] = rowsOf<{ version: number }>(await database.db.execute(sql`select version from pgboss.version`));
  if (!row || Number(row.version) <= bossSchemaVersion) return;
  log.warn(
    { found: Number(row.version), expected: bossSchemaVersion },
    'dropping a newer pg-boss schema; runs with work left are queued again',
  );
  await database.db.execute(sql`drop schema if exists pgboss cascade`);
}

// `sendOnly`: a web process that queues runs but neither works them nor maintains pg-boss.
export async function startBoss(
  database: Database,
  databaseUrl: string | undefined,
  options: { sendOnly?: boolean } = {},
): Promise<PgBoss> {
  const roles = options.sendOnly ? { supervise: false, schedule: false } : {};
  // Finished jobs move to pg-boss's archive after 12 hours (its default) and are deleted a day later.
  const maintenance = { deleteAfterDays: 1, ...roles };
  const boss =
    database.kind === 'postgres'
      ? new PgBoss({
          connectionString: databaseUrl,
          max: options.sendOnly ? 2 : 4,
          application_name: 'promptloop-boss',
          ...maintenance,
        })
      : new PgBoss({ db: pgliteDb((database.db as unknown as { $client: PGlite }).$client), ...maintenance });
  boss.on('error', (error: unknown) => log.error({ err: error }, 'pg-boss error'));
  await dropNewerBossSchema(database);
  await boss.start();
  // `short`: at most one queued job per run (singletonKey = runId) while any number may be active,
  // so a sweep can queue a run again while a dead worker's job still looks active.
  await boss.createQueue(evalRunQueue, {
    name: evalRunQueue,
    policy: 'short',
    expireInSeconds: 3600,
    retryLimit: 5,
    retryDelay: 5,
    retentionMinutes: 1440,
  });
  return boss;
}

export async function sendRuns(boss: PgBoss, runIds: string[]): Promise<void> {
  for (const runId of runIds) await boss.send(evalRunQueue, { runId } satisfies EvalRunJob, { singletonKey: runId });
}
