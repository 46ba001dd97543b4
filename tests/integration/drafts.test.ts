import { describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { auditLog, drafts, organizations } from '@/db/schema';
import { newTeam, type TestUser } from '../helpers/api';
import { activePrompt, writeDraft } from '../helpers/prompts';

function expectError(result: { status: number; body: any }, status: number, code: string) {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.body.error.code).toBe(code);
}

async function setup() {
  const team = await newTeam();
  const prompt = (await team.admin.call('POST', `/organizations/${team.org.id}/prompts`, { body: { name: 'Drafty' } }))
    .body;
  const path = `/organizations/${team.org.id}/prompts/${prompt.id}/draft`;
  return { ...team, prompt, path };
}

const emptyContent = {
  messages: [],
  inputType: 'user_message',
  modelRouteId: 'local/echo',
  modelId: 'echo',
  temperature: 1,
  outputSchema: '',
  customMetrics: [],
  tools: [],
  maxOutputTokens: null,
};

async function storedDraft(promptId: string, user: TestUser) {
  const db = await getDb();
  const [row] = await db
    .select()
    .from(drafts)
    .where(and(eq(drafts.promptId, promptId), eq(drafts.userId, user.id)));
  return row;
}

describe('personal drafts', () => {
  it('say which version they started from, so a draft older than a teammate’s version can be told apart', async () => {
    const { org, admin, editor } = await newTeam();
    const { prompt, base } = await activePrompt(admin, org.id);
    const path = `${base}/draft`;
    // Published from the admin's setup draft: that draft is now based on version 1.
    expect((await admin.call('GET', path)).body).toMatchObject({ basedOnVersion: 1, latestVersion: 1 });
    // The editor's draft starts from version 1 and is edited.
    const edited = await writeDraft(editor, org.id, prompt.id, 'Editor’s take');
    expect(edited).toMatchObject({ basedOnVersion: 1, latestVersion: 1 });

    // The admin saves version 2: the admin's draft follows it, the editor's is now behind.
    const adminDraft = await writeDraft(admin, org.id, prompt.id, 'Admin’s take');
    const v2 = await admin.call('POST', `${base}/versions`, { body: { draftRevision: adminDraft.revision } });
    expect(v2.status).toBe(201);
    expect((await admin.call('GET', path)).body).toMatchObject({ basedOnVersion: 2, latestVersion: 2 });
    const behind = (await editor.call('GET', path)).body;
    expect(behind).toMatchObject({ basedOnVersion: 1, latestVersion: 2 });
    // Editing does not change what the draft is based on; discarding starts again from version 2.
    const again = await writeDraft(editor, org.id, prompt.id, 'Editor’s second take');
    expect(again).toMatchObject({ basedOnVersion: 1, latestVersion: 2 });
    const discarded = await editor.call('POST', `${path}/discard`, { body: { revision: again.revision } });
    expect(discarded.body).toMatchObject({
      basedOnVersion: 2,
      latestVersion: 2,
      content: { messages: [{ content: 'Admin’s take' }] },
    });

    // Saving from the behind draft is allowed (drafts are personal); the draft is then based on it.
    const edited2 = await writeDraft(editor, org.id, prompt.id, 'Editor’s third take');
    const v3 = await editor.call('POST', `${base}/versions`, { body: { draftRevision: edited2.revision } });
    expect(v3.body.number).toBe(3);
    expect((await editor.call('GET', path)).body).toMatchObject({ basedOnVersion: 3, latestVersion: 3 });
    expect((await storedDraft(prompt.id, admin)).basedOnVersion).toBe(2);
  });

  it('first read creates revision 0 with empty setup content; each user has their own', async () => {
    const { editor, admin, viewer, path, prompt } = await setup();
    const first = await editor.call('GET', path);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      content: emptyContent,
      revision: 0,
      basedOnVersion: 0,
      latestVersion: 0,
      updatedAt: expect.any(String),
      variables: [],
    });
    expect((await editor.call('GET', path)).body).toEqual(first.body);
    expect((await viewer.call('GET', path)).body.revision).toBe(0);

    const saved = await editor.call('PUT', path, {
      body: {
        content: { messages: [{ role: 'system', content: 'Editor text' }], inputType: 'user_message' },
        revision: 0,
      },
    });
    expect(saved.status).toBe(200);
    expect((await admin.call('GET', path)).body.content).toEqual(emptyContent);
    expect((await storedDraft(prompt.id, editor)).revision).toBe(1);
  });

  it('update fills defaults and modelId, extracts variables in message order, and is audited', async () => {
    const { editor, path, prompt, org } = await setup();
    const content = {
      messages: [
        { role: 'system', content: 'You translate to {{ language }} for {{audience}}.' },
        { role: 'user', content: 'Text: {{text}} ({{language}}) {{ 9bad }} {not}' },
      ],
      inputType: 'variables',
      temperature: 0,
      outputSchema: JSON.stringify({
        type: 'object',
        properties: { answer: { type: 'string' } },
        required: ['answer'],
      }),
      customMetrics: [
        { name: 'mentions', type: 'contains', value: 'hola' },
        { name: 'no sorry', type: 'not_contains', value: 'sorry' },
        { name: 'digits', type: 'matches_regex', value: '^\\d+$' },
        { name: 'json', type: 'is_json' },
        { name: 'schema', type: 'matches_schema' },
        { name: 'short', type: 'max_chars', value: 280 },
      ],
    };
    // Never read before: the write creates the draft and swaps against revision 0.
    const saved = await editor.call('PUT', path, { body: { content, revision: 0 } });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect(saved.body.revision).toBe(1);
    expect(saved.body.content).toEqual({
      ...content,
      modelRouteId: 'local/echo',
      modelId: 'echo',
      tools: [],
      maxOutputTokens: null,
    });
    expect(saved.body.variables).toEqual(['language', 'audience', 'text']);

    const again = await editor.call('PUT', path, { body: { content: { ...content, modelId: 'echo' }, revision: 1 } });
    expect(again.body.revision).toBe(2);
    const db = await getDb();
    const audits = await db
      .select()
      .from(auditLog)
      .where(
        and(
          eq(auditLog.organizationId, org.id),
          eq(auditLog.targetId, prompt.id),
          eq(auditLog.operation, 'draft.update'),
        ),
      );
    expect(audits).toHaveLength(2);
  });

  it('a stale revision is 409 draft_conflict with the current revision and leaves the content alone', async () => {
    const { editor, path, prompt } = await setup();
    await editor.call('PUT', path, {
      body: { content: { messages: [{ role: 'user', content: 'A' }], inputType: 'user_message' }, revision: 0 },
    });
    const before = await storedDraft(prompt.id, editor);
    const stale = await editor.call('PUT', path, {
      body: { content: { messages: [{ role: 'user', content: 'B' }], inputType: 'user_message' }, revision: 0 },
    });
    expectError(stale, 409, 'draft_conflict');
    expect(stale.body.error.details).toEqual({ currentRevision: 1 });
    const ahead = await editor.call('PUT', path, {
      body: { content: { messages: [], inputType: 'user_message' }, revision: 7 },
    });
    expectError(ahead, 409, 'draft_conflict');
    expect(await storedDraft(prompt.id, editor)).toEqual(before);
  });

  it('N concurrent writers with the same revision: exactly one wins', async () => {
    const { editor, path, prompt } = await setup();
    await editor.call('GET', path);
    const writers = Array.from({ length: 8 }, (_, i) =>
      editor.call('PUT', path, {
        body: {
          content: { messages: [{ role: 'user', content: `writer ${i}` }], inputType: 'user_message' },
          revision: 0,
        },
      }),
    );
    const results = await Promise.all(writers);
    const winners = results.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    for (const loser of results.filter((r) => r.status !== 200)) {
      expectError(loser, 409, 'draft_conflict');
      expect(loser.body.error.details.currentRevision).toBe(1);
    }
    const stored = await storedDraft(prompt.id, editor);
    expect(stored.revision).toBe(1);
    expect(stored.content).toEqual(winners[0].body.content);
  });

  it('concurrent first writes on a draft never read: one creates and wins', async () => {
    const { editor, path } = await setup();
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        editor.call('PUT', path, {
          body: { content: { messages: [{ role: 'user', content: `w${i}` }], inputType: 'user_message' }, revision: 0 },
        }),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(4);
  });

  it('discard is CAS too and resets to the empty setup content', async () => {
    const { editor, path, prompt } = await setup();
    await editor.call('PUT', path, {
      body: { content: { messages: [{ role: 'user', content: 'keep?' }], inputType: 'user_message' }, revision: 0 },
    });
    const stale = await editor.call('POST', `${path}/discard`, { body: { revision: 0 } });
    expectError(stale, 409, 'draft_conflict');
    expect((await storedDraft(prompt.id, editor)).content).toMatchObject({
      messages: [{ role: 'user', content: 'keep?' }],
    });
    const discarded = await editor.call('POST', `${path}/discard`, { body: { revision: 1 } });
    expect(discarded.status).toBe(200);
    expect(discarded.body).toMatchObject({ content: emptyContent, revision: 2, variables: [] });
  });

  it.each([
    [
      'unknown role',
      { messages: [{ role: 'tool', content: 'x' }], inputType: 'user_message' },
      'content.messages.0.role',
    ],
    [
      'empty message content',
      { messages: [{ role: 'user', content: '' }], inputType: 'user_message' },
      'content.messages.0.content',
    ],
    ['unknown inputType', { messages: [], inputType: 'chat' }, 'content.inputType'],
    ['missing inputType', { messages: [] }, 'content.inputType'],
    ['missing messages', { inputType: 'user_message' }, 'content.messages'],
    ['unknown route', { messages: [], inputType: 'user_message', modelRouteId: 'nope/model' }, 'content.modelRouteId'],
    ['modelId of another model', { messages: [], inputType: 'user_message', modelId: 'gpt-4o' }, 'content.modelId'],
    ['temperature above 2', { messages: [], inputType: 'user_message', temperature: 2.5 }, 'content.temperature'],
    ['negative temperature', { messages: [], inputType: 'user_message', temperature: -0.1 }, 'content.temperature'],
    [
      'outputSchema not JSON',
      { messages: [], inputType: 'user_message', outputSchema: '{type:' },
      'content.outputSchema',
    ],
    [
      'outputSchema not a schema',
      { messages: [], inputType: 'user_message', outputSchema: '{"type":"banana"}' },
      'content.outputSchema',
    ],
    ['unknown field in content', { messages: [], inputType: 'user_message', model: 'x' }, 'content.model'],
    [
      'unknown field in message',
      { messages: [{ role: 'user', content: 'x', name: 'n' }], inputType: 'user_message' },
      'content.messages.0.name',
    ],
    [
      'too many messages',
      { messages: Array.from({ length: 51 }, () => ({ role: 'user', content: 'x' })), inputType: 'user_message' },
      'content.messages',
    ],
    [
      'message too long',
      { messages: [{ role: 'user', content: 'x'.repeat(100_001) }], inputType: 'user_message' },
      'content.messages.0.content',
    ],
    [
      'metric type unknown',
      { messages: [], inputType: 'user_message', customMetrics: [{ name: 'm', type: 'equals', value: 'x' }] },
      'content.customMetrics.0.type',
    ],
    [
      'contains without value',
      { messages: [], inputType: 'user_message', customMetrics: [{ name: 'm', type: 'contains' }] },
      'content.customMetrics.0.value',
    ],
    [
      'regex that does not compile',
      { messages: [], inputType: 'user_message', customMetrics: [{ name: 'm', type: 'matches_regex', value: '([a-' }] },
      'content.customMetrics.0.value',
    ],
    [
      'is_json with a value',
      { messages: [], inputType: 'user_message', customMetrics: [{ name: 'm', type: 'is_json', value: 'x' }] },
      'content.customMetrics.0.value',
    ],
    [
      'max_chars zero',
      { messages: [], inputType: 'user_message', customMetrics: [{ name: 'm', type: 'max_chars', value: 0 }] },
      'content.customMetrics.0.value',
    ],
    [
      'max_chars fractional',
      { messages: [], inputType: 'user_message', customMetrics: [{ name: 'm', type: 'max_chars', value: 1.5 }] },
      'content.customMetrics.0.value',
    ],
    [
      'matches_schema with no schema anywhere',
      { messages: [], inputType: 'user_message', customMetrics: [{ name: 'm', type: 'matches_schema' }] },
      'content.customMetrics.0.value',
    ],
    [
      'matches_schema with a bad schema',
      {
        messages: [],
        inputType: 'user_message',
        customMetrics: [{ name: 'm', type: 'matches_schema', value: '{"type":1}' }],
      },
      'content.customMetrics.0.value',
    ],
    [
      'duplicate metric names',
      {
        messages: [],
        inputType: 'user_message',
        customMetrics: [
          { name: 'm', type: 'is_json' },
          { name: 'm', type: 'is_json' },
        ],
      },
      'content.customMetrics.1.name',
    ],
    [
      'too many metrics',
      {
        messages: [],
        inputType: 'user_message',
        customMetrics: Array.from({ length: 21 }, (_, i) => ({ name: `m${i}`, type: 'is_json' })),
      },
      'content.customMetrics',
    ],
  ])('content with %s → 400 at %s, nothing stored', async (_label, content, path) => {
    const { editor, path: draftPath, prompt } = await setup();
    await editor.call('GET', draftPath);
    const before = await storedDraft(prompt.id, editor);
    const result = await editor.call('PUT', draftPath, { body: { content, revision: 0 } });
    expectError(result, 400, 'invalid_request');
    expect(result.body.error.details.issues.map((i: any) => i.path)).toContain(path);
    expect(await storedDraft(prompt.id, editor)).toEqual(before);
  });

  it.each([
    ['missing revision', { content: { messages: [], inputType: 'user_message' } }],
    ['negative revision', { content: { messages: [], inputType: 'user_message' }, revision: -1 }],
    ['revision as string', { content: { messages: [], inputType: 'user_message' }, revision: '0' }],
    ['unknown top-level field', { content: { messages: [], inputType: 'user_message' }, revision: 0, force: true }],
  ])('update with %s → 400', async (_label, body) => {
    const { editor, path } = await setup();
    expectError(await editor.call('PUT', path, { body }), 400, 'invalid_request');
  });

  it('viewers read but cannot write; archived prompts and read-only organizations refuse writes', async () => {
    const { admin, viewer, editor, path, prompt, org } = await setup();
    const body = { content: { messages: [], inputType: 'user_message' }, revision: 0 };
    expect((await viewer.call('GET', path)).status).toBe(200);
    const denied = await viewer.call('PUT', path, { body });
    expectError(denied, 403, 'forbidden');
    expectError(await viewer.call('POST', `${path}/discard`, { body: { revision: 0 } }), 403, 'forbidden');

    const db = await getDb();
    await db.update(organizations).set({ readOnly: true }).where(eq(organizations.id, org.id));
    expectError(await editor.call('PUT', path, { body }), 403, 'read_only');
    await db.update(organizations).set({ readOnly: false }).where(eq(organizations.id, org.id));

    await admin.call('POST', `/organizations/${org.id}/prompts/${prompt.id}/archive`);
    const archived = await editor.call('PUT', path, { body });
    expectError(archived, 409, 'invalid_state');
    expect(archived.body.error.details).toEqual({ state: 'archived' });
    expectError(await editor.call('POST', `${path}/discard`, { body: { revision: 0 } }), 409, 'invalid_state');
    expect((await editor.call('GET', path)).status).toBe(200);
    expect(await storedDraft(prompt.id, editor)).toMatchObject({ revision: 0 });
  });

  it('another organization’s prompt is 404', async () => {
    const { path } = await setup();
    const other = await newTeam();
    expectError(await other.admin.call('GET', path), 404, 'not_found');
    expectError(
      await other.admin.call('PUT', path, {
        body: { content: { messages: [], inputType: 'user_message' }, revision: 0 },
      }),
      404,
      'not_found',
    );
  });
});
