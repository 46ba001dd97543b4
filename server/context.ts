import { PgTransaction } from 'drizzle-orm/pg-core';
import type { Db } from '@/db/client';

// Who is calling: a person in the dashboard, or an OAuth client acting for a user.
export type Actor = {
  userId: string;
  clientId: string; // 'dashboard' for the browser session, else the OAuth client_id
  human: boolean;
};

export type ServiceContext = { db: Db; actor: Actor };

// The edge (REST, tRPC, the job runner) owns the transaction of an operation; a service that needs
// atomicity joins it, and opens one only when called on the root handle (tests, scripts).
export function inTransaction(db: Db): boolean {
  return db instanceof PgTransaction;
}

export async function withTransaction<T>(ctx: ServiceContext, fn: (ctx: ServiceContext) => Promise<T>): Promise<T> {
  if (inTransaction(ctx.db)) return fn(ctx);
  return ctx.db.transaction((tx) => fn({ ...ctx, db: tx }));
}
