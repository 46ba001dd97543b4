import { getDb } from '@/db/client';
import { evaluations } from '@/db/schema';
import { runInTransaction } from '@/server/context';
import { newId } from '@/server/ids';
import { publishBaselineVersion } from '@/server/prompts/versions';
import type { TestUser } from './api';

export const systemContent = (text: string) => ({
  messages: [{ role: 'system', content: text }],
  inputType: 'user_message',
});

export async function createPrompt(
  user: TestUser,
  organizationId: string,
  name = 'Support answers',
): Promise<{ id: string; name: string; state: string }> {
  const created = await user.call('POST', `/organizations/${organizationId}/prompts`, { body: { name } });
  if (created.status !== 201)
    throw new Error(`create prompt failed: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body;
}

// Writes the user's draft (from whatever revision it is at) and returns the new draft.
export async function writeDraft(
  user: TestUser,
  organizationId: string,
  promptId: string,
  text: string,
): Promise<{ revision: number; content: any }> {
  const path = `/organizations/${organizationId}/prompts/${promptId}/draft`;
  const current = await user.call('GET', path);
  const saved = await user.call('PUT', path, {
    body: { content: systemContent(text), revision: current.body.revision },
  });
  if (saved.status !== 200) throw new Error(`draft write failed: ${saved.status} ${JSON.stringify(saved.body)}`);
  return saved.body;
}

/**
 * Publishes the user's current draft as version 1 the way a completed baseline does, by calling
 * publishBaselineVersion inside a transaction (until the engine can run a real baseline here).
 */
export async function publishBaseline(
  user: TestUser,
  organizationId: string,
  promptId: string,
  evaluationId = newId('eval'),
) {
  const path = `/organizations/${organizationId}/prompts/${promptId}/draft`;
  const draft = (await user.call('GET', path)).body;
  const db = await getDb();
  const version = await runInTransaction(db, (tx, afterCommit) =>
    publishBaselineVersion(
      { db: tx, afterCommit, actor: { userId: user.id, clientId: 'dashboard', human: true } },
      {
        organizationId,
        promptId,
        content: draft.content,
        draftUserId: user.id,
        draftRevision: draft.revision,
        evaluationId,
      },
    ),
  );
  return { ...version, evaluationId, draftRevision: draft.revision, content: draft.content };
}

// An active prompt with version 1 (labels staging and production) made from the user's draft.
export async function activePrompt(user: TestUser, organizationId: string, text = 'You answer support questions.') {
  const prompt = await createPrompt(user, organizationId);
  await writeDraft(user, organizationId, prompt.id, text);
  const v1 = await publishBaseline(user, organizationId, prompt.id);
  return { prompt, v1, base: `/organizations/${organizationId}/prompts/${prompt.id}` };
}

// An active prompt with versions 1..count (1 from the baseline, the rest saved).
export async function promptWithVersions(user: TestUser, organizationId: string, count: number) {
  const active = await activePrompt(user, organizationId);
  const ids = [active.v1.id];
  for (let i = 2; i <= count; i++) {
    const draft = await writeDraft(user, organizationId, active.prompt.id, `Take ${i}`);
    const saved = await user.call('POST', `${active.base}/versions`, { body: { draftRevision: draft.revision } });
    if (saved.status !== 201) throw new Error(JSON.stringify(saved.body));
    ids.push(saved.body.id);
  }
  return { ...active, ids };
}

// An evaluation row as the evaluation service would leave it (for label moves that name one).
export async function insertEvaluation(values: {
  organizationId: string;
  promptId: string;
  versionId: string | null;
  kind?: 'comparison' | 'baseline';
  status?: string;
  createdBy: string;
}) {
  const id = newId('eval');
  const db = await getDb();
  await db.insert(evaluations).values({
    id,
    organizationId: values.organizationId,
    promptId: values.promptId,
    kind: values.kind ?? 'comparison',
    status: (values.status ?? 'completed') as 'completed',
    scope: 'quick',
    versionId: values.versionId,
    candidateRunId: newId('run'),
    scoring: { method: 'expected' },
    datasetSize: 1,
    totalCases: 1,
    createdBy: values.createdBy,
    createdByClient: 'dashboard',
  });
  return id;
}
