import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inEdgeTransaction } from '../helpers/transaction';
import { getDb } from '@/db/client';
import { organizations, warnings } from '@/db/schema';
import { drainEvalWork } from '@/server/evals/engine/worker';
import { cancelEvaluation, resumeEvaluation } from '@/server/evals/service';
import { createEngineEvaluation, engineOrganization, evaluationRow, isolatedDatabase } from '../helpers/evals-engine';

// evaluation_paused through the engine's real pause path: eligibility refuses (comprehensive scope
// on the Free plan), the engine pauses the evaluation and raises the warning in the same transaction.

let dropDatabase: () => Promise<void> = async () => {};
beforeAll(async () => {
  dropDatabase = await isolatedDatabase();
  await getDb();
});
afterAll(async () => {
  await dropDatabase();
});

const drain = async () => drainEvalWork(await getDb(), { timeoutMs: 25_000 });
const cases = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ input: `paused ${i}`, expectedOutput: `paused ${i}` }));

async function pausedEvaluation() {
  const { organizationId, userId } = await engineOrganization();
  const db = await getDb();
  await db.update(organizations).set({ plan: 'free' }).where(eq(organizations.id, organizationId));
  const { evaluationId, promptId } = await createEngineEvaluation({
    organizationId,
    userId,
    cases: cases(2),
    scope: 'comprehensive',
    sides: 2,
  });
  await drain();
  expect((await evaluationRow(evaluationId)).status).toBe('paused');
  const ctx = { db, actor: { userId, clientId: 'dashboard', human: true } };
  return { organizationId, evaluationId, promptId, ctx };
}

async function warningsOf(organizationId: string) {
  return (await getDb())
    .select()
    .from(warnings)
    .where(and(eq(warnings.organizationId, organizationId), eq(warnings.kind, 'evaluation_paused')));
}

describe('evaluation_paused', () => {
  it('is raised once per evaluation when the engine pauses it, and resolved when it is resumed', async () => {
    const { organizationId, evaluationId, promptId, ctx } = await pausedEvaluation();
    const [warning, ...others] = await warningsOf(organizationId);
    expect(others).toEqual([]);
    expect(warning).toMatchObject({
      subjectId: evaluationId,
      promptId,
      count: 1,
      resolvedAt: null,
      message: expect.stringMatching(/^Evaluation paused: .*Pro/),
      details: { evaluationId, reason: expect.any(String) },
    });

    await (await getDb()).update(organizations).set({ plan: 'pro' }).where(eq(organizations.id, organizationId));
    await inEdgeTransaction(ctx, (tx) => resumeEvaluation(tx, { organizationId, evaluationId }));
    expect((await warningsOf(organizationId))[0].resolvedAt).not.toBeNull();
  });

  it('is resolved when the paused evaluation is cancelled', async () => {
    const { organizationId, evaluationId, ctx } = await pausedEvaluation();
    expect((await warningsOf(organizationId))[0].resolvedAt).toBeNull();
    await inEdgeTransaction(ctx, (tx) => cancelEvaluation(tx, { organizationId, evaluationId }));
    expect((await warningsOf(organizationId))[0]).toMatchObject({
      subjectId: evaluationId,
      resolvedAt: expect.any(Date),
    });
  });
});
