import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { createEngineEvaluation, engineOrganization, isolatedDatabase, resultsOf } from '../helpers/evals-engine';

// claim_eval_case at the SQL level: the organization's bound, and the handoff (store one case and
// claim the next in the same organization) that skips the organization's lock.

let dropDatabase: () => Promise<void> = async () => {};
beforeAll(async () => {
  dropDatabase = await isolatedDatabase();
  await getDb();
});
afterAll(async () => {
  await dropDatabase();
});

type Row = { outcome: string; id: string | null; stored: boolean | null };
const outcome = JSON.stringify({
  status: 'scored',
  output: 'ok',
  passed: true,
  score: 1,
  assertions: [],
  latency_ms: 5,
});

async function claim(
  runId: string,
  workerId: string,
  maxInFlight: number,
  storeId: string | null = null,
): Promise<Row> {
  const db = await getDb();
  const rows = (await db.execute(
    sql`select outcome, id, stored from claim_eval_case(${runId}, ${workerId}, 60000, ${maxInFlight}::int, 3, ${storeId}, ${storeId ? outcome : null}::jsonb, 200, 10000)`,
  )) as unknown as Row[] | { rows: Row[] };
  return (Array.isArray(rows) ? rows : rows.rows)[0];
}

async function runningIn(organizationId: string): Promise<number> {
  const db = await getDb();
  const rows = (await db.execute(
    sql`select count(*)::int as n from eval_results where organization_id = ${organizationId} and status = 'running'`,
  )) as unknown as { n: number }[] | { rows: { n: number }[] };
  return (Array.isArray(rows) ? rows : rows.rows)[0].n;
}

const cases = (n: number, prefix: string) =>
  Array.from({ length: n }, (_, i) => ({ input: `${prefix} ${i}`, expectedOutput: `${prefix} ${i}` }));

describe('claim_eval_case: the organization bound and the handoff', () => {
  it('a worker that stores a case hands its slot to its next claim in the same organization; others stay busy', async () => {
    const db = await getDb();
    const { organizationId, userId } = await engineOrganization();
    const { runIds } = await createEngineEvaluation({ organizationId, userId, cases: cases(4, 'handoff') });
    await db.execute(
      sql`insert into eval_workers (id, created_at, heartbeat_at) values ('w-a', now(), now()), ('w-b', now(), now())`,
    );

    const first = await claim(runIds[0], 'w-a', 1);
    expect(first.outcome).toBe('claimed');
    expect((await claim(runIds[0], 'w-b', 1)).outcome).toBe('busy');

    // Store + claim by the holder: the bound stays at one running case, and no second worker slips in.
    const second = await claim(runIds[0], 'w-a', 1, first.id);
    expect(second).toMatchObject({ outcome: 'claimed', stored: true });
    expect(second.id).not.toBe(first.id);
    expect(await runningIn(organizationId)).toBe(1);
    expect((await claim(runIds[0], 'w-b', 1)).outcome).toBe('busy');

    // Storing a case this worker no longer holds is not a handoff: the count applies again.
    const stale = await claim(runIds[0], 'w-b', 1, first.id);
    expect(stale).toMatchObject({ outcome: 'busy', stored: false });
    const results = await resultsOf(runIds[0]);
    expect(results.filter((r) => r.status === 'scored').map((r) => r.id)).toEqual([first.id]);
  });

  it('a worker whose heartbeat is stale, or whose stored case is of another organization, takes the counted path', async () => {
    const db = await getDb();
    const x = await engineOrganization();
    const y = await engineOrganization();
    const { runIds: xRuns } = await createEngineEvaluation({ ...x, cases: cases(2, 'org x') });
    const { runIds: yRuns } = await createEngineEvaluation({ ...y, cases: cases(3, 'org y') });
    await db.execute(
      sql`insert into eval_workers (id, created_at, heartbeat_at) values ('w-x', now(), now()), ('w-y', now(), now())`,
    );

    const held = await claim(yRuns[0], 'w-y', 1);
    expect(held.outcome).toBe('claimed');
    const inX = await claim(xRuns[0], 'w-x', 1);
    expect(inX.outcome).toBe('claimed');
    // w-x stores its case of organization x and asks for one of y, which is at its bound.
    expect(await claim(yRuns[0], 'w-x', 1, inX.id)).toMatchObject({ outcome: 'busy', stored: true });
    expect(await runningIn(y.organizationId)).toBe(1);

    // A holder whose heartbeat went stale no longer counts, so its store-and-claim is counted like any
    // first claim (and here finds the organization free).
    await db.execute(sql`update eval_workers set heartbeat_at = now() - interval '1 hour' where id = 'w-y'`);
    const next = await claim(yRuns[0], 'w-y', 1, held.id);
    expect(next).toMatchObject({ outcome: 'claimed', stored: true });
    expect(await runningIn(y.organizationId)).toBe(1);
  });
});
