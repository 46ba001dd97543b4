import { describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { onCommit, runInTransaction, withTransaction, type DbContext } from '@/server/context';

const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe('side effects after commit (onCommit)', () => {
  it('runs queued tasks only after the transaction commits, never after a rollback', async () => {
    const db = await getDb();
    const ran: string[] = [];
    await runInTransaction(db, async (tx, afterCommit) => {
      const ctx: DbContext = { db: tx, afterCommit };
      onCommit(ctx, () => ran.push('committed'));
      await withTransaction(ctx, async (joined) => onCommit(joined, () => ran.push('joined')));
      expect(ran).toEqual([]);
    });
    await settle();
    expect(ran).toEqual(['committed', 'joined']);

    await expect(
      runInTransaction(db, async (tx, afterCommit) => {
        onCommit({ db: tx, afterCommit }, () => ran.push('rolled back'));
        throw new Error('step failed');
      }),
    ).rejects.toThrow('step failed');
    await settle();
    expect(ran).toEqual(['committed', 'joined']);
  });

  it('outside a transaction the write has committed: the task runs; a failing task is contained', async () => {
    const db = await getDb();
    const ran: string[] = [];
    onCommit({ db }, () => {
      throw new Error('smtp down');
    });
    onCommit({ db }, () => ran.push('ran'));
    await settle();
    expect(ran).toEqual(['ran']);
  });

  it('refuses a task on a transaction that has no after-commit queue', async () => {
    const db = await getDb();
    await db.transaction(async (tx) => {
      expect(() => onCommit({ db: tx }, () => undefined)).toThrow(/runInTransaction/);
    });
  });
});
