import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mapLangfuseDocument } from '@/server/imports/sources/langfuse';
import { expectImportable, fixture, options } from '../helpers/mapper-fixtures';

// Langfuse's `latest` is dropped, and said so (API.md: nothing is dropped silently).
const latestNote =
  'The label “latest” is not carried: no label here follows the newest version (retrieve it with ?version=N, or move a label to it)';

// source "langfuse": prompt versions as GET /api/public/v2/prompts/{name}?version=N returns them,
// and the { prompts, datasets } form of the CLI's --dataset-map (API.md "Moving prompts in and out").

const map = (document: unknown, extra: { productionVersion?: number } = {}) =>
  mapLangfuseDocument(document, { ...options, ...extra });
const text = (name: string, version: number, prompt: string, fields: Record<string, unknown> = {}) => ({
  name,
  version,
  type: 'text',
  prompt,
  config: {},
  labels: [],
  tags: [],
  ...fields,
});
const chat = (name: string, version: number, prompt: unknown[], fields: Record<string, unknown> = {}) =>
  text(name, version, '', { type: 'chat', prompt, ...fields });
const user = (content: string) => ({ role: 'user', content });
function only(document: unknown) {
  const mapped = map(document);
  expectImportable(mapped);
  expect(mapped.prompts).toHaveLength(1);
  return mapped.prompts[0];
}

describe('prompt versions (fixture)', () => {
  const mapped = map(fixture('langfuse-prompts.json'));
  const byName = (name: string) => mapped.prompts.find((p) => p.name === name)!;

  it('maps every version without a problem and notes Langfuse’s bookkeeping once', () => {
    expectImportable(mapped);
    expect(mapped.prompts.map((p) => [p.name, p.path, p.versions.map((v) => v.version)])).toEqual([
      ['movie-critic', '/0', [1, 2]],
      ['critic-guidelines', '/2', [1]],
      ['movie-critic-chat', '/3', [1]],
      ['invoice-extractor', '/4', [1]],
      ['weather-agent', '/5', [1]],
    ]);
    expect(mapped.notes).toEqual([
      'Langfuse’s own fields are not carried: id, updatedAt, projectId, createdBy and isActive (the import gives new ids and records who imported).',
    ]);
  });

  it('a text prompt is one user message; config maps like OpenAI; references resolve to the referenced text', () => {
    const critic = byName('movie-critic');
    expect(critic.versions).toEqual([
      {
        version: 1,
        createdAt: '2024-05-02T09:00:00.000Z',
        path: '/0',
        content: {
          messages: [{ role: 'user', content: 'As a {{criticLevel}} movie critic, do you like {{movie}}?' }],
          inputType: 'variables',
          modelRouteId: 'openai/gpt-4o',
          temperature: 0.5,
          outputSchema: '',
          tools: [],
          maxOutputTokens: null,
        },
      },
      {
        version: 2,
        createdAt: '2024-05-09T14:30:00.000Z',
        path: '/1',
        content: {
          messages: [
            {
              role: 'user',
              content:
                'Keep reviews short and never reveal the ending.\nAs a {{criticLevel}} movie critic, do you like {{movie}}?',
            },
          ],
          inputType: 'variables',
          modelRouteId: 'openai/gpt-4o',
          temperature: 0.5,
          outputSchema: '',
          tools: [],
          maxOutputTokens: 256,
        },
      },
    ]);
  });

  it('carries labels (latest dropped with a note, ours refused with a note), never adds production', () => {
    expect(byName('movie-critic').labels).toEqual([
      { label: 'production', version: 1, path: '/0/labels/0' },
      { label: 'staging', version: 1, path: '/0/labels/1' },
    ]);
    expect(byName('weather-agent').labels).toEqual([]);
    expect(byName('movie-critic').notes).toEqual([
      'config.supported_languages has no counterpart here and was not carried (versions 1 and 2).',
      'Tags are not carried: movies.',
      '@@@langfusePrompt:name=critic-guidelines|version=1@@@ was replaced by the text of “critic-guidelines” version 1 (version 2).',
      `${latestNote} (version 2).`,
      'The label “team_a” does not fit our label names (lowercase letters, digits, hyphens) and was dropped (version 2).',
      'Commit messages are not carried (version 2).',
    ]);
  });

  it('removes and notes a message placeholder, role for role otherwise', () => {
    const chatPrompt = byName('movie-critic-chat');
    expect(chatPrompt.versions[0].content).toMatchObject({
      messages: [
        { role: 'system', content: 'You are an {{criticlevel}} movie critic' },
        { role: 'user', content: 'What should I watch next?' },
      ],
      inputType: 'variables',
      modelRouteId: 'local/echo',
    });
    expect(chatPrompt.notes).toEqual([
      'The message placeholder “chat_history” was removed (placeholders have no counterpart here).',
      'No model is given: local/echo is used.',
      `${latestNote}.`,
    ]);
  });

  it('config.response_format → outputSchema, temperature 0 kept', () => {
    const invoice = byName('invoice-extractor');
    expect(invoice.versions[0].content).toMatchObject({
      temperature: 0,
      outputSchema: JSON.stringify({
        type: 'object',
        properties: { invoice_number: { type: 'string' }, total: { type: 'number' } },
        required: ['invoice_number', 'total'],
        additionalProperties: false,
      }),
    });
    expect(invoice.notes).toEqual([
      'The output schema’s name and strict are not carried (the schema is).',
      `${latestNote}.`,
      'Tags are not carried: finance.',
      'Commit messages are not carried.',
    ]);
  });

  it('config.tools → tools; a label reference resolves in a chat message', () => {
    const agent = byName('weather-agent');
    expect(agent.versions[0].content).toMatchObject({
      messages: [
        { role: 'system', content: 'Keep reviews short and never reveal the ending. You are a weather agent.' },
        { role: 'user', content: 'What’s the weather in {{city}}?'.replace('’', "'") },
      ],
      tools: [
        {
          type: 'function',
          name: 'get_current_weather',
          description: 'Get the current weather in a given location',
          parameters: expect.objectContaining({ required: ['location'] }),
        },
      ],
    });
    expect(agent.notes).toEqual([
      '@@@langfusePrompt:name=critic-guidelines|label=production@@@ was replaced by the text of “critic-guidelines” version 1.',
      'No model is given: local/echo is used.',
      'config.tool_choice has no counterpart here and was not carried.',
      `${latestNote}.`,
    ]);
  });
});

describe('prompt versions: rules', () => {
  it('maps chat roles (developer → system) and notes others', () => {
    const prompt = only([
      chat('c', 1, [
        { role: 'developer', content: 'Be brief.' },
        { role: 'assistant', content: 'Ok.' },
        { role: 'tool', content: '1' },
        user('Hi'),
      ]),
    ]);
    expect((prompt.versions[0].content as { messages: unknown }).messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'assistant', content: 'Ok.' },
      { role: 'user', content: 'Hi' },
    ]);
    expect(prompt.notes).toEqual([
      '“tool” messages have no counterpart here and were left out.',
      'No model is given: local/echo is used.',
    ]);
  });

  it('infers the type from the prompt when it is missing, refuses unknown types', () => {
    expect(only([{ name: 'a', version: 1, prompt: 'Hi' }]).versions[0].content).toMatchObject({
      messages: [user('Hi')],
    });
    expect(only([{ name: 'a', version: 1, prompt: [user('Hi')] }]).versions[0].content).toMatchObject({
      messages: [user('Hi')],
    });
    expect(
      map([
        { name: 'a', version: 1, type: 'image', prompt: 'Hi' },
        { name: 'b', version: 1, prompt: 3 },
      ]).problems,
    ).toEqual([
      { path: '/0/type', message: 'Give the type: text or chat.' },
      { path: '/1/type', message: 'Give the type: text or chat.' },
    ]);
  });

  it('refuses what a version needs at its field', () => {
    const mapped = map([
      text('a', 1, 'x', { name: undefined }),
      text('a', 0, 'x'),
      text('b', 1, 'x', { prompt: ['x'] }),
      chat('c', 1, [user('ok')], { prompt: 'x' }),
      chat('d', 1, [3, { role: 7, content: 'x' }, { role: 'user', content: ['x'] }]),
      text('e', 1, ''),
      text('f', 1, 'x', { createdAt: 'yesterday' }),
      text('g', 1, 'x', { config: 'gpt-4o' }),
      'prompt',
    ]);
    expect(mapped.problems).toEqual([
      { path: '/0/name', message: 'Give the prompt a name (a string).' },
      { path: '/1/version', message: 'Give the version as a whole number from 1 to 2147483647.' },
      { path: '/8', message: 'Give each prompt version as an object.' },
      { path: '/2/prompt', message: 'Give a text prompt’s prompt as a string.' },
      { path: '/3/prompt', message: 'Give a chat prompt’s prompt as an array of messages.' },
      { path: '/4/prompt/0', message: 'Give each message as an object.' },
      { path: '/4/prompt/1/role', message: 'Give the message’s role.' },
      { path: '/4/prompt/2/content', message: 'Give the content as a string.' },
      {
        path: '/5/prompt',
        message: 'No message here can be carried: we keep text messages of system, developer, user and assistant.',
      },
      { path: '/6/createdAt', message: 'Give createdAt as an ISO 8601 date.' },
      { path: '/7/config', message: 'Give the config as an object.' },
    ]);
  });

  it('groups versions by name, sorted, and refuses a (name, version) given twice', () => {
    const mapped = map([text('a', 3, 'x'), text('b', 1, 'x'), text('a', 1, 'x'), text('a', 3, 'y')]);
    expect(mapped.problems).toEqual([{ path: '/3/version', message: 'Version 3 of “a” is given twice (also at /0).' }]);
    expect(mapped.prompts.map((p) => [p.name, p.path, p.versions.map((v) => [v.version, v.path])])).toEqual([
      [
        'a',
        '/0',
        [
          [1, '/2'],
          [3, '/0'],
        ],
      ],
      ['b', '/1', [[1, '/1']]],
    ]);
  });

  it('refuses a label on two versions, and labels that are not strings', () => {
    const mapped = map([
      text('a', 1, 'x', { labels: ['production'] }),
      text('a', 2, 'x', { labels: ['staging', 'production'] }),
      text('b', 1, 'x', { labels: 'production' }),
      text('c', 1, 'x', { labels: [5] }),
    ]);
    expect(mapped.problems).toEqual([
      { path: '/1/labels/1', message: 'The label “production” is on two versions of “a” (also version 1).' },
      { path: '/2/labels', message: 'Give the labels as an array of strings.' },
      { path: '/3/labels/0', message: 'Give each label as a string.' },
    ]);
  });

  it('never gives production by default; productionVersion is noted and ignored', () => {
    const mapped = map([text('a', 1, 'x'), text('a', 2, 'x', { labels: ['latest'] })], { productionVersion: 1 });
    expectImportable(mapped);
    expect(mapped.prompts[0].labels).toEqual([]);
    expect(mapped.notes).toEqual([
      'productionVersion is for sources without labels: Langfuse labels are carried as they are.',
    ]);
  });

  it('maps config like an OpenAI body and notes the rest by key', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    const content = (config: unknown) =>
      only([text('a', 1, 'x', { config })]).versions[0].content as Record<string, unknown>;
    expect(content({ json_schema: { name: 's', schema } }).outputSchema).toBe(JSON.stringify(schema));
    expect(content({ json_schema: schema }).outputSchema).toBe(JSON.stringify(schema));
    expect(content({ max_completion_tokens: 9 }).maxOutputTokens).toBe(9);
    expect(content({ tools: [{ name: 'flat', parameters: { type: 'object' } }] }).tools).toEqual([
      { type: 'function', name: 'flat', description: '', parameters: { type: 'object' } },
    ]);
    const both = only([
      text('a', 1, 'x', {
        config: {
          model: 'gpt-4.1',
          response_format: { type: 'json_schema', json_schema: { schema } },
          json_schema: schema,
          max_tokens: 5,
          max_output_tokens: 6,
          top_p: 0.1,
          frequency_penalty: null,
        },
      }),
    ]);
    expect(both.versions[0].content).toMatchObject({
      modelRouteId: 'openai/gpt-4.1',
      outputSchema: JSON.stringify(schema),
      maxOutputTokens: 5,
    });
    expect(both.notes).toEqual([
      'config.max_output_tokens is not carried: config.max_tokens is used.',
      'config.json_schema is not carried: config.response_format is used.',
      'config.top_p has no counterpart here and was not carried.',
    ]);
  });

  it('refuses config values our content cannot hold, at the config field', () => {
    const mapped = map([
      text('a', 1, 'x', { config: { temperature: 3 } }),
      text('b', 1, 'x', { config: { max_tokens: 0 } }),
      text('c', 1, 'x', { config: { model: ['gpt-4o'] } }),
      text('d', 1, 'x', { config: { json_schema: 'object' } }),
      text('e', 1, 'x', { config: { tools: [{ type: 'function', function: { name: 'a b' } }] } }),
      text('f', 1, 'x', { config: { response_format: { type: 'json_schema' } } }),
    ]);
    expect(mapped.problems).toEqual([
      { path: '/0/config/temperature', message: 'Temperature 3 is outside our range of 0 to 2.' },
      { path: '/1/config/max_tokens', message: 'Use 1 to 1,000,000 output tokens.' },
      { path: '/2/config/model', message: 'Give the model as a string.' },
      { path: '/3/config/json_schema', message: 'Give the JSON Schema as an object.' },
      { path: '/4/config/tools/0/function/name', message: 'Use 1 to 64 letters, digits, underscores or hyphens.' },
      { path: '/5/config/response_format/json_schema', message: 'Give json_schema as an object with the schema.' },
    ]);
  });

  it('notes fields it does not know, not empty ones', () => {
    expect(only([text('a', 1, 'x', { folder: 'team', commitMessage: '', tags: [] })]).notes).toEqual([
      'No model is given: local/echo is used.',
      'folder has no counterpart here and was not carried.',
    ]);
  });

  it('refuses a document that is not an array of prompts or { prompts, datasets }', () => {
    const message = 'Give an array of Langfuse prompt objects, or { prompts, datasets }.';
    for (const document of ['text', 3, null, { data: [] }])
      expect(map(document).problems).toEqual([{ path: '', message }]);
    expect(map({ prompts: {} }).problems).toEqual([{ path: '/prompts', message }]);
    expect(map({ prompts: [], meta: { page: 1 } })).toEqual({
      prompts: [],
      notes: ['meta has no counterpart here and was not carried.'],
      problems: [],
    });
  });
});

describe('@@@langfusePrompt references', () => {
  const base = text('base', 1, 'BASE', { labels: ['production'] });

  it('resolves by version or label, nested, and notes each replacement', () => {
    const mapped = map([
      base,
      text('middle', 1, '[@@@langfusePrompt:name=base|label=production@@@]'),
      text('top', 1, '@@@langfusePrompt:name=middle|version=1@@@ and @@@langfusePrompt:name=base|version=1@@@'),
    ]);
    expectImportable(mapped);
    const top = mapped.prompts[2];
    expect(top.versions[0].content).toMatchObject({ messages: [user('[BASE] and BASE')] });
    expect(top.notes).toEqual([
      '@@@langfusePrompt:name=base|label=production@@@ was replaced by the text of “base” version 1.',
      '@@@langfusePrompt:name=middle|version=1@@@ was replaced by the text of “middle” version 1.',
      '@@@langfusePrompt:name=base|version=1@@@ was replaced by the text of “base” version 1.',
      'No model is given: local/echo is used.',
    ]);
  });

  it('resolves label latest to the highest version when the export dropped it', () => {
    const mapped = map([
      text('base', 1, 'old'),
      text('base', 2, 'new'),
      text('top', 1, '@@@langfusePrompt:name=base|label=latest@@@'),
    ]);
    expect(mapped.prompts[1].versions[0].content).toMatchObject({ messages: [user('new')] });
  });

  it('keeps text that is not a reference Langfuse resolves, with a note', () => {
    const prompt = only([text('a', 1, '@@@langfusePrompt:version=1|name=b@@@ @@@langfusePrompt:name=b@@@')]);
    expect(prompt.versions[0].content).toMatchObject({
      messages: [user('@@@langfusePrompt:version=1|name=b@@@ @@@langfusePrompt:name=b@@@')],
    });
    expect(prompt.notes.slice(0, 2)).toEqual([
      '@@@langfusePrompt:version=1|name=b@@@ is not a reference Langfuse resolves: it was kept as written.',
      '@@@langfusePrompt:name=b@@@ is not a reference Langfuse resolves: it was kept as written.',
    ]);
  });

  it('refuses a reference the document cannot resolve, at the string holding it', () => {
    const mapped = map([
      base,
      text('missing', 1, 'See @@@langfusePrompt:name=base|version=2@@@'),
      chat('in-chat', 1, [user('ok'), user('@@@langfusePrompt:name=nobody|label=production@@@')]),
      chat('chatty', 1, [user('I am chat')]),
      text('to-chat', 1, '@@@langfusePrompt:name=chatty|version=1@@@'),
      text('self', 1, 'x'),
      text('self', 2, '@@@langfusePrompt:name=self|version=1@@@'),
      text('ping', 1, '@@@langfusePrompt:name=pong|version=1@@@'),
      text('pong', 1, '@@@langfusePrompt:name=ping|version=1@@@'),
    ]);
    expect(mapped.problems).toEqual([
      {
        path: '/1/prompt',
        message: '@@@langfusePrompt:name=base|version=2@@@ refers to a prompt version this document does not hold.',
      },
      {
        path: '/2/prompt/1/content',
        message:
          '@@@langfusePrompt:name=nobody|label=production@@@ refers to a prompt version this document does not hold.',
      },
      {
        path: '/4/prompt',
        message:
          '@@@langfusePrompt:name=chatty|version=1@@@ refers to a chat prompt: Langfuse resolves references to text prompts only.',
      },
      {
        path: '/6/prompt',
        message: '@@@langfusePrompt:name=self|version=1@@@ cannot be resolved: “self” is referenced in a circle.',
      },
      {
        path: '/7/prompt',
        message: '@@@langfusePrompt:name=pong|version=1@@@ cannot be resolved: “ping” is referenced in a circle.',
      },
      {
        path: '/8/prompt',
        message: '@@@langfusePrompt:name=ping|version=1@@@ cannot be resolved: “pong” is referenced in a circle.',
      },
    ]);
  });

  it('resolves five levels of nesting and refuses six, like Langfuse', () => {
    const chain = (levels: number) =>
      Array.from({ length: levels + 1 }, (_, i) =>
        text(`p${i}`, 1, i === levels ? 'end' : `@@@langfusePrompt:name=p${i + 1}|version=1@@@`),
      );
    const ok = map(chain(4));
    expectImportable(ok);
    expect(ok.prompts[0].versions[0].content).toMatchObject({ messages: [user('end')] });
    // a long chain is refused without descending it
    expect(map(chain(5000)).problems[0]).toEqual({
      path: '/0/prompt',
      message: '@@@langfusePrompt:name=p1|version=1@@@ cannot be resolved: References nest deeper than 5 levels.',
    });
    expect(map(chain(5)).problems[0]).toEqual({
      path: '/0/prompt',
      message: '@@@langfusePrompt:name=p1|version=1@@@ cannot be resolved: References nest deeper than 5 levels.',
    });
  });

  it('stops a text that grows past a message’s length instead of building it', () => {
    const big = text('big', 1, 'x'.repeat(60_000));
    const twice = '@@@langfusePrompt:name=big|version=1@@@'.repeat(2);
    const many = '@@@langfusePrompt:name=double|version=1@@@'.repeat(5000);
    const mapped = map([big, text('double', 1, twice), text('many', 1, many)]);
    expect(mapped.problems).toEqual([
      {
        path: '/1/prompt',
        message: 'Resolving @@@langfusePrompt:name=big|version=1@@@ makes the text longer than 100000 characters.',
      },
      {
        path: '/2/prompt',
        message:
          '@@@langfusePrompt:name=double|version=1@@@ cannot be resolved: Resolving @@@langfusePrompt:name=big|version=1@@@ makes the text longer than 100000 characters.',
      },
    ]);
  });
});

describe('datasets (fixture)', () => {
  const mapped = map(fixture('langfuse-datasets.json'));

  it('turns items into cases of the named prompt: JSON input in the json format, null expected output empty', () => {
    expectImportable(mapped);
    const [critic, echo] = mapped.prompts;
    expect(critic.cases).toEqual([
      {
        path: '/datasets/0/items/0',
        row: {
          input: '{"criticLevel":"expert","movie":"Dune 2"}',
          expectedOutput: 'Yes, a visually stunning sequel.',
          inputFormat: 'json',
          referenceFormat: 'text',
        },
      },
    ]);
    expect(echo.cases).toEqual([
      {
        path: '/datasets/1/items/0',
        row: {
          input: '{"text":"hello world"}',
          expectedOutput: '{"text":"hello world"}',
          inputFormat: 'json',
          referenceFormat: 'json',
        },
      },
      {
        path: '/datasets/1/items/1',
        row: { input: 'hello world', expectedOutput: '', inputFormat: 'text', referenceFormat: 'text' },
      },
    ]);
  });

  it('skips archived items and notes them, item metadata and the items’ bookkeeping', () => {
    const [critic, echo] = mapped.prompts;
    expect(critic.notes).toEqual([`${latestNote}.`, 'Dataset “movie-questions”: 1 archived item was skipped.']);
    expect(echo.notes).toEqual([
      'No model is given: local/echo is used.',
      `${latestNote}.`,
      'Dataset “echo-dataset”: item metadata is not carried (1 item).',
      'Dataset “echo-dataset”: 1 item has no expected output; the case’s expected output is empty.',
    ]);
    expect(mapped.notes).toContain(
      'Langfuse’s dataset item ids, dates, statuses and source trace links are not carried.',
    );
  });
});

describe('datasets: rules', () => {
  const prompts = [text('a', 1, 'Repeat: {{text}}')];
  const item = (fields: Record<string, unknown>) => ({
    id: 'i',
    status: 'ACTIVE',
    input: 'x',
    expectedOutput: null,
    metadata: null,
    ...fields,
  });
  const withItems = (items: unknown, extra: Record<string, unknown> = {}) => ({
    prompts,
    datasets: [{ name: 'd', prompt: 'a', items, ...extra }],
  });

  it('skips items without input with a note, counts them', () => {
    const mapped = map(
      withItems([
        item({ input: null }),
        item({ input: '' }),
        item({ status: 'ARCHIVED' }),
        item({ status: 'ARCHIVED' }),
        item({}),
      ]),
    );
    expectImportable(mapped);
    expect(mapped.prompts[0].cases).toHaveLength(1);
    expect(mapped.prompts[0].notes).toEqual([
      'No model is given: local/echo is used.',
      'Dataset “d”: 2 archived items were skipped.',
      'Dataset “d”: 2 items without input were skipped.',
      'Dataset “d”: 1 item has no expected output; the case’s expected output is empty.',
    ]);
  });

  it('numbers, booleans and arrays are JSON too', () => {
    const mapped = map(
      withItems([item({ input: 42, expectedOutput: [1, 2] }), item({ input: true, expectedOutput: 'yes' })]),
    );
    expect(mapped.prompts[0].cases.map((c) => c.row)).toEqual([
      { input: '42', expectedOutput: '[1,2]', inputFormat: 'json', referenceFormat: 'json' },
      { input: 'true', expectedOutput: 'yes', inputFormat: 'json', referenceFormat: 'text' },
    ]);
  });

  it('refuses datasets and items at their fields', () => {
    expect(map({ prompts, datasets: {} }).problems).toEqual([
      { path: '/datasets', message: 'Give datasets as an array of { name, prompt, items }.' },
    ]);
    const mapped = map({
      prompts,
      datasets: [
        { name: 'd', prompt: 'nope', items: [] },
        { name: 'd', prompt: 3, items: [] },
        { name: 'd', prompt: 'a', items: {} },
        {
          name: 'd',
          prompt: 'a',
          items: [3, item({ input: 'x'.repeat(100_001) }), item({ expectedOutput: 'y'.repeat(100_001) })],
        },
        'dataset',
      ],
    });
    expect(mapped.problems).toEqual([
      { path: '/datasets/0/prompt', message: '“nope” names no prompt of this document.' },
      { path: '/datasets/1/prompt', message: 'Give the name of the prompt whose dataset this is.' },
      { path: '/datasets/2/items', message: 'Give the items as an array.' },
      { path: '/datasets/3/items/0', message: 'Give each dataset item as an object.' },
      { path: '/datasets/3/items/1/input', message: 'Use at most 100000 characters.' },
      { path: '/datasets/3/items/2/expectedOutput', message: 'Use at most 100000 characters.' },
      { path: '/datasets/4', message: 'Give each dataset as { name, prompt, items }.' },
    ]);
  });

  it('notes dataset fields it does not know', () => {
    expect(map(withItems([item({})], { description: 'QA set' })).prompts[0].notes).toContain(
      'Dataset “d”: description has no counterpart here and was not carried.',
    );
  });
});

describe('never throws', () => {
  it('refuses nesting deeper than 64 levels before reading', () => {
    let deep: unknown = {};
    for (let i = 0; i < 5000; i++) deep = { a: deep };
    expect(map([text('a', 1, 'x', { config: deep })]).problems).toEqual([
      { path: '', message: 'The document nests deeper than 64 levels.' },
    ]);
  });

  it('answers every JSON document with a mapping, the same one twice', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (document) => {
        expect(map(document)).toEqual(map(document));
      }),
      { numRuns: 300 },
    );
  });

  const name = fc.constantFrom('a', 'b', 'c');
  const content = fc.oneof(
    fc.string(),
    fc.constantFrom(
      '@@@langfusePrompt:name=a|version=1@@@',
      '@@@langfusePrompt:name=b|label=production@@@ {{x}}',
      '@@@langfusePrompt:name=c|label=latest@@@',
    ),
  );
  const message = fc.oneof(
    fc.record({ role: fc.constantFrom('system', 'user', 'assistant', 'developer', 'tool', 5), content }),
    fc.record({ type: fc.constant('placeholder'), name: fc.string() }),
    fc.jsonValue({ maxDepth: 2 }),
  );
  const version = fc.record(
    {
      name,
      version: fc.integer({ min: 0, max: 3 }),
      type: fc.constantFrom('text', 'chat', 'x'),
      prompt: fc.oneof(content, fc.array(message, { maxLength: 3 })),
      labels: fc.array(fc.constantFrom('production', 'latest', 'staging', 'Bad_Label', 3), { maxLength: 3 }),
      config: fc.oneof(
        fc.record({
          model: fc.constantFrom('gpt-4o', 'x'),
          temperature: fc.double(),
          max_tokens: fc.integer(),
          tools: fc.jsonValue({ maxDepth: 3 }),
        }),
        fc.jsonValue({ maxDepth: 3 }),
      ),
      createdAt: fc.oneof(fc.constant('2024-01-01T00:00:00.000Z'), fc.string()),
      tags: fc.array(fc.string(), { maxLength: 2 }),
    },
    { requiredKeys: ['name', 'version'] },
  );
  const dataset = fc.record({
    name: fc.string(),
    prompt: name,
    items: fc.array(
      fc.record({
        status: fc.constantFrom('ACTIVE', 'ARCHIVED'),
        input: fc.jsonValue({ maxDepth: 2 }),
        expectedOutput: fc.jsonValue({ maxDepth: 2 }),
      }),
      { maxLength: 3 },
    ),
  });

  it('maps prompt-shaped junk deterministically; without problems, everything passes our schemas', () => {
    fc.assert(
      fc.property(fc.array(version, { maxLength: 6 }), fc.array(dataset, { maxLength: 2 }), (prompts, datasets) => {
        const document = { prompts, datasets };
        const mapped = map(document);
        expect(map(document)).toEqual(mapped);
        if (mapped.problems.length === 0) expectImportable(mapped);
        for (const prompt of mapped.prompts) expect(prompt.labels.filter((l) => l.label === 'latest')).toEqual([]);
      }),
      { numRuns: 400 },
    );
  });
});
