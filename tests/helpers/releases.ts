import { expect } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { auditLog, promptLabelHistory } from '@/db/schema';
import { newTeam, type TestUser } from './api';
import { drain, importRows, type Row } from './evals';
import { activePrompt, systemContent } from './prompts';

// Fixtures for the release policy, the promotion gate and traffic splits (API.md "Safe releases"):
// real comparisons on the local echo route. The echo answers each case with its input, so a
// version passes every case of `gateRows`; a version whose maxOutputTokens is k cuts the echo to
// k words and fails (regresses) exactly the cases of more than k words.

// Cases of 1, 2, 3 and 4 words.
export const gateRows: Row[] = ['one', 'two words', 'three words here', 'four words right here'].map((text) => ({
  input: text,
  expectedOutput: text,
}));

export type VersionRef = { id: string; number: number };

// Saves the user's draft as the next version: `text` as its system message, the echo cut to
// `maxOutputTokens` words when given.
export async function saveContentVersion(
  user: TestUser,
  organizationId: string,
  promptId: string,
  text: string,
  maxOutputTokens: number | null = null,
): Promise<VersionRef> {
  const base = `/organizations/${organizationId}/prompts/${promptId}`;
  const current = await user.call('GET', `${base}/draft`);
  const written = await user.call('PUT', `${base}/draft`, {
    body: { content: { ...systemContent(text), maxOutputTokens }, revision: current.body.revision },
  });
  if (written.status !== 200) throw new Error(`draft write failed: ${JSON.stringify(written.body)}`);
  const saved = await user.call('POST', `${base}/versions`, { body: { draftRevision: written.body.revision } });
  if (saved.status !== 201) throw new Error(`save version failed: ${JSON.stringify(saved.body)}`);
  return { id: saved.body.id, number: saved.body.number };
}

/**
 * A team (admin, editor, viewer) whose editor owns an active prompt (v1 on production and staging)
 * with the four `gateRows` cases, and saved versions: v2 and v3 pass every case as v1 does; v4 fails
 * the 4-word case (pass rate 0.75, one regression); v5 fails the 3- and 4-word cases (0.5, two).
 */
export async function gateFixture() {
  const team = await newTeam();
  const { prompt, v1, base } = await activePrompt(team.editor, team.org.id);
  await importRows(team.editor, team.org.id, prompt.id, gateRows);
  const save = (text: string, limit: number | null = null) =>
    saveContentVersion(team.editor, team.org.id, prompt.id, text, limit);
  const v2 = await save('Repeat the question exactly.');
  const v3 = await save('Repeat the question, word for word.');
  const v4 = await save('Repeat at most three words.', 3);
  const v5 = await save('Repeat at most two words.', 2);
  const dataset = (await team.editor.call('GET', `${base}/dataset`)).body;
  const caseIds: string[] = dataset.rows.map((row: { id: string }) => row.id);
  const policy = (body: Partial<Policy> = {}, user: TestUser = team.admin) =>
    user.call('PUT', `${base}/release-policy`, { body: { ...gatedPolicy, ...body } });
  const move = (label: string, body: Record<string, unknown>, user: TestUser = team.editor) =>
    user.call('PUT', `${base}/labels/${label}`, { body });
  return {
    ...team,
    prompt,
    base,
    caseIds,
    v1: { id: v1.id, number: v1.number } as VersionRef,
    v2,
    v3,
    v4,
    v5,
    policy,
    move,
    compare: (version: VersionRef, user: TestUser = team.editor) => compare(user, base, team.org.id, version.id),
    labels: async () => (await team.viewer.call('GET', `${base}/labels`)).body.items as any[],
    label: async (name: string) =>
      ((await team.viewer.call('GET', `${base}/labels`)).body.items as any[]).find((l) => l.label === name),
    history: async (label = 'production') =>
      (await team.viewer.call('GET', `${base}/label-history`, { query: `label=${label}` })).body.items as any[],
  };
}
export type GateFixture = Awaited<ReturnType<typeof gateFixture>>;

export type Policy = {
  protectedLabels: string[];
  requireEvaluation: boolean;
  maxPassRateDrop: number;
  maxRegressions: number;
};
export const gatedPolicy: Policy = {
  protectedLabels: ['production'],
  requireEvaluation: true,
  maxPassRateDrop: 0,
  maxRegressions: 0,
};

// Starts a quick comparison of `versionId` against production, runs it, and returns it completed.
export async function compare(user: TestUser, base: string, organizationId: string, versionId: string) {
  const started = await user.call('POST', `${base}/evals`, { body: { versionId, scope: 'quick' } });
  if (started.status !== 201) throw new Error(`start failed: ${started.status} ${JSON.stringify(started.body)}`);
  await drain();
  const evaluation = (await user.call('GET', `/organizations/${organizationId}/evals/${started.body.id}`)).body;
  expect(evaluation.status).toBe('completed');
  return evaluation as {
    id: string;
    versionId: string;
    productionVersionId: string;
    passRate: number;
    candidate: { passRate: number };
    production: { passRate: number };
  };
}

// The label-history rows and `label.move` audit entries of a prompt (to prove nothing moved).
export async function moveTrail(promptId: string) {
  const db = await getDb();
  const history = await db.select().from(promptLabelHistory).where(eq(promptLabelHistory.promptId, promptId));
  const audits = await db
    .select()
    .from(auditLog)
    .where(and(eq(auditLog.targetId, promptId), eq(auditLog.operation, 'label.move')));
  return { history: history.length, audits: audits.length };
}

// The 409 promotion_blocked envelope of a refused move (fails the test otherwise).
export function expectBlocked(
  reply: { status: number; body: any },
  details: Partial<{
    evaluationId: string | null;
    candidatePassRate: number | null;
    productionPassRate: number | null;
    regressions: string[];
  }> = {},
  reasons: RegExp[] = [],
) {
  expect(reply.status, JSON.stringify(reply.body)).toBe(409);
  expect(reply.body.error).toMatchObject({ code: 'promotion_blocked', details });
  expect(Object.keys(reply.body.error.details).sort()).toEqual(
    ['candidatePassRate', 'evaluationId', 'productionPassRate', 'reasons', 'regressions'].sort(),
  );
  const got: string[] = reply.body.error.details.reasons;
  expect(got.length).toBeGreaterThan(0);
  expect(got.length, JSON.stringify(got)).toBe(reasons.length || got.length);
  for (const reason of reasons)
    expect(
      got.some((r) => reason.test(r)),
      `${reason} in ${JSON.stringify(got)}`,
    ).toBe(true);
  return reply.body.error;
}
