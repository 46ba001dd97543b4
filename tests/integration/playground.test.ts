import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTrpcContext } from '@/server/trpc/init';
import { appRouter, type AppRouter } from '@/server/trpc/root';
import { createTRPCClient, httpBatchStreamLink } from '@trpc/client';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { startFakeProvider, type FakeProvider } from '../helpers/openai-server';
import { caller, rejection } from '../helpers/trpc';
import { serveTrpc } from '@/server/trpc/http';

async function signedUp() {
  const profile = await (
    await caller(null)
  ).account.signUp({ email: `pg-${randomUUID()}@example.test`, password: 'river-stone-42' });
  return { profile, trpc: await caller(profile.id) };
}

// An organization with an admin, an editor and a viewer, and one prompt, all through tRPC.
async function team() {
  const admin = await signedUp();
  const editor = await signedUp();
  const viewer = await signedUp();
  const org = await admin.trpc.organizations.create({ name: 'Playground Co' });
  await admin.trpc.members.add({ organizationId: org.id, email: editor.profile.email!, role: 'editor' });
  await admin.trpc.members.add({ organizationId: org.id, email: viewer.profile.email!, role: 'viewer' });
  const prompt = await editor.trpc.prompts.create({ organizationId: org.id, name: 'Playground prompt' });
  return { admin, editor, viewer, org, prompt, ids: { organizationId: org.id, promptId: prompt.id } };
}

async function drain(iterable: AsyncIterable<any>) {
  const events: any[] = [];
  for await (const event of iterable) events.push(event);
  return events;
}

let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
  process.env.MODEL_RETRY_BASE_MS = '1';
  process.env.MODEL_ROUTES = JSON.stringify([
    { id: 'fake/gpt-4o', provider: 'fake', name: 'Fake 4o', baseUrl: fake.baseUrl, modelId: 'gpt-4o' },
    {
      id: 'remote/nokey',
      provider: 'remote',
      name: 'Remote without key',
      baseUrl: 'https://models.example.com/v1',
      apiKeyEnv: 'UNSET_PLAYGROUND_KEY',
      modelId: 'gpt-4o',
    },
  ]);
});
afterAll(async () => {
  await fake.close();
  delete process.env.MODEL_ROUTES;
  delete process.env.MODEL_RETRY_BASE_MS;
});

describe('playground.run (tRPC streaming)', () => {
  it('streams the local echo of a user message, then the totals', async () => {
    const { editor, ids } = await team();
    const content = {
      messages: [{ role: 'system' as const, content: 'You are terse.' }],
      inputType: 'user_message' as const,
    };
    const events = await drain(await editor.trpc.playground.run({ ...ids, content, input: 'one two three four five' }));
    const deltas = events.filter((e) => e.type === 'delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((e) => e.text).join('')).toBe('one two three four five');
    expect(events.at(-1)).toEqual({
      type: 'done',
      output: 'one two three four five',
      inputTokens: 8,
      outputTokens: 5,
      latencyMs: expect.any(Number),
      costUsdNanos: 0,
      finishReason: 'stop',
    });
  });

  it('renders variables and sends the rendered prompt to the provider', async () => {
    const { admin, ids } = await team();
    fake.script([{ kind: 'stream', chunks: ['Bon', 'jour'], usage: { prompt_tokens: 10, completion_tokens: 2 } }]);
    const content = {
      messages: [{ role: 'user' as const, content: 'Say hello in {{language}} to {{ name }}.' }],
      inputType: 'variables' as const,
      modelRouteId: 'fake/gpt-4o',
      temperature: 0.3,
    };
    const events = await drain(
      await admin.trpc.playground.run({ ...ids, content, variables: { language: 'French', name: 'Ana' } }),
    );
    expect(events.at(-1)).toMatchObject({
      type: 'done',
      output: 'Bonjour',
      inputTokens: 10,
      outputTokens: 2,
      costUsdNanos: 10 * 2500 + 2 * 10000,
    });
    expect(fake.requests[0].body).toMatchObject({
      model: 'gpt-4o',
      temperature: 0.3,
      messages: [{ role: 'user', content: 'Say hello in French to Ana.' }],
    });
  });

  it('viewers may not run; missing input or variables are refused before any provider call', async () => {
    const { viewer, editor, ids } = await team();
    const content = {
      messages: [{ role: 'user' as const, content: 'Hi {{who}}' }],
      inputType: 'variables' as const,
      modelRouteId: 'fake/gpt-4o',
    };
    fake.script([{ kind: 'ok', text: 'unused' }]);
    const denied = await rejection(viewer.trpc.playground.run({ ...ids, content, variables: { who: 'x' } }));
    expect(denied.code).toBe('FORBIDDEN');
    expect(denied.cause.code).toBe('forbidden');
    const missing = await rejection(editor.trpc.playground.run({ ...ids, content, variables: {} }));
    expect(missing.code).toBe('BAD_REQUEST');
    expect(missing.cause.details.issues).toEqual([{ path: 'variables.who', message: expect.any(String) }]);
    const noInput = await rejection(
      editor.trpc.playground.run({ ...ids, content: { messages: [], inputType: 'user_message' } }),
    );
    expect(noInput.cause.details.issues).toEqual([{ path: 'input', message: expect.any(String) }]);
    const unknownRoute = await rejection(
      editor.trpc.playground.run({
        ...ids,
        content: { messages: [], inputType: 'user_message', modelRouteId: 'nope/x' },
        input: 'hi',
      }),
    );
    expect(unknownRoute.cause.details.issues).toEqual([{ path: 'content.modelRouteId', message: expect.any(String) }]);
    expect(fake.requests).toHaveLength(0);
  });

  it('a provider failure surfaces as unavailable while iterating', async () => {
    const { editor, ids } = await team();
    fake.script([{ kind: 'status', status: 503 }]);
    const events = await editor.trpc.playground.run({
      ...ids,
      content: { messages: [], inputType: 'user_message', modelRouteId: 'fake/gpt-4o' },
      input: 'hi',
    });
    const error = await rejection(drain(events));
    expect(error.cause.code).toBe('unavailable');
    expect(error.cause.details).toMatchObject({ provider: 'fake' });
    expect(fake.requests).toHaveLength(3);
  });
});

describe('prompt and dataset procedures keep the same rules through tRPC', () => {
  it('drafts: CAS conflict carries appCode draft_conflict and the current revision', async () => {
    const { editor, ids } = await team();
    const draft = await editor.trpc.prompts.getDraft(ids);
    expect(draft.revision).toBe(0);
    const saved = await editor.trpc.prompts.updateDraft({
      ...ids,
      revision: 0,
      content: { messages: [{ role: 'user', content: '{{x}}' }], inputType: 'variables' },
    });
    expect(saved).toMatchObject({ revision: 1, variables: ['x'] });
    const stale = await rejection(
      editor.trpc.prompts.updateDraft({ ...ids, revision: 0, content: { messages: [], inputType: 'user_message' } }),
    );
    expect(stale.code).toBe('CONFLICT');
    expect(stale.cause.code).toBe('draft_conflict');
    expect(stale.cause.details).toEqual({ currentRevision: 1 });
    expect((await editor.trpc.prompts.discardDraft({ ...ids, revision: 1 })).revision).toBe(2);
  });

  it('viewers read but cannot write; archived prompts refuse draft and dataset writes', async () => {
    const { admin, editor, viewer, ids, org } = await team();
    expect((await viewer.trpc.prompts.list({ organizationId: org.id, limit: 25 })).items).toHaveLength(1);
    expect((await viewer.trpc.datasets.get(ids)).count).toBe(0);
    expect((await viewer.trpc.models.list({ organizationId: org.id })).items[0].id).toBe('local/echo');
    expect(
      (await rejection(viewer.trpc.datasets.addCase({ ...ids, revision: 0, row: { input: 'a', expectedOutput: 'b' } })))
        .cause.code,
    ).toBe('forbidden');
    expect((await rejection(viewer.trpc.prompts.rename({ ...ids, name: 'x' }))).cause.code).toBe('forbidden');

    const added = await editor.trpc.datasets.addCase({ ...ids, revision: 0, row: { input: 'a', expectedOutput: 'b' } });
    const preview = await editor.trpc.datasets.previewImport({
      ...ids,
      mode: 'append',
      rows: [{ input: 'a', expectedOutput: 'b' }, { input: 'c', expectedOutput: 'd' }, { input: '' }],
    });
    expect(preview).toEqual({
      wouldAdd: 1,
      skippedRows: [{ row: 1, reason: 'duplicate' }],
      rowErrors: [
        { row: 3, field: 'input', message: expect.any(String) },
        { row: 3, field: 'expectedOutput', message: expect.any(String) },
      ],
      currentCount: 1,
      availableCapacity: 9,
      requestedAddition: 1,
      accepted: false,
    });
    expect((await editor.trpc.datasets.get(ids)).revision).toBe(1);
    const imported = await editor.trpc.datasets.import({
      ...ids,
      revision: 1,
      mode: 'append',
      rows: [{ input: 'c', expectedOutput: 'd' }],
    });
    expect(imported).toEqual({ added: 1, skipped: 0, count: 2, revision: 2, skippedRows: [], warnings: [] });
    const rejected = await rejection(
      editor.trpc.datasets.import({ ...ids, revision: 2, mode: 'append', rows: [{ input: '', expectedOutput: '' }] }),
    );
    expect(rejected.code).toBe('UNPROCESSABLE_CONTENT');
    expect(rejected.cause.code).toBe('import_rejected');
    const stale = await rejection(editor.trpc.datasets.deleteCase({ ...ids, caseId: added.id, revision: 0 }));
    expect(stale.cause).toMatchObject({ code: 'dataset_conflict', details: { currentRevision: 2 } });

    const archived = await admin.trpc.prompts.archive(ids);
    expect(archived.state).toBe('archived');
    for (const write of [
      () =>
        editor.trpc.prompts.updateDraft({ ...ids, revision: 0, content: { messages: [], inputType: 'user_message' } }),
      () => editor.trpc.datasets.addCase({ ...ids, revision: 2, row: { input: 'e', expectedOutput: 'f' } }),
      () => editor.trpc.datasets.reorder({ ...ids, revision: 2, caseIds: [] }),
      () => editor.trpc.datasets.previewImport({ ...ids, mode: 'append', rows: [] }),
    ]) {
      const error = await rejection(write());
      expect(error.cause).toMatchObject({ code: 'invalid_state', details: { state: 'archived' } });
    }
  });
});

describe('playground.run over the wire', () => {
  it('streams through httpBatchStreamLink and the fetch adapter, as the dashboard uses it', async () => {
    const { editor, ids } = await team();
    const userId = editor.profile.id;
    const client = createTRPCClient<AppRouter>({
      links: [
        httpBatchStreamLink({
          url: 'http://localhost/api/trpc',
          fetch: (input, init) =>
            fetchRequestHandler({
              endpoint: '/api/trpc',
              req: new Request(input as string, init as RequestInit),
              router: appRouter,
              createContext: () => createTrpcContext({ actor: { userId, clientId: 'dashboard', human: true } }),
            }),
        }),
      ],
    });
    const stream = await client.playground.run.mutate({
      ...ids,
      content: { messages: [], inputType: 'user_message' },
      input: 'alpha beta gamma delta epsilon',
    });
    const events = await drain(stream);
    expect(
      events
        .filter((e) => e.type === 'delta')
        .map((e) => e.text)
        .join(''),
    ).toBe('alpha beta gamma delta epsilon');
    expect(events.at(-1)).toMatchObject({ type: 'done', outputTokens: 5 });

    // A provider failure reaches the browser with its application code.
    fake.script([{ kind: 'status', status: 400, body: JSON.stringify({ error: { message: 'bad model' } }) }]);
    const failing = await client.playground.run.mutate({
      ...ids,
      content: { messages: [], inputType: 'user_message', modelRouteId: 'fake/gpt-4o' },
      input: 'hi',
    });
    const error = await drain(failing).then(
      () => null,
      (e: any) => e,
    );
    expect(error?.data).toMatchObject({ appCode: 'unavailable', details: { provider: 'fake', status: 400 } });
    expect(error.message).toContain('bad model');
  });

  it('a route without credentials is 503 unavailable with Retry-After through the HTTP handler (API.md: every 503)', async () => {
    const { editor, ids } = await team();
    const response = await serveTrpc(
      new Request('http://localhost:3999/api/trpc/playground.run', {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: 'http://localhost:3999' },
        body: JSON.stringify({
          ...ids,
          content: { messages: [], inputType: 'user_message', modelRouteId: 'remote/nokey' },
          input: 'hi',
        }),
      }),
      { actor: { userId: editor.profile.id, clientId: 'dashboard', human: true } },
    );
    expect(response.status).toBe(503);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    const body = await response.json();
    expect(body.error.data).toMatchObject({ appCode: 'unavailable', details: { reason: 'not_configured' } });
  });
});
