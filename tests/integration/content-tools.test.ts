import { readFileSync } from 'node:fs';
import path from 'node:path';
import { and, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { drafts, evalRuns, promptVersions } from '@/db/schema';
import { newId } from '@/server/ids';
import { newTeam, type TestUser } from '../helpers/api';
import { activePrompt, createPrompt } from '../helpers/prompts';
import { newRetrievalKey, retrieve } from '../helpers/retrieval';
import { caller, rejection } from '../helpers/trpc';

// Content's `tools` and `maxOutputTokens` (API.md "Moving prompts in and out"): validated on the
// draft, kept by saved versions, returned by get_version and retrieval, and backfilled on stored
// content older than them (migration 0034).

const weather = {
  type: 'function',
  name: 'get_weather',
  description: 'Current weather for a city.',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string', description: 'City name' }, days: { type: 'integer', minimum: 1 } },
    required: ['city'],
  },
};
const withTools = (extra: Record<string, unknown> = {}) => ({
  messages: [{ role: 'system', content: 'You report the weather.' }],
  inputType: 'user_message',
  tools: [weather],
  maxOutputTokens: 300,
  ...extra,
});

function expectError(result: { status: number; body: any }, status: number, code: string) {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.body.error.code).toBe(code);
}

async function storedDraft(promptId: string, user: TestUser) {
  const [row] = await (
    await getDb()
  )
    .select()
    .from(drafts)
    .where(and(eq(drafts.promptId, promptId), eq(drafts.userId, user.id)));
  return row;
}

const tool = (name: string, extra: Record<string, unknown> = {}) => ({ type: 'function', name, ...extra });
const content = (extra: Record<string, unknown>) => ({ messages: [], inputType: 'user_message', ...extra });

describe('draft content with tools and maxOutputTokens', () => {
  it('stores them, fills a tool’s description and parameters, and leaves the defaults when absent', async () => {
    const { org, editor } = await newTeam();
    const prompt = await createPrompt(editor, org.id);
    const draftPath = `/organizations/${org.id}/prompts/${prompt.id}/draft`;
    const saved = await editor.call('PUT', draftPath, {
      body: { content: withTools({ tools: [weather, tool('ping')] }), revision: 0 },
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect(saved.body.content.tools).toEqual([
      weather,
      { type: 'function', name: 'ping', description: '', parameters: { type: 'object', properties: {} } },
    ]);
    expect(saved.body.content.maxOutputTokens).toBe(300);
    expect((await storedDraft(prompt.id, editor)).content).toEqual(saved.body.content);

    // Absent fields are [] and null, as for every older content.
    const plain = await editor.call('PUT', draftPath, { body: { content: content({}), revision: 1 } });
    expect(plain.body.content).toMatchObject({ tools: [], maxOutputTokens: null });
    const cleared = await editor.call('PUT', draftPath, {
      body: { content: withTools({ maxOutputTokens: null, tools: [] }), revision: 2 },
    });
    expect(cleared.body.content).toMatchObject({ tools: [], maxOutputTokens: null });
  });

  it('accepts 64 tools, the largest limit and parameters without a type', async () => {
    const { org, editor } = await newTeam();
    const prompt = await createPrompt(editor, org.id);
    const tools = Array.from({ length: 64 }, (_, i) => tool(`tool_${i}`, { parameters: { properties: {} } }));
    const saved = await editor.call('PUT', `/organizations/${org.id}/prompts/${prompt.id}/draft`, {
      body: { content: content({ tools, maxOutputTokens: 1_000_000 }), revision: 0 },
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect(saved.body.content.tools).toHaveLength(64);
  });

  const deep = (levels: number) => {
    let schema: Record<string, unknown> = { type: 'object' };
    for (let i = 0; i < levels; i++) schema = { type: 'object', properties: { a: schema } };
    return schema;
  };

  it.each([
    ['duplicate tool names', content({ tools: [tool('a'), tool('a')] }), 'content.tools.1.name'],
    ['65 tools', content({ tools: Array.from({ length: 65 }, (_, i) => tool(`t${i}`)) }), 'content.tools'],
    ['a tool name with a space', content({ tools: [tool('get weather')] }), 'content.tools.0.name'],
    ['a tool name of 65 characters', content({ tools: [tool('a'.repeat(65))] }), 'content.tools.0.name'],
    ['a tool without a name', content({ tools: [{ type: 'function' }] }), 'content.tools.0.name'],
    ['a tool of another type', content({ tools: [{ type: 'web_search', name: 'w' }] }), 'content.tools.0.type'],
    ['an unknown tool field', content({ tools: [tool('a', { strict: true })] }), 'content.tools.0.strict'],
    ['a nested OpenAI function object', content({ tools: [tool('a', { function: {} })] }), 'content.tools.0.function'],
    ['tools not an array', content({ tools: {} }), 'content.tools'],
    [
      'a description of 10,001 characters',
      content({ tools: [tool('a', { description: 'x'.repeat(10_001) })] }),
      'content.tools.0.description',
    ],
    [
      'parameters not a JSON Schema',
      content({ tools: [tool('a', { parameters: { type: 'banana' } })] }),
      'content.tools.0.parameters',
    ],
    [
      'parameters with a bad keyword value',
      content({ tools: [tool('a', { parameters: { type: 'object', required: 'city' } })] }),
      'content.tools.0.parameters',
    ],
    [
      'parameters of type string',
      content({ tools: [tool('a', { parameters: { type: 'string' } })] }),
      'content.tools.0.parameters',
    ],
    ['parameters as an array', content({ tools: [tool('a', { parameters: [] })] }), 'content.tools.0.parameters'],
    [
      'parameters as JSON text',
      content({ tools: [tool('a', { parameters: '{"type":"object"}' })] }),
      'content.tools.0.parameters',
    ],
    [
      'parameters over 100,000 characters',
      content({ tools: [tool('a', { parameters: { type: 'object', description: 'x'.repeat(100_000) } })] }),
      'content.tools.0.parameters',
    ],
    [
      'parameters nesting past 48 levels',
      content({ tools: [tool('a', { parameters: deep(24) })] }),
      'content.tools.0.parameters',
    ],
    [
      'parameters nesting too deep',
      content({ tools: [tool('a', { parameters: deep(40) })] }),
      /^$/, // the edge refuses any body nesting past 64 levels, before parsing
    ],
    ['maxOutputTokens 0', content({ maxOutputTokens: 0 }), 'content.maxOutputTokens'],
    ['maxOutputTokens negative', content({ maxOutputTokens: -5 }), 'content.maxOutputTokens'],
    ['maxOutputTokens fractional', content({ maxOutputTokens: 10.5 }), 'content.maxOutputTokens'],
    ['maxOutputTokens over a million', content({ maxOutputTokens: 1_000_001 }), 'content.maxOutputTokens'],
    ['maxOutputTokens as a string', content({ maxOutputTokens: '100' }), 'content.maxOutputTokens'],
    ['maxOutputTokens as a boolean', content({ maxOutputTokens: true }), 'content.maxOutputTokens'],
  ])('%s → 400 with the issue path, nothing stored', async (_label, body, issuePath: string | RegExp) => {
    const { org, editor } = await newTeam();
    const prompt = await createPrompt(editor, org.id);
    const draftPath = `/organizations/${org.id}/prompts/${prompt.id}/draft`;
    await editor.call('GET', draftPath);
    const before = await storedDraft(prompt.id, editor);
    const result = await editor.call('PUT', draftPath, { body: { content: body, revision: 0 } });
    expectError(result, 400, 'invalid_request');
    const want = typeof issuePath === 'string' ? issuePath : expect.stringMatching(issuePath);
    expect(result.body.error.details.issues.map((i: { path: string }) => i.path)).toEqual(
      expect.arrayContaining([want]),
    );
    expect(await storedDraft(prompt.id, editor)).toEqual(before);
  });

  it.each([
    ['U+0000 in a parameter description', { type: 'object', properties: { city: { description: 'a\u0000b' } } }],
    ['a lone surrogate in a property name', { type: 'object', properties: { ['\ud800']: { type: 'string' } } }],
    ['a lone surrogate in an enum value', { type: 'object', properties: { u: { enum: ['\udfff'] } } }],
  ])('poison strings in parameters (%s) → 400 over REST and tRPC, nothing stored', async (_label, parameters) => {
    const { org, editor } = await newTeam();
    const prompt = await createPrompt(editor, org.id);
    const draftPath = `/organizations/${org.id}/prompts/${prompt.id}/draft`;
    await editor.call('GET', draftPath);
    const before = await storedDraft(prompt.id, editor);
    const body = { content: content({ tools: [tool('a', { parameters })] }), revision: 0 };
    const result = await editor.call('PUT', draftPath, { body });
    expectError(result, 400, 'invalid_request');
    expect(result.body.error.details.issues[0].path).toMatch(/^content\.tools\.0\.parameters/);
    const trpc = await caller(editor.id);
    const refused = await rejection(
      trpc.prompts.updateDraft({ organizationId: org.id, promptId: prompt.id, ...(body as any) }),
    );
    expect(refused.code).toBe('BAD_REQUEST');
    expect(await storedDraft(prompt.id, editor)).toEqual(before);
  });

  it('parameters nest at most 48 levels, so a prompt saved with them exports and imports again', async () => {
    const { org, editor, admin } = await newTeam();
    const body = (parameters: unknown) => ({
      source: 'openai',
      document: [
        {
          name: 'Deep',
          model: 'gpt-4o-mini',
          messages: [{ role: 'system', content: 'Call f.' }],
          tools: [{ type: 'function', function: { name: 'f', parameters } }],
        },
      ],
    });
    const imports = `/organizations/${org.id}/imports`;
    const tooDeep = await editor.call('POST', imports, { body: body(deep(24)) });
    expectError(tooDeep, 422, 'import_rejected');
    expect(JSON.stringify(tooDeep.body.error.details.items)).toContain('Must not nest more than 48 levels.');
    const created = await editor.call('POST', imports, { body: body(deep(23)) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const exported = await editor.call(
      'GET',
      `/organizations/${org.id}/prompts/${created.body.prompts[0].promptId}/export`,
    );
    expect(exported.status).toBe(200);
    const elsewhere = (await admin.call('POST', '/organizations', { body: { name: 'Elsewhere' } })).body;
    const again = await admin.call('POST', `/organizations/${elsewhere.id}/imports`, {
      body: { source: 'promptloop', document: exported.body },
    });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
  });

  it('the dashboard (tRPC) refuses the same content with the same paths', async () => {
    const { org, editor } = await newTeam();
    const prompt = await createPrompt(editor, org.id);
    const trpc = await caller(editor.id);
    const refused = await rejection(
      trpc.prompts.updateDraft({
        organizationId: org.id,
        promptId: prompt.id,
        revision: 0,
        content: content({ tools: [tool('a'), tool('a')], maxOutputTokens: 0 }) as any,
      }),
    );
    expect(refused.code).toBe('BAD_REQUEST');
    // The caller sees zod's issues; the browser gets them as details.issues with the same dotted paths.
    const paths = (refused.cause as unknown as { issues: { path: PropertyKey[] }[] }).issues.map((i) =>
      i.path.join('.'),
    );
    expect(paths).toEqual(expect.arrayContaining(['content.tools.1.name', 'content.maxOutputTokens']));
  });
});

describe('saved versions and retrieval carry tools and maxOutputTokens', () => {
  it('save version keeps them; get_version, list versions and retrieval return them', async () => {
    const { org, editor, admin } = await newTeam();
    const { prompt, base } = await activePrompt(editor, org.id);
    const draftPath = `${base}/draft`;
    const current = (await editor.call('GET', draftPath)).body;
    const draft = await editor.call('PUT', draftPath, { body: { content: withTools(), revision: current.revision } });
    expect(draft.status, JSON.stringify(draft.body)).toBe(200);
    const saved = await editor.call('POST', `${base}/versions`, { body: { draftRevision: draft.body.revision } });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    expect(saved.body.content).toMatchObject({ tools: [weather], maxOutputTokens: 300 });

    const version = await editor.call('GET', `${base}/versions/2`);
    expect(version.body.content).toEqual(saved.body.content);
    const list = await editor.call('GET', `${base}/versions`);
    expect(list.body.items[0].content).toMatchObject({ tools: [weather], maxOutputTokens: 300 });
    // Version 1 (saved before) has the defaults.
    expect((await editor.call('GET', `${base}/versions/1`)).body.content).toMatchObject({
      tools: [],
      maxOutputTokens: null,
    });

    await admin.call('PUT', `${base}/labels/staging`, { body: { versionId: saved.body.id } });
    const { secret } = await newRetrievalKey(admin.call, base);
    const retrieved = await retrieve(prompt.id, secret, { query: 'label=staging' });
    expect(retrieved.status).toBe(200);
    expect(retrieved.body.content).toEqual(saved.body.content);
    expect((await retrieve(prompt.id, secret, { query: 'version=2' })).body.content.tools).toEqual([weather]);
  });
});

describe('key order', () => {
  it('a tool’s parameters keep the order of their keys through draft, version, retrieval, export and replay', async () => {
    const { org, editor, admin } = await newTeam();
    const { prompt, base } = await activePrompt(editor, org.id);
    // Strict structured outputs write properties in schema order: "reasoning" before "answer" matters.
    const ordered = {
      type: 'function',
      name: 'grade',
      description: 'Grade the answer.',
      parameters: {
        type: 'object',
        properties: {
          reasoning: { type: 'string' },
          answer: { type: 'string' },
          confidence: { type: 'number', maximum: 1, minimum: 0 },
        },
        required: ['reasoning', 'answer', 'confidence'],
        additionalProperties: false,
      },
    };
    const keysOf = (content: any) => [
      Object.keys(content.tools[0].parameters),
      Object.keys(content.tools[0].parameters.properties),
      Object.keys(content.tools[0].parameters.properties.confidence),
    ];
    const expected = keysOf({ tools: [ordered] });
    expect(expected[1]).toEqual(['reasoning', 'answer', 'confidence']);
    const current = (await editor.call('GET', `${base}/draft`)).body;
    const draft = await editor.call('PUT', `${base}/draft`, {
      body: { content: withTools({ tools: [ordered] }), revision: current.revision },
    });
    expect(keysOf(draft.body.content)).toEqual(expected);
    expect(keysOf((await editor.call('GET', `${base}/draft`)).body.content)).toEqual(expected);
    const headers = { 'idempotency-key': `order-${prompt.id}` };
    const body = { draftRevision: draft.body.revision };
    const saved = await editor.call('POST', `${base}/versions`, { body, headers });
    expect(keysOf(saved.body.content)).toEqual(expected);
    const replay = await editor.call('POST', `${base}/versions`, { body, headers });
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(keysOf(replay.body.content)).toEqual(expected);
    expect(keysOf((await editor.call('GET', `${base}/versions/2`)).body.content)).toEqual(expected);
    await admin.call('PUT', `${base}/labels/staging`, { body: { versionId: saved.body.id } });
    const { secret } = await newRetrievalKey(admin.call, base);
    expect(keysOf((await retrieve(prompt.id, secret, { query: 'label=staging' })).body.content)).toEqual(expected);
    const exported = await editor.call('GET', `${base}/export`);
    expect(keysOf(exported.body.prompts[0].versions.at(-1).content)).toEqual(expected);
  });
});

// The statements of migration 0034, run again over rows written the way older code wrote them.
// Since 0047 the columns are json (not jsonb), so the statements read them as jsonb.
function migration0034(): string[] {
  const file = path.resolve(import.meta.dirname, '../../db/migrations/0034_content_tools_max_output_tokens.sql');
  return readFileSync(file, 'utf8')
    .split('--> statement-breakpoint')
    .map((statement) =>
      statement.trim().replaceAll('"content" ?', '"content"::jsonb ?').replace('|| "content"', '|| "content"::jsonb'),
    )
    .filter(Boolean);
}

describe('migration 0034 backfills stored content', () => {
  it('versions, drafts and evaluation runs written without the fields get [] and null; newer content is untouched', async () => {
    const { org, editor, admin } = await newTeam();
    const { prompt, base, v1 } = await activePrompt(editor, org.id);
    const db = await getDb();
    // A version with tools (written after the migration) must keep them.
    const current = (await editor.call('GET', `${base}/draft`)).body;
    const draft = await editor.call('PUT', `${base}/draft`, {
      body: { content: withTools(), revision: current.revision },
    });
    const v2 = await editor.call('POST', `${base}/versions`, { body: { draftRevision: draft.body.revision } });
    expect(v2.status).toBe(201);

    // Raw rows as M1–M8 stored them: no tools, no maxOutputTokens.
    const old = (value: unknown) => {
      const { tools: _tools, maxOutputTokens: _max, ...rest } = value as Record<string, unknown>;
      return rest;
    };
    await db
      .update(promptVersions)
      .set({ content: old(v1.content) })
      .where(eq(promptVersions.id, v1.id));
    await db
      .update(drafts)
      .set({ content: old(draft.body.content) })
      .where(and(eq(drafts.promptId, prompt.id), eq(drafts.userId, editor.id)));
    const runId = newId('run');
    await db.insert(evalRuns).values({
      id: runId,
      organizationId: org.id,
      promptId: prompt.id,
      versionId: v1.id,
      content: old(v1.content),
      scoring: { method: 'expected' },
      casesDigest: 'd',
      reuseKey: 'k',
      status: 'completed',
      totalCases: 0,
    });
    const [raw] = await db.select().from(promptVersions).where(eq(promptVersions.id, v1.id));
    expect(raw.content).not.toHaveProperty('tools');

    for (const statement of migration0034()) await db.execute(sql.raw(statement));

    const [version] = await db.select().from(promptVersions).where(eq(promptVersions.id, v1.id));
    expect(version.content).toEqual({ ...(v1.content as object), tools: [], maxOutputTokens: null });
    const [kept] = await db.select().from(promptVersions).where(eq(promptVersions.id, v2.body.id));
    expect(kept.content).toMatchObject({ tools: [weather], maxOutputTokens: 300 });
    expect((await storedDraft(prompt.id, editor)).content).toMatchObject({ tools: [], maxOutputTokens: null });
    const [run] = await db.select().from(evalRuns).where(eq(evalRuns.id, runId));
    expect(run.content).toMatchObject({ tools: [], maxOutputTokens: null });

    // What clients see: get_version and retrieval answer with the fields.
    expect((await editor.call('GET', `${base}/versions/1`)).body.content).toMatchObject({
      tools: [],
      maxOutputTokens: null,
    });
    const { secret } = await newRetrievalKey(admin.call, base);
    const retrieved = await retrieve(prompt.id, secret);
    expect(retrieved.body.version).toBe(1);
    expect(retrieved.body.content).toMatchObject({ tools: [], maxOutputTokens: null });
  });
});
