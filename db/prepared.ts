import { sql, type SQL } from 'drizzle-orm';
import { rowsOf, type Db, type Reader } from './client';

// The one place raw SQL with $n parameters meets the two drivers (the retrieval lookup, the
// retrieval-key touch, span ingestion, the evaluation engine's claim).
// - postgres-js: a named prepared statement per connection, parsed and planned once: one round trip
//   per call. (Drizzle's execute sends parameterized statements unnamed, and postgres-js then asks
//   the server for their parameter types first: two round trips each.)
// - PGlite (the embedded default): its own extended-protocol query.
// - An open transaction (a Drizzle transaction has no raw client): through Drizzle's execute, with
//   the same parameters, so the statement joins the transaction.

type PostgresClient = {
  unsafe: (
    text: string,
    params: unknown[],
    options: { prepare: boolean },
  ) => PromiseLike<unknown> & { values: () => Promise<unknown[][]> };
};
type PgliteClient = {
  query: (text: string, params: unknown[], options?: { rowMode: 'array' | 'object' }) => Promise<{ rows: unknown[] }>;
};
type ReservedConnection = {
  unsafe: (text: string) => Promise<Record<string, unknown>[]>;
  release: () => void;
};
type RawClient = Partial<PostgresClient & PgliteClient & { reserve: () => Promise<ReservedConnection> }>;

const prepared = { prepare: true };

// A postgres-js pool of its own (the retrieval reader) is its own raw client.
function rawClientOf(handle: Db | Reader): RawClient | undefined {
  if (typeof (handle as RawClient).unsafe === 'function') return handle as RawClient;
  return (handle as { $client?: RawClient }).$client;
}

// `$n` placeholders to Drizzle parameters (the statements given here hold no `$` in literals).
function drizzleSql(text: string, params: unknown[]): SQL {
  const chunks: SQL[] = [];
  let last = 0;
  for (const match of text.matchAll(/\$(\d+)/g)) {
    chunks.push(sql.raw(text.slice(last, match.index)), sql`${params[Number(match[1]) - 1]}`);
    last = match.index + match[0].length;
  }
  chunks.push(sql.raw(text.slice(last)));
  return sql.join(chunks);
}

/** Rows as objects keyed by column name. */
export async function preparedRows<T>(db: Db, text: string, params: unknown[]): Promise<T[]> {
  const client = rawClientOf(db);
  if (typeof client?.unsafe === 'function') return rowsOf<T>(await client.unsafe(text, params, prepared));
  if (typeof client?.query === 'function') return rowsOf<T>(await client.query(text, params));
  return rowsOf<T>(await db.execute(drizzleSql(text, params)));
}

/** Rows as arrays in column order (columns may share a name). Not inside a transaction. */
export async function preparedValues(handle: Db | Reader, text: string, params: unknown[]): Promise<unknown[][]> {
  const client = rawClientOf(handle);
  if (typeof client?.unsafe === 'function') return client.unsafe(text, params, prepared).values();
  if (typeof client?.query === 'function')
    return (await client.query(text, params, { rowMode: 'array' })).rows as unknown[][];
  throw new Error('preparedValues: needs a database handle, not a transaction');
}

/**
 * Postgres only: one connection of the pool held until `release`, for what must stay on one
 * session (a session advisory lock around statements that cannot run in a transaction).
 */
export async function reserveConnection(db: Db): Promise<ReservedConnection> {
  const client = rawClientOf(db);
  if (typeof client?.reserve !== 'function') throw new Error('reserveConnection: needs a postgres-js handle');
  return client.reserve();
}
