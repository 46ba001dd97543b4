import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { newTeam } from '../helpers/api';
import { newRetrievalKey, retrieve } from '../helpers/retrieval';
import { importPath } from '../helpers/imports';

// The three foreign sources through the REST API, end to end: each fixture (copied from the source's
// documentation, tests/fixtures/imports/README.md) is imported, then read back as a user would.

const fixture = (name: string) => JSON.parse(readFileSync(`tests/fixtures/imports/${name}.json`, 'utf8'));

async function importDocument(source: string, document: unknown, extra: Record<string, unknown> = {}) {
  const team = await newTeam();
  const result = await team.editor.call('POST', importPath(team.org.id), { body: { source, document, ...extra } });
  return { ...team, result };
}

function rowOf(body: any, name: string) {
  const row = body.prompts.find((p: any) => p.name === name);
  if (!row) throw new Error(`no report row for ${name}: ${JSON.stringify(body)}`);
  return row;
}

describe('import from OpenAI request bodies', () => {
  it('Chat Completions bodies become prompts with production on their version, retrievable with tools and limits', async () => {
    const { org, editor, viewer, result } = await importDocument('openai', fixture('openai-chat'));
    expect(result.status, JSON.stringify(result.body)).toBe(201);
    expect(result.body.prompts.map((p: any) => [p.name, p.action, p.versions, p.labels])).toEqual([
      ['ticket-categorizer', 'create', 1, 1],
      ['math-tutor', 'create', 1, 1],
      ['weather-chat', 'create', 1, 1],
      ['image-describer', 'create', 1, 1],
    ]);
    const ticket = rowOf(result.body, 'ticket-categorizer');
    expect(ticket.notes.join('\n')).toContain('gpt-4.1');

    const base = `/organizations/${org.id}/prompts/${ticket.promptId}`;
    const prompt = (await viewer.call('GET', base)).body;
    expect(prompt).toMatchObject({ state: 'active', versionCount: 1 });
    const { secret } = await newRetrievalKey(editor.call, base);
    const retrieved = await retrieve(ticket.promptId, secret);
    expect(retrieved.status).toBe(200);
    // developer → system, the {{variable}} kept, so the version takes variables.
    expect(retrieved.body.content).toMatchObject({
      messages: [
        { role: 'system', content: expect.stringContaining('categorizing IT support tickets') },
        { role: 'user', content: '{{ticket_text}}' },
      ],
      inputType: 'variables',
      modelRouteId: 'local/echo',
      tools: [],
      maxOutputTokens: null,
    });

    const math = rowOf(result.body, 'math-tutor');
    const mathVersion = (await viewer.call('GET', `/organizations/${org.id}/prompts/${math.promptId}/versions/1`)).body;
    expect(mathVersion.content.maxOutputTokens).toBe(1000);
    expect(JSON.parse(mathVersion.content.outputSchema)).toMatchObject({ required: ['steps', 'final_answer'] });

    const weather = rowOf(result.body, 'weather-chat');
    const weatherVersion = (await viewer.call('GET', `/organizations/${org.id}/prompts/${weather.promptId}/versions/1`))
      .body;
    expect(weatherVersion.content.tools).toEqual([
      expect.objectContaining({ type: 'function', name: expect.any(String), parameters: expect.any(Object) }),
    ]);
    expect(weather.notes.join('\n')).toMatch(/seed/);
  });

  it('several bodies with one name become versions; productionVersion picks the labelled one, else the highest', async () => {
    const bodies = [1, 2, 3].map((n) => ({
      name: 'Greeter',
      model: 'gpt-4o-mini',
      instructions: `Be kind, take ${n}.`,
      input: 'Hello {{name}}',
      max_output_tokens: 100 * n,
    }));
    const highest = await importDocument('openai', bodies);
    expect(highest.result.status, JSON.stringify(highest.result.body)).toBe(201);
    const greeter = rowOf(highest.result.body, 'Greeter');
    expect(greeter).toMatchObject({ versions: 3, labels: 1 });
    const prompt = (await highest.viewer.call('GET', `/organizations/${highest.org.id}/prompts/${greeter.promptId}`))
      .body;
    expect(prompt.labels).toEqual([expect.objectContaining({ label: 'production', version: 3 })]);
    const v2 = (
      await highest.viewer.call('GET', `/organizations/${highest.org.id}/prompts/${greeter.promptId}/versions/2`)
    ).body;
    expect(v2.content).toMatchObject({
      messages: [
        { role: 'system', content: 'Be kind, take 2.' },
        { role: 'user', content: 'Hello {{name}}' },
      ],
      inputType: 'variables',
      modelRouteId: 'openai/gpt-4o-mini',
      maxOutputTokens: 200,
    });

    const chosen = await importDocument('openai', bodies, { productionVersion: 2 });
    expect(chosen.result.status).toBe(201);
    const chosenRow = rowOf(chosen.result.body, 'Greeter');
    const chosenPrompt = (
      await chosen.viewer.call('GET', `/organizations/${chosen.org.id}/prompts/${chosenRow.promptId}`)
    ).body;
    expect(chosenPrompt.labels).toEqual([expect.objectContaining({ label: 'production', version: 2 })]);

    const missing = await importDocument('openai', bodies, { productionVersion: 7 });
    expect(missing.result.status).toBe(422);
    expect(missing.result.body.error.code).toBe('import_rejected');
    expect(missing.result.body.error.details.items[0].path).toMatch(/^\/0/);
    expect((await missing.viewer.call('GET', `/organizations/${missing.org.id}/prompts`)).body.items).toEqual([]);
  });

  it('a problem is said once, at its exact place; a duplicated key is named by its full path', async () => {
    const tool = (name: string) => ({ type: 'function', function: { name, parameters: { type: 'object' } } });
    const body = (tools: unknown[]) => ({
      name: 'Tooled',
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hi' }],
      tools,
    });
    const many = await importDocument('openai', [body(Array.from({ length: 65 }, (_, i) => tool(`t${i}`)))]);
    expect(many.result.status).toBe(422);
    expect(many.result.body.error.details.items).toEqual([{ path: '/0/tools', message: expect.stringMatching(/64/) }]);
    const twice = await importDocument('openai', [body([tool('same'), tool('same')])]);
    expect(twice.result.body.error.details.items).toHaveLength(1);
    expect(twice.result.body.error.details.items[0].path).toMatch(/^\/0\/tools\/1/);

    const { org, editor } = await newTeam();
    const raw = await editor.call('POST', importPath(org.id), {
      headers: { 'content-type': 'application/json' },
      rawBody:
        '{"source":"openai","document":[{"name":"x","model":"gpt-4o","messages":[{"role":"user","role":"system","content":"a"}]}]}',
    });
    expect(raw.status).toBe(400);
    expect(raw.body.error.details.issues).toEqual([
      { path: 'document.0.messages.0.role', message: 'Field given more than once.' },
    ]);
  });

  it('Responses bodies import; a dry run answers 200 with the same report and stores nothing', async () => {
    const document = fixture('openai-responses');
    const { org, editor, viewer } = await newTeam();
    const dry = await editor.call('POST', importPath(org.id), { body: { source: 'openai', document, dryRun: true } });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    expect(dry.body.prompts.every((p: any) => p.promptId === null && p.action === 'create')).toBe(true);
    expect((await viewer.call('GET', `/organizations/${org.id}/prompts`)).body.items).toEqual([]);

    const real = await editor.call('POST', importPath(org.id), { body: { source: 'openai', document } });
    expect(real.status).toBe(201);
    expect(real.body.prompts.map((p: any) => ({ ...p, promptId: null }))).toEqual(dry.body.prompts);
    expect(real.body.notes).toEqual(dry.body.notes);
    const calendar = rowOf(real.body, 'calendar-extractor');
    expect(calendar).toMatchObject({ versions: 2, labels: 1 });
  });

  it('a message with a role that has no meaning is refused at its path, and nothing is stored', async () => {
    const { org, viewer, result } = await importDocument('openai', [
      { name: 'Fine', model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] },
      {
        name: 'Broken',
        model: 'gpt-4o',
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'robot', content: 'x' },
        ],
      },
    ]);
    expect(result.status).toBe(422);
    expect(result.body.error.details.items).toEqual([{ path: '/1/messages/1/role', message: expect.any(String) }]);
    expect((await viewer.call('GET', `/organizations/${org.id}/prompts`)).body.items).toEqual([]);
  });
});

describe('import from Langfuse', () => {
  it('prompt objects keep versions, dates and labels (latest dropped); references resolve; placeholders are noted', async () => {
    const { org, viewer, result } = await importDocument('langfuse', fixture('langfuse-prompts'));
    expect(result.status, JSON.stringify(result.body)).toBe(201);
    const critic = rowOf(result.body, 'movie-critic');
    expect(critic).toMatchObject({ action: 'create', versions: 2, labels: 2 });
    expect(critic.notes.join('\n')).toMatch(/langfusePrompt/);
    const base = `/organizations/${org.id}/prompts/${critic.promptId}`;
    const labels = (await viewer.call('GET', `${base}/labels`)).body.items.map((l: any) => [l.label, l.version]);
    expect(labels).toEqual([
      ['production', 1],
      ['staging', 1],
    ]);
    const v2 = (await viewer.call('GET', `${base}/versions/2`)).body;
    expect(v2.content.messages[0].content).not.toContain('@@@langfusePrompt');
    expect(v2.content.maxOutputTokens).toBe(256);
    expect(v2.createdAt).toBe(
      new Date(
        fixture('langfuse-prompts').find((p: any) => p.name === 'movie-critic' && p.version === 2).createdAt,
      ).toISOString(),
    );
    const history = (await viewer.call('GET', `${base}/label-history`)).body.items;
    expect(history.every((h: any) => h.source === 'import')).toBe(true);

    const chat = rowOf(result.body, 'movie-critic-chat');
    expect(chat.notes.join('\n')).toMatch(/placeholder/i);
    // Only `latest`: no production label, so the prompt waits in setup.
    const agent = rowOf(result.body, 'weather-agent');
    // Its `latest` is dropped with a note, never silently (an application that retrieved it must change).
    expect(agent.notes.join('\n')).toContain('The label “latest” is not carried');
    expect((await viewer.call('GET', `/organizations/${org.id}/prompts/${agent.promptId}`)).body.state).toBe('setup');
  });

  it('a reference to a prompt the document does not hold is refused at the string that names it', async () => {
    const { org, viewer, result } = await importDocument('langfuse', [
      {
        name: 'outer',
        version: 1,
        type: 'text',
        prompt: 'Start. @@@langfusePrompt:name=absent|version=1@@@',
        config: {},
        labels: ['production'],
        tags: [],
        createdAt: '2024-05-01T00:00:00.000Z',
      },
    ]);
    expect(result.status).toBe(422);
    expect(result.body.error.details.items).toEqual([
      { path: '/0/prompt', message: expect.stringContaining('absent') },
    ]);
    expect((await viewer.call('GET', `/organizations/${org.id}/prompts`)).body.items).toEqual([]);
  });

  it('datasets mapped to a prompt become its cases (archived items skipped and noted)', async () => {
    const { org, viewer, result } = await importDocument('langfuse', fixture('langfuse-datasets'));
    expect(result.status, JSON.stringify(result.body)).toBe(201);
    const critic = rowOf(result.body, 'movie-critic');
    expect(critic.cases).toBe(1);
    expect(critic.notes.join('\n')).toMatch(/archived/);
    const dataset = (await viewer.call('GET', `/organizations/${org.id}/prompts/${critic.promptId}/dataset`)).body;
    expect(dataset.rows).toEqual([
      expect.objectContaining({
        input: JSON.stringify({ criticLevel: 'expert', movie: 'Dune 2' }),
        inputFormat: 'json',
        expectedOutput: 'Yes, a visually stunning sequel.',
      }),
    ]);
    expect(dataset.warnings).toEqual([]);
  });
});

describe('import from an OpenAI eval', () => {
  it('the prompt, its cases from the items and the string check as scoring', async () => {
    const { org, viewer, result } = await importDocument('openai_eval', fixture('openai-eval'));
    expect(result.status, JSON.stringify(result.body)).toBe(201);
    const [row] = result.body.prompts;
    expect(row).toMatchObject({ name: 'IT Ticket Categorization', action: 'create', versions: 1, labels: 1, cases: 3 });
    expect(row.notes.join('\n')).toMatch(/grader/);
    const base = `/organizations/${org.id}/prompts/${row.promptId}`;
    expect((await viewer.call('GET', `${base}/scoring`)).body.method).toBe('expected');
    const dataset = (await viewer.call('GET', `${base}/dataset`)).body;
    expect(dataset.rows.map((r: any) => [r.input, r.expectedOutput])).toEqual([
      ["My monitor won't turn on!", 'Hardware'],
      ["I'm in vim and I can't quit!", 'Software'],
      ['Best restaurants in Cleveland?', 'Other'],
    ]);
    // {{ item.ticket_text }} became {{ticket_text}}: the cases fill it, nothing is incompatible.
    expect(dataset.warnings).toEqual([]);
    const version = (await viewer.call('GET', `${base}/versions/1`)).body;
    expect(version.content.inputType).toBe('variables');
    expect(version.content.messages[1].content).toMatch(/\{\{\s*ticket_text\s*\}\}/);
  });
});

describe('import request shape', () => {
  it('a string document, an unknown source and a poison string are 400 with paths, nothing stored', async () => {
    const { org, editor, viewer } = await newTeam();
    const asString = await editor.call('POST', importPath(org.id), {
      body: { source: 'openai', document: JSON.stringify([{ name: 'x' }]) },
    });
    expect(asString.status).toBe(400);
    expect(asString.body.error.details.issues[0].path).toMatch(/document/);
    const unknown = await editor.call('POST', importPath(org.id), { body: { source: 'promptlayer', document: [] } });
    expect(unknown.status).toBe(400);
    const poison = await editor.call('POST', importPath(org.id), {
      body: { source: 'langfuse', document: [{ name: 'p', version: 1, type: 'text', prompt: 'a\u0000b' }] },
    });
    expect(poison.status).toBe(400);
    expect(poison.body.error.code).toBe('invalid_request');
    expect(JSON.stringify(poison.body.error.details.issues)).toMatch(/document/);
    expect((await viewer.call('GET', `/organizations/${org.id}/prompts`)).body.items).toEqual([]);
  });
});
