import { and, eq, inArray } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { auditLog, evalResults, evalRuns, evaluations, organizations } from '@/db/schema';
import { drainEvalWork } from '@/server/evals/engine/worker';
import { createdOrganizations, newTeam, type TestUser } from './api';
import { activePrompt, createPrompt, writeDraft } from './prompts';

// Fixtures for the evaluation operations tests (start, initialize, review, cancel/resume/retry).

export type Row = { input: string; expectedOutput: string };

// Cases whose expected output is their input: the local/echo route answers each one correctly.
export const echoRows = (n: number, prefix = 'case'): Row[] =>
  Array.from({ length: n }, (_, i) => ({ input: `${prefix} ${i + 1}`, expectedOutput: `${prefix} ${i + 1}` }));

// Imports rows; more than Free's 10 are imported under Pro, and the organization goes back to its plan after.
export async function importRows(
  user: TestUser,
  organizationId: string,
  promptId: string,
  rows: Row[],
): Promise<{ revision: number; count: number }> {
  const base = `/organizations/${organizationId}/prompts/${promptId}/dataset`;
  const current = await user.call('GET', base);
  const db = await getDb();
  const [org] = await db
    .select({ plan: organizations.plan })
    .from(organizations)
    .where(eq(organizations.id, organizationId));
  if (current.body.count + rows.length > 10) await setPlan(organizationId, 'pro');
  const imported = await user.call('POST', `${base}/import`, {
    body: { revision: current.body.revision, mode: 'append', rows },
  });
  await setPlan(organizationId, org.plan);
  if (imported.status !== 200) throw new Error(`import failed: ${imported.status} ${JSON.stringify(imported.body)}`);
  return imported.body;
}

export async function setPlan(organizationId: string, plan: 'free' | 'pro'): Promise<void> {
  const db = await getDb();
  await db.update(organizations).set({ plan }).where(eq(organizations.id, organizationId));
}

export async function setReadOnly(organizationId: string, readOnly: boolean): Promise<void> {
  const db = await getDb();
  await db.update(organizations).set({ readOnly }).where(eq(organizations.id, organizationId));
}

// Saves the user's current draft (after writing `text`) as the next version.
export async function saveVersion(
  user: TestUser,
  organizationId: string,
  promptId: string,
  text: string,
): Promise<{ id: string; number: number }> {
  const draft = await writeDraft(user, organizationId, promptId, text);
  const saved = await user.call('POST', `/organizations/${organizationId}/prompts/${promptId}/versions`, {
    body: { draftRevision: draft.revision },
  });
  if (saved.status !== 201) throw new Error(`save version failed: ${saved.status} ${JSON.stringify(saved.body)}`);
  return saved.body;
}

/**
 * A team whose editor owns an active prompt (version 1 on production) with `cases` echo cases and a
 * saved version 2: ready for comparisons.
 */
export async function comparisonFixture(options: { cases?: number } = {}) {
  const team = await newTeam();
  const { prompt, v1, base } = await activePrompt(team.editor, team.org.id);
  if ((options.cases ?? 3) > 0) await importRows(team.editor, team.org.id, prompt.id, echoRows(options.cases ?? 3));
  const v2 = await saveVersion(team.editor, team.org.id, prompt.id, 'You answer support questions, briefly.');
  return { ...team, prompt, v1, v2, base, evals: `${base}/evals` };
}

// A team whose editor has a setup prompt with a runnable draft and `cases` echo cases.
export async function setupFixture(options: { cases?: number } = {}) {
  const team = await newTeam();
  const prompt = await createPrompt(team.editor, team.org.id, 'Fresh prompt');
  const draft = await writeDraft(team.editor, team.org.id, prompt.id, 'Repeat the question.');
  if ((options.cases ?? 3) > 0) await importRows(team.editor, team.org.id, prompt.id, echoRows(options.cases ?? 3));
  const base = `/organizations/${team.org.id}/prompts/${prompt.id}`;
  return { ...team, prompt, draft, base };
}

export async function drain(): Promise<void> {
  await drainEvalWork(await getDb(), { timeoutMs: 20_000, organizationIds: [...createdOrganizations] });
}

export async function evaluationRows(promptId: string) {
  const db = await getDb();
  return db.select().from(evaluations).where(eq(evaluations.promptId, promptId));
}

export async function runRows(runIds: string[]) {
  const db = await getDb();
  return db.select().from(evalRuns).where(inArray(evalRuns.id, runIds));
}

export async function resultRows(runId: string) {
  const db = await getDb();
  return db.select().from(evalResults).where(eq(evalResults.runId, runId)).orderBy(evalResults.position);
}

export async function auditOps(organizationId: string, targetType = 'evaluation'): Promise<string[]> {
  const db = await getDb();
  const rows = await db
    .select({ operation: auditLog.operation })
    .from(auditLog)
    .where(and(eq(auditLog.organizationId, organizationId), eq(auditLog.targetType, targetType)));
  return rows.map((r) => r.operation).sort();
}

// Puts an evaluation and its unfinished runs into `paused` (the engine pauses only when credits run out, M7).
export async function pause(evaluationId: string): Promise<void> {
  const db = await getDb();
  const [row] = await db.select().from(evaluations).where(eq(evaluations.id, evaluationId));
  const runIds = [row.candidateRunId, ...(row.productionRunId ? [row.productionRunId] : [])];
  await db
    .update(evalRuns)
    .set({ status: 'paused' })
    .where(and(inArray(evalRuns.id, runIds), inArray(evalRuns.status, ['pending', 'running'])));
  await db.update(evaluations).set({ status: 'paused' }).where(eq(evaluations.id, evaluationId));
}
