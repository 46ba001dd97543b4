import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import * as schema from './schema';

type Schema = typeof schema;
// A database handle or an open transaction: services accept either.
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

// The rows of a raw `db.execute`: postgres-js answers with an array of rows, PGlite with { rows }.
export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] } | null)?.rows ?? []) as T[];
}

export type Database = {
  db: Db;
  kind: 'postgres' | 'pglite';
  close: () => Promise<void>;
  // Postgres only: a small second pool for a hot path's point lookups (retrieval), opened on first
  // use. Queries pipeline on its one or two connections, so Postgres wakes a few backends for
  // thousands of lookups a second instead of ten; writes never queue on it (docs/performance.md, M5).
  reader?: () => Reader;
  // Postgres only: LISTEN on a connection of its own; `onListen` runs each time it (re)connects
  // (notifications sent while it was away are lost: server/retrieval/answer-cache.ts).
  listen?: (channel: string, onNotify: (payload: string) => void, onListen: () => void) => Promise<void>;
};

export type Reader = {
  unsafe: (text: string, params: unknown[], options: { prepare: boolean }) => { values: () => Promise<unknown[][]> };
};

// RETRIEVAL_DB_CONNECTIONS: connections of the reader pool (default 1; a retrieval process is one
// thread, and one pipelined connection carried more than ten did on the 2-core machine).
export function readerConnections(): number {
  const n = Number(process.env.RETRIEVAL_DB_CONNECTIONS);
  return Number.isInteger(n) && n >= 1 && n <= 100 ? n : 1;
}

const migrationsFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

// `template`: PGlite only, a data directory to start from (PGlite's dumpDataDir; the test suite
// migrates one copy and loads it in every test process). `readerUrl`: Postgres only, where the
// reader pool connects (RETRIEVAL_DATABASE_URL, a hot standby: docs/deploy.md); `url` when unset.
export async function openDatabase(
  options: { url?: string; readerUrl?: string; dataDir?: string; max?: number; template?: Blob } = {},
): Promise<Database> {
  if (options.url) {
    const { default: postgres } = await import('postgres');
    const { drizzle } = await import('drizzle-orm/postgres-js');
    const client = postgres(options.url, {
      max: options.max ?? 10,
      onnotice: () => {},
      connection: { application_name: 'promptloop' },
    });
    const db = drizzle({ client, schema, casing: 'snake_case' }) as unknown as Db;
    let reader: ReturnType<typeof postgres> | undefined;
    const readerUrl = options.readerUrl ?? options.url;
    return {
      db,
      kind: 'postgres',
      reader: () =>
        (reader ??= postgres(readerUrl, {
          max: readerConnections(),
          // Reconnects within about a second of a standby's return (postgres.js backs off up to 20 s,
          // during which writes waiting for the standby would keep answering 503).
          backoff: (retries: number) => (0.5 + Math.random() / 2) * Math.min(3 ** retries / 100, 1),
          onnotice: () => {},
          connection: { application_name: 'promptloop-reader' },
        })) as unknown as Reader,
      listen: async (channel, onNotify, onListen) => {
        await client.listen(channel, onNotify, onListen);
      },
      close: async () => {
        await reader?.end({ timeout: 5 });
        await client.end({ timeout: 5 });
      },
    };
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const { drizzle } = await import('drizzle-orm/pglite');
  if (options.dataDir && !options.dataDir.includes('://')) mkdirSync(options.dataDir, { recursive: true });
  const client = new PGlite(options.dataDir, options.template ? { loadDataDir: options.template } : {});
  await client.waitReady;
  const db = drizzle({ client, schema, casing: 'snake_case' }) as unknown as Db;
  return { db, kind: 'pglite', close: () => client.close() };
}

export async function migrate(database: Database): Promise<void> {
  if (database.kind === 'postgres') {
    const { migrate: run } = await import('drizzle-orm/postgres-js/migrator');
    await run(database.db as never, { migrationsFolder });
  } else {
    const { migrate: run } = await import('drizzle-orm/pglite/migrator');
    await run(database.db as never, { migrationsFolder });
  }
}

// Connections of the process's main pool (default 10). A role whose work is many similar calls sets
// fewer before the database opens (the ingest role: INGEST_DB_CONNECTIONS, docs/performance.md).
let poolSize: number | undefined;
export function setPoolSize(connections: number): void {
  poolSize = connections;
}

// One database per process. The production server loads this module once (Next's server bundle
// imports db/ and server/ at runtime instead of carrying a copy: next.config.mjs), so a module
// variable is the process's one handle; tests replace it with setDatabase.
let current: Promise<Database> | undefined;

// `next dev` only: Next's hot reload evaluates this module again after an edit to it or to the
// schema, which would open the embedded data directory a second time in the same process (measured:
// one more PGlite per such edit). There the open database is kept for the next evaluation. Not a
// bridge between two copies of server/ (there is one); production and tests never take this path.
const devKey = Symbol.for('promptloop.devDatabase');
const devHolder = process.env.NODE_ENV === 'development' ? (globalThis as { [devKey]?: Promise<Database> }) : null;

// The same database once opened, without a promise (a hot path's synchronous answer: retrieval).
let opened: Database | undefined;

function use(pending: Promise<Database>): Promise<Database> {
  current = pending;
  opened = undefined;
  void pending.then(
    (database) => {
      if (current === pending) opened = database;
    },
    () => undefined,
  );
  return pending;
}

export function setDatabase(database: Promise<Database>): void {
  void use(database);
}

export async function getDatabase(): Promise<Database> {
  current ??= use(devHolder?.[devKey] ?? open());
  if (devHolder) devHolder[devKey] = current;
  return current;
}

export function openedDatabase(): Database | undefined {
  return opened;
}

async function open(): Promise<Database> {
  const url = process.env.DATABASE_URL || undefined;
  const database = await openDatabase({
    url,
    readerUrl: (url && process.env.RETRIEVAL_DATABASE_URL) || undefined,
    dataDir: url ? undefined : process.env.PGLITE_DATA_DIR || './.data',
    max: poolSize,
  });
  await migrate(database);
  return database;
}

export async function getDb(): Promise<Db> {
  return (await getDatabase()).db;
}
