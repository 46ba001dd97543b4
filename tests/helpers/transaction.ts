import { runInTransaction, type ServiceContext } from '@/server/context';

// What the edge does around a service that a test calls directly: one transaction, with the
// after-commit tasks run once it commits (services never open their own).
export function inEdgeTransaction<T>(ctx: ServiceContext, fn: (ctx: ServiceContext) => Promise<T>): Promise<T> {
  return runInTransaction(ctx.db, (db, afterCommit) => fn({ ...ctx, db, afterCommit }));
}
