import postgres from 'postgres';

// Another connection holding row locks in an open transaction: what a concurrent writer does, made
// to last as long as a test needs. Postgres only (PGlite has one connection).
export type HeldLock = {
  sql: postgres.ReservedSql;
  // Resolves once `count` other sessions wait on a lock, or `settled` has settled (code that does
  // not wait finishes instead), or after 10 s.
  waitForWaiters(count: number, ...settled: Promise<unknown>[]): Promise<void>;
  // Runs `last` in the transaction (if given), commits and closes.
  release(last?: (sql: postgres.ReservedSql) => Promise<unknown>): Promise<void>;
};

export async function holdLock(lock: (sql: postgres.ReservedSql) => Promise<unknown>): Promise<HeldLock> {
  const client = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
  const sql = await client.reserve();
  await sql`begin`;
  await lock(sql);
  return {
    sql,
    async waitForWaiters(count, ...settled) {
      let done = false;
      void Promise.allSettled(settled).then(() => (done = settled.length > 0));
      const deadline = Date.now() + 10_000;
      while (!done && Date.now() < deadline) {
        // Statistics views keep one snapshot per transaction: each look takes a fresh one.
        await sql`select pg_stat_clear_snapshot()`;
        const [row] = await sql`
          select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`;
        if (row.n >= count) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async release(last) {
      try {
        if (last) await last(sql);
        await sql`commit`;
      } finally {
        sql.release();
        await client.end();
      }
    },
  };
}

// Records the order in which promises settle.
export function settleOrder(entries: Record<string, Promise<unknown>>): Promise<string[]> {
  const order: string[] = [];
  return Promise.allSettled(
    Object.entries(entries).map(([name, promise]) => promise.finally(() => order.push(name))),
  ).then(() => order);
}
