import { PgTransaction } from 'drizzle-orm/pg-core';
import type { Db } from '@/db/client';
import { retryOnConflict } from './conflicts';
import { log } from './log';

// Who is calling: a person in the dashboard, an OAuth client acting for a user, or a service account.
export type Actor = {
  userId: string; // a person's usr_ id, or a service account's sac_ id
  clientId: string; // 'dashboard' for the browser session, else the OAuth client_id (sa_… for a service account)
  human: boolean;
  // A service account (client_credentials): no user row and no memberships; it acts in its one
  // organization with its role, both read live (server/credentials/service-accounts.ts).
  serviceAccount?: boolean;
};

// A task that must run only once the operation's transaction has committed (an email about it).
export type CommitTask = () => Promise<unknown> | unknown;

// The database part of a context: anonymous account flows (sign-up, password reset) have no actor.
export type DbContext = { db: Db; afterCommit?: (task: CommitTask) => void };
export type ServiceContext = DbContext & { actor: Actor };

// The edge (REST executor, tRPC middleware, the job runner) owns the transaction of an operation:
// services run in the ctx.db they are given and never open their own. A caller on the root handle
// (a test, a script, the worker, housekeeping) opens it with runInTransaction.
function inTransaction(db: Db): boolean {
  return db instanceof PgTransaction;
}

/**
 * Runs several reads on one snapshot (a read-only REPEATABLE READ transaction), so that what they
 * answer together was true together at one moment; inside a transaction, on that one.
 */
export function inSnapshot<T>(db: Db, fn: (db: Db) => Promise<T>): Promise<T> {
  if (inTransaction(db)) return fn(db);
  return db.transaction((tx) => fn(tx), { isolationLevel: 'repeatable read', accessMode: 'read only' });
}

/**
 * Joins the caller's transaction, or opens one on the root handle. Only for the few documented
 * owners whose edge opens no transaction: billing's cancelRenewal (after a Stripe call) and
 * requestPasswordReset (its counters commit on their own), plus the evaluation engine's refresh,
 * the OAuth code, and raiseWarnings (a warning that opens commits with its webhook event), which
 * have their own owners. No other service calls it.
 */
export async function withTransaction<C extends DbContext, T>(ctx: C, fn: (ctx: C) => Promise<T>): Promise<T> {
  if (inTransaction(ctx.db)) return fn(ctx);
  return runInTransaction(ctx.db, (tx, afterCommit) => fn({ ...ctx, db: tx, afterCommit }));
}

/**
 * Opens the transaction of one operation (the edges, callers on the root handle, and withTransaction).
 * Tasks queued with onCommit run after the commit, in order, and never when it rolls back; a task
 * that fails is logged, it does not undo the committed operation.
 */
export async function runInTransaction<T>(
  db: Db,
  fn: (tx: Db, afterCommit: (task: CommitTask) => void) => Promise<T>,
): Promise<T> {
  const run = async () => {
    const tasks: CommitTask[] = [];
    return { result: await db.transaction((tx) => fn(tx, (task) => tasks.push(task))), tasks };
  };
  // A deadlock or serialization failure rolled the operation back whole: it runs again (a few times)
  // instead of answering 500. Not inside a transaction: the caller's locks would meet the same cycle.
  const { result, tasks } = inTransaction(db) ? await run() : await retryOnConflict(run);
  void runTasks(tasks.filter((task) => !answerWaits.has(task)));
  // Each distinct awaited task once (several writes of one operation may queue the same wait).
  for (const task of new Set(tasks.filter((task) => answerWaits.has(task)))) {
    try {
      await task();
    } catch (error) {
      if (error instanceof Error) committedBefore.add(error);
      throw error;
    }
  }
  return result;
}

// Tasks queued with awaitAfterCommit, and the errors they threw.
const answerWaits = new WeakSet<CommitTask>();
const committedBefore = new WeakSet<Error>();

/**
 * Queues a task that the operation's answer waits for: it runs after the commit (after the other
 * tasks are started) and its failure becomes the operation's failure, though the write stays
 * committed (failedAfterCommit tells the idempotency record so). The retrieval standby's wait
 * (server/standby.ts) is one. Only inside a transaction opened by runInTransaction.
 */
export function awaitAfterCommit(ctx: DbContext, task: CommitTask): void {
  if (!inTransaction(ctx.db) || !ctx.afterCommit)
    throw new Error('awaitAfterCommit outside a transaction opened by runInTransaction');
  answerWaits.add(task);
  ctx.afterCommit(task);
}

// Whether an operation failed after its transaction committed (a task queued with awaitAfterCommit).
export function failedAfterCommit(error: unknown): boolean {
  return error instanceof Error && committedBefore.has(error);
}

async function runTasks(tasks: CommitTask[]): Promise<void> {
  for (const task of tasks) {
    try {
      await task();
    } catch (error) {
      log.error({ err: error }, 'after-commit task failed');
    }
  }
}

// Queues a side effect on the caller's transaction; outside one, the write has committed already.
export function onCommit(ctx: DbContext, task: CommitTask): void {
  if (!inTransaction(ctx.db)) {
    void runTasks([task]);
    return;
  }
  if (!ctx.afterCommit) throw new Error('onCommit inside a transaction that was not opened by runInTransaction');
  ctx.afterCommit(task);
}
