import { describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { getDatabase, getDb, rowsOf } from '@/db/client';
import { preparedRows, preparedValues } from '@/db/prepared';

// db/prepared.ts: one statement with $n parameters on postgres-js (named prepared statement), on
// PGlite (its own query), and inside a transaction (through Drizzle, joining the transaction).
const statement = `select $1::text as a, $2::int4 as b, $1::text as c, (array[$3, $4]::text[])[1] is null as gap, (array[$3, $4]::text[])[2] as d`;
const params = ['x', 7, null, 'y'];

describe('prepared statements', () => {
  it('gives the same rows on the pool and inside a transaction', async () => {
    const db = await getDb();
    const expected = [{ a: 'x', b: 7, c: 'x', gap: true, d: 'y' }];
    const pool = await preparedRows(db, statement, params);
    const inTransaction = await db.transaction((tx) => preparedRows(tx as never, statement, params));
    expect(JSON.stringify(pool)).toBe(JSON.stringify(expected));
    expect(JSON.stringify(inTransaction)).toBe(JSON.stringify(expected));
  });

  it('gives rows as arrays in column order, columns sharing a name included', async () => {
    const database = await getDatabase();
    const rows = await preparedValues(database.reader?.() ?? database.db, `select $1::text as id, $2::text as id`, [
      'k',
      'v',
    ]);
    expect(rows).toEqual([['k', 'v']]);
  });

  it('a statement inside a transaction is part of it', async () => {
    const db = await getDb();
    await db.transaction(async (tx) => {
      const [inside] = await preparedRows<{ id: string }>(tx as never, `select txid_current()::text as id`, []);
      const [drizzle] = rowsOf<{ id: string }>(await tx.execute(sql`select txid_current()::text as id`));
      expect(inside.id).toBe(drizzle.id);
    });
  });

  it('preparedValues refuses a transaction (Drizzle has no array rows)', async () => {
    const db = await getDb();
    await expect(db.transaction((tx) => preparedValues(tx as never, 'select 1', []))).rejects.toThrow(
      /not a transaction/,
    );
  });
});
