import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { draftContentInput } from '@/server/prompts/schemas';
import { mapOpenAiDocument } from '@/server/imports/sources/openai';
import { expectImportable, fixture, options, problemPaths } from '../helpers/mapper-fixtures';

// source "openai": Responses and Chat Completions bodies → prompts (API.md "Moving prompts in and out").

const map = (document: unknown, extra: { productionVersion?: number } = {}) =>
  mapOpenAiDocument(document, { ...options, ...extra });
const body = (fields: Record<string, unknown> = {}) => ({ name: 'p', model: 'gpt-4.1', input: 'Hi', ...fields });
// The one prompt of a problem-free mapping.
function only(document: unknown) {
  const mapped = map(document);
  expectImportable(mapped);
  expect(mapped.prompts).toHaveLength(1);
  return mapped.prompts[0];
}
const contentOf = (document: unknown, version = 0) =>
  only(document).versions[version].content as Record<string, unknown>;

const calendarSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    date: { type: 'string' },
    participants: { type: 'array', items: { type: 'string' } },
  },
  required: ['name', 'date', 'participants'],
  additionalProperties: false,
};

describe('Responses bodies (fixture)', () => {
  const mapped = map(fixture('openai-responses.json'));

  it('maps every body without a problem', () => {
    expectImportable(mapped);
    expect(mapped.prompts.map((p) => p.name)).toEqual(['calendar-extractor', 'local-weather', 'pirate']);
    expect(mapped.notes).toEqual([]);
  });

  it('groups bodies of one name into versions, json_schema formats into output schemas, production on the highest', () => {
    const [calendar] = mapped.prompts;
    expect(calendar).toMatchObject({ path: '/0', scoring: null, cases: [] });
    expect(calendar.versions).toEqual([
      {
        version: 1,
        createdAt: null,
        path: '/0',
        content: {
          messages: [
            { role: 'system', content: 'Extract the event information.' },
            { role: 'user', content: 'Alice and Bob are going to a science fair on Friday.' },
          ],
          inputType: 'user_message',
          modelRouteId: 'local/echo',
          outputSchema: JSON.stringify(calendarSchema),
          tools: [],
          maxOutputTokens: null,
        },
      },
      {
        version: 2,
        createdAt: null,
        path: '/1',
        content: {
          // instructions first, then the input_text part holding the variable
          messages: [
            { role: 'system', content: 'Extract the event information.' },
            { role: 'user', content: '{{event_description}}' },
          ],
          inputType: 'variables',
          modelRouteId: 'local/echo',
          outputSchema: JSON.stringify(calendarSchema),
          tools: [],
          maxOutputTokens: 500,
        },
      },
    ]);
    expect(calendar.labels).toEqual([{ label: 'production', version: 2, path: '/1' }]);
    expect(calendar.notes).toEqual([
      'Model “gpt-4o-2024-08-06” has no route here (openai/gpt-4o-2024-08-06): local/echo is used (versions 1 and 2).',
      'The output schema’s name and strict are not carried (the schema is) (versions 1 and 2).',
      'text.verbosity has no counterpart here and was not carried (version 2).',
      'store has no counterpart here and was not carried (version 2).',
    ]);
  });

  it('maps developer messages to system, keeps {{variables}}, carries function tools and drops built-in ones', () => {
    const weather = mapped.prompts[1];
    expect(weather.versions[0].content).toEqual({
      messages: [
        { role: 'system', content: 'You answer questions about the weather. Use the tools you have.' },
        { role: 'user', content: 'What is the weather like in {{city}} today?' },
      ],
      inputType: 'variables',
      modelRouteId: 'openai/gpt-4.1',
      temperature: 0.2,
      outputSchema: '',
      tools: [
        {
          type: 'function',
          name: 'get_weather',
          description: 'Get current temperature for a given location.',
          parameters: {
            type: 'object',
            properties: { location: { type: 'string', description: 'City and country e.g. Bogotá, Colombia' } },
            required: ['location'],
            additionalProperties: false,
          },
        },
      ],
      maxOutputTokens: null,
    });
    expect(weather.labels).toEqual([{ label: 'production', version: 1, path: '/2' }]);
    expect(weather.notes).toEqual([
      'The strict setting of function tools is not carried.',
      'Built-in tools (web_search_preview) have no counterpart here and were dropped.',
      'tool_choice has no counterpart here and was not carried.',
      'top_p has no counterpart here and was not carried.',
    ]);
  });

  it('makes instructions the first system message and a string input the user message', () => {
    const pirate = mapped.prompts[2];
    expect(pirate.versions[0].content).toMatchObject({
      messages: [
        { role: 'system', content: 'Talk like a pirate.' },
        { role: 'user', content: 'Are semicolons optional in JavaScript?' },
      ],
      inputType: 'user_message',
    });
    expect(pirate.notes).toEqual([
      'Model “gpt-5” has no route here (openai/gpt-5): local/echo is used.',
      'reasoning has no counterpart here and was not carried.',
    ]);
  });
});

describe('Chat Completions bodies (fixture)', () => {
  const mapped = map(fixture('openai-chat.json'));
  const [tickets, tutor, weather, images] = mapped.prompts;

  it('maps every body without a problem', () => {
    expectImportable(mapped);
    expect(mapped.prompts.map((p) => p.name)).toEqual([
      'ticket-categorizer',
      'math-tutor',
      'weather-chat',
      'image-describer',
    ]);
  });

  it('developer → system, {{variables}} → inputType variables', () => {
    expect(tickets.versions[0].content).toMatchObject({
      messages: [
        { role: 'system', content: expect.stringContaining('categorizing IT support tickets') },
        { role: 'user', content: '{{ticket_text}}' },
      ],
      inputType: 'variables',
      modelRouteId: 'openai/gpt-4.1',
    });
    expect(tickets.notes).toEqual([]);
  });

  it('response_format json_schema → outputSchema, max_completion_tokens → maxOutputTokens', () => {
    const content = tutor.versions[0].content as Record<string, unknown>;
    const raw = fixture('openai-chat.json') as { response_format: { json_schema: { schema: unknown } } }[];
    expect(content.outputSchema).toBe(JSON.stringify(raw[1].response_format.json_schema.schema));
    expect(content.maxOutputTokens).toBe(1000);
    expect(tutor.notes).toEqual([
      'Model “gpt-4o-2024-08-06” has no route here (openai/gpt-4o-2024-08-06): local/echo is used.',
      'The output schema’s name and strict are not carried (the schema is).',
    ]);
  });

  it('one dropped output schema field is named in the singular', () => {
    const format = { type: 'json_schema', name: 'answer', schema: { type: 'object' } };
    expect(only(body({ text: { format } })).notes).toContain(
      'The output schema’s name is not carried (the schema is).',
    );
  });

  it('leaves out tool calls and tool results, carries Chat-style function tools and max_tokens', () => {
    const content = weather.versions[0].content as Record<string, unknown>;
    expect(content.messages).toEqual([{ role: 'user', content: 'What is the weather like in Paris today?' }]);
    expect(content.tools).toEqual([
      expect.objectContaining({
        type: 'function',
        name: 'get_weather',
        description: 'Get current temperature for a given location.',
      }),
    ]);
    expect(content.maxOutputTokens).toBe(300);
    expect(weather.notes).toEqual([
      'Tool calls in assistant messages are not carried.',
      'Empty messages were left out.',
      'tool messages (tool results) have no counterpart here and were left out.',
      'The strict setting of function tools is not carried.',
      'n has no counterpart here and was not carried.',
      'seed has no counterpart here and was not carried.',
    ]);
  });

  it('keeps the text parts of a message and notes images and JSON mode', () => {
    expect((images.versions[0].content as Record<string, unknown>).messages).toEqual([
      { role: 'user', content: 'What’s in this image?'.replace('’', "'") },
    ]);
    expect(images.notes).toEqual([
      'Non-text message parts (image_url) are not carried.',
      'Model “gpt-4.1-mini” has no route here (openai/gpt-4.1-mini): local/echo is used.',
      'JSON mode (json_object) has no counterpart here: add an output schema to ask for JSON.',
    ]);
  });
});

describe('documents, names, versions and labels', () => {
  it('reads one top-level body as the whole document, whose pointer is the empty string', () => {
    const prompt = only(body());
    expect(prompt.path).toBe('');
    expect(prompt.versions[0].path).toBe('');
    expect(prompt.labels).toEqual([{ label: 'production', version: 1, path: '' }]);
    expect(problemPaths(map({ model: 'gpt-4.1', input: 'Hi' }))).toEqual(['/name']);
    expect(
      problemPaths(
        map(
          body({
            input: undefined,
            messages: [
              { role: 'user', content: 'a' },
              { role: 'x', content: 'b' },
            ],
          }),
        ),
      ),
    ).toEqual(['/messages/1/role']);
  });

  it('numbers bodies without a version by their order within the name', () => {
    const mapped = map([
      body({ input: 'one' }),
      body({ name: 'q' }),
      body({ input: 'two', version: null }),
      body({ version: 7 }),
    ]);
    expectImportable(mapped);
    expect(mapped.prompts.map((p) => [p.name, p.versions.map((v) => [v.version, v.path])])).toEqual([
      [
        'p',
        [
          [1, '/0'],
          [2, '/2'],
          [7, '/3'],
        ],
      ],
      ['q', [[1, '/1']]],
    ]);
    expect(mapped.prompts[0].labels).toEqual([{ label: 'production', version: 7, path: '/3' }]);
  });

  it('trims names; names are case-sensitive', () => {
    const mapped = map([body({ name: ' p ' }), body({ name: 'p' }), body({ name: 'P' })]);
    expect(mapped.prompts.map((p) => [p.name, p.versions.length])).toEqual([
      ['p', 2],
      ['P', 1],
    ]);
  });

  it('refuses a version number given twice, at the version or at the body', () => {
    expect(map([body({ version: 2 }), body({ version: 2 })]).problems).toEqual([
      { path: '/1/version', message: 'Version 2 of “p” is given twice (also at /0).' },
    ]);
    // the second body takes 2 by its order, which the first one already has
    expect(map([body({ version: 2 }), body()]).problems).toEqual([
      { path: '/1', message: 'Version 2 of “p” is given twice (also at /0).' },
    ]);
  });

  it('refuses bad names and versions at their fields', () => {
    const mapped = map([
      body({ name: undefined }),
      body({ name: '  ' }),
      body({ name: 42 }),
      body({ name: 'x'.repeat(201) }),
      body({ version: 0 }),
      body({ version: 1.5 }),
      body({ version: '3' }),
      body({ version: 2 ** 31 }),
      'not a body',
    ]);
    expect(mapped.problems).toEqual([
      { path: '/0/name', message: 'Give the prompt a name (a string).' },
      { path: '/1/name', message: 'Give the prompt a name (a string).' },
      { path: '/2/name', message: 'Give the prompt a name (a string).' },
      { path: '/3/name', message: 'Use at most 200 characters for a prompt name.' },
      { path: '/4/version', message: 'Give the version as a whole number from 1 to 2147483647.' },
      { path: '/5/version', message: 'Give the version as a whole number from 1 to 2147483647.' },
      { path: '/6/version', message: 'Give the version as a whole number from 1 to 2147483647.' },
      { path: '/7/version', message: 'Give the version as a whole number from 1 to 2147483647.' },
      { path: '/8', message: 'Give each request body as an object.' },
    ]);
  });

  it('refuses a document that is neither a body nor an array', () => {
    for (const document of ['text', 42, null, true])
      expect(map(document).problems).toEqual([
        { path: '', message: 'Give one OpenAI request body (an object) or an array of them.' },
      ]);
    expect(map([])).toEqual({ prompts: [], notes: [], problems: [] });
  });

  it('puts production on productionVersion, and refuses one that names no version of a prompt', () => {
    const document = [body({ version: 1 }), body({ version: 3 }), body({ name: 'q', version: 3 })];
    const mapped = map(document, { productionVersion: 3 });
    expectImportable(mapped);
    expect(mapped.prompts.map((p) => p.labels)).toEqual([
      [{ label: 'production', version: 3, path: '/1' }],
      [{ label: 'production', version: 3, path: '/2' }],
    ]);
    expect(map(document, { productionVersion: 1 }).problems).toEqual([
      { path: '/2', message: 'productionVersion 1 names no version of “q” (it has 3).' },
    ]);
  });

  it('names the versions a note comes from, ten at most', () => {
    const mapped = map(Array.from({ length: 12 }, () => body({ top_p: 0.5 })));
    expect(mapped.prompts[0].notes).toEqual([
      'top_p has no counterpart here and was not carried (versions 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 2 more).',
    ]);
  });
});

describe('messages', () => {
  it('takes string content and text parts (text, input_text, output_text) joined by new lines', () => {
    const content = contentOf(
      body({
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'a' },
              { type: 'input_text', text: 'b' },
            ],
          },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'c', annotations: [] }] },
        ],
      }),
    );
    expect(content.messages).toEqual([
      { role: 'user', content: 'a\nb' },
      { role: 'assistant', content: 'c' },
    ]);
    expect(
      contentOf(body({ input: undefined, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] }))
        .messages,
    ).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('keeps {{variable}} placeholders as written; inputType follows them', () => {
    expect(contentOf(body({ input: 'Weather in {{ city }}?' }))).toMatchObject({
      messages: [{ role: 'user', content: 'Weather in {{ city }}?' }],
      inputType: 'variables',
    });
    expect(contentOf(body({ input: 'No {{1x}} variable' }))).toMatchObject({ inputType: 'user_message' });
  });

  it('notes other input items, participant names and function roles', () => {
    const prompt = only(
      body({
        input: [
          { role: 'user', content: 'Hi' },
          { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c1', output: '{}' },
          { type: 'item_reference', id: 'msg_1' },
          { role: 'user', name: 'alice', content: 'Again' },
        ],
      }),
    );
    expect(prompt.notes).toEqual([
      'Input items of type function_call have no counterpart here and were left out.',
      'Input items of type function_call_output have no counterpart here and were left out.',
      'Input items of type item_reference have no counterpart here and were left out.',
      'Participant names on messages are not carried.',
    ]);
    expect(
      only(
        body({
          input: undefined,
          messages: [
            { role: 'user', content: 'a' },
            { role: 'function', name: 'f', content: '1' },
          ],
        }),
      ).notes,
    ).toEqual(['function messages (tool results) have no counterpart here and were left out.']);
  });

  it('refuses unknown roles and unreadable content at their fields', () => {
    const mapped = map([
      body({
        input: undefined,
        messages: [{ role: 'user', content: 'a' }, { role: 'robot', content: 'b' }, { content: 'c' }],
      }),
      body({
        name: 'q',
        input: [{ role: 'user', content: 42 }, 'text', { role: 'user', content: [{ type: 'input_text' }, 'x'] }],
      }),
    ]);
    expect(mapped.problems).toEqual([
      {
        path: '/0/messages/1/role',
        message: '“robot” is not an OpenAI message role (system, developer, user, assistant, tool).',
      },
      { path: '/0/messages/2/role', message: 'Give the message’s role.' },
      { path: '/1/input/0/content', message: 'Give the content as text or a list of content parts.' },
      { path: '/1/input/1', message: 'Give each input item as a message (role and content) or an item with a type.' },
      { path: '/1/input/2/content/0/text', message: 'Give the part’s text as a string.' },
      { path: '/1/input/2/content/1', message: 'Give each content part as an object with a type.' },
    ]);
  });

  it('refuses a body from which no message can be carried, at its messages or input', () => {
    expect(
      map(body({ input: undefined, messages: [{ role: 'tool', tool_call_id: 'c', content: '1' }] })).problems,
    ).toEqual([
      {
        path: '/messages',
        message: 'No message here can be carried: we keep text messages of system, developer, user and assistant.',
      },
    ]);
    expect(
      problemPaths(
        map([body({ input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://x/y.png' }] }] })]),
      ),
    ).toEqual(['/0/input']);
    expect(problemPaths(map([body({ input: undefined, instructions: '' })]))).toEqual(['/0/instructions']);
    expect(problemPaths(map([body({ input: '' })]))).toEqual(['/0/input']);
  });

  it('refuses a body with both shapes or neither, and wrongly typed containers', () => {
    expect(map([body({ messages: [] })]).problems).toEqual([
      {
        path: '/0',
        message: 'Give either messages (Chat Completions) or input and instructions (Responses), not both.',
      },
    ]);
    expect(map([body({ input: undefined })]).problems).toEqual([
      { path: '/0', message: 'Give input and instructions (Responses) or messages (Chat Completions).' },
    ]);
    expect(problemPaths(map([body({ input: undefined, messages: 'hi' })]))).toEqual(['/0/messages']);
    expect(problemPaths(map([body({ input: 5 })]))).toEqual(['/0/input']);
    expect(problemPaths(map([body({ instructions: 5 })]))).toEqual(['/0/instructions']);
    expect(problemPaths(map([body({ input: undefined, messages: [null] })]))).toEqual(['/0/messages/0']);
  });

  it('refuses messages our content cannot hold, at the source field', () => {
    expect(
      map([
        body({
          input: [
            { role: 'user', content: 'a' },
            { role: 'user', content: 'x'.repeat(100_001) },
          ],
        }),
      ]).problems,
    ).toEqual([{ path: '/0/input/1/content', message: 'Use at most 100000 characters.' }]);
    expect(map([body({ instructions: 'x'.repeat(100_001) })]).problems).toEqual([
      { path: '/0/instructions', message: 'Use at most 100000 characters.' },
    ]);
    const many = Array.from({ length: 51 }, () => ({ role: 'user', content: 'a' }));
    expect(map([body({ input: undefined, messages: many })]).problems).toEqual([
      { path: '/0/messages', message: 'Use at most 50 messages.' },
    ]);
  });
});

describe('model, temperature, tokens', () => {
  it('maps the model to openai/<model> when that route exists, else to local/echo with a note', () => {
    expect(contentOf(body({ model: 'gpt-4o' })).modelRouteId).toBe('openai/gpt-4o');
    expect(only(body({ model: 'gpt-9' })).notes).toEqual([
      'Model “gpt-9” has no route here (openai/gpt-9): local/echo is used.',
    ]);
    expect(only(body({ model: undefined })).notes).toEqual(['No model is given: local/echo is used.']);
    expect(map([body({ model: 4 })]).problems).toEqual([{ path: '/0/model', message: 'Give the model as a string.' }]);
  });

  it('carries temperature 0 to 2 and refuses others at the field', () => {
    expect(contentOf(body({ temperature: 0 })).temperature).toBe(0);
    expect(contentOf(body({ temperature: 2 })).temperature).toBe(2);
    expect(contentOf(body({ temperature: null }))).not.toHaveProperty('temperature');
    expect(map([body({ temperature: 2.5 })]).problems).toEqual([
      { path: '/0/temperature', message: 'Temperature 2.5 is outside our range of 0 to 2.' },
    ]);
    expect(map([body({ temperature: -1 }), body({ name: 'q', temperature: 'warm' })]).problems).toEqual([
      { path: '/0/temperature', message: 'Temperature -1 is outside our range of 0 to 2.' },
      { path: '/1/temperature', message: 'Give the temperature as a number.' },
    ]);
  });

  it('maps max_output_tokens, max_completion_tokens and max_tokens to maxOutputTokens', () => {
    expect(contentOf(body({ max_output_tokens: 1_000_000 })).maxOutputTokens).toBe(1_000_000);
    const chat = { input: undefined, messages: [{ role: 'user', content: 'a' }] };
    expect(contentOf(body({ ...chat, max_tokens: 20 })).maxOutputTokens).toBe(20);
    const both = only(body({ ...chat, max_tokens: 20, max_completion_tokens: 30 }));
    expect((both.versions[0].content as Record<string, unknown>).maxOutputTokens).toBe(30);
    expect(both.notes).toEqual(['max_tokens is not carried: max_completion_tokens is used.']);
    // a Chat field in a Responses body is not one of its fields
    expect(only(body({ max_tokens: 20 })).notes).toEqual(['max_tokens has no counterpart here and was not carried.']);
    expect(
      map([
        body({ max_output_tokens: 0 }),
        body({ name: 'q', max_output_tokens: 2.5 }),
        body({ name: 'r', max_output_tokens: 1_000_001 }),
      ]).problems,
    ).toEqual([
      { path: '/0/max_output_tokens', message: 'Use 1 to 1,000,000 output tokens.' },
      { path: '/1/max_output_tokens', message: 'Give a whole number of tokens.' },
      { path: '/2/max_output_tokens', message: 'Use 1 to 1,000,000 output tokens.' },
    ]);
    expect(problemPaths(map([body({ ...chat, max_completion_tokens: -1 })]))).toEqual(['/0/max_completion_tokens']);
  });
});

describe('tools', () => {
  const fn = (name: string, extra: Record<string, unknown> = {}) => ({
    type: 'function',
    name,
    description: 'd',
    parameters: { type: 'object' },
    ...extra,
  });

  it('accepts the Responses shape, the Chat shape and the flat shape; description and parameters default', () => {
    const content = contentOf(
      body({
        tools: [
          fn('a'),
          { type: 'function', function: { name: 'b', parameters: { type: 'object' } } },
          { name: 'c', description: null },
        ],
      }),
    );
    expect(content.tools).toEqual([
      { type: 'function', name: 'a', description: 'd', parameters: { type: 'object' } },
      { type: 'function', name: 'b', description: '', parameters: { type: 'object' } },
      { type: 'function', name: 'c', description: '' },
    ]);
    expect(draftContentInput.parse(content).tools[2].parameters).toEqual({ type: 'object', properties: {} });
  });

  it('notes strict once and built-in tools by type', () => {
    const prompt = only(
      body({
        tools: [
          fn('a', { strict: true }),
          fn('b', { strict: false }),
          { type: 'file_search', vector_store_ids: ['vs_1'] },
          { type: 'mcp', server_label: 'x' },
        ],
      }),
    );
    expect(prompt.notes).toEqual([
      'The strict setting of function tools is not carried.',
      'Built-in tools (file_search) have no counterpart here and were dropped.',
      'Built-in tools (mcp) have no counterpart here and were dropped.',
    ]);
  });

  it('refuses tools our content cannot hold, at the tool’s own field', () => {
    const mapped = map([
      body({ tools: 'get_weather' }),
      body({ name: 'b', tools: [fn('bad name')] }),
      body({ name: 'c', tools: [{ type: 'function', function: { name: 'x y' } }] }),
      body({ name: 'd', tools: [fn('same'), fn('same')] }),
      body({ name: 'e', tools: [fn('a', { parameters: { type: 12 } })] }),
      body({ name: 'f', tools: [fn('a', { parameters: 'none' }), fn('b', { description: 3 }), { type: 'function' }] }),
      body({ name: 'g', tools: [3, { type: 4 }, { type: 'function', function: 'f' }] }),
      body({ name: 'h', tools: Array.from({ length: 65 }, (_, i) => fn(`t${i}`)) }),
    ]);
    expect(mapped.problems).toEqual([
      { path: '/0/tools', message: 'Give the tools as an array.' },
      { path: '/1/tools/0/name', message: 'Use 1 to 64 letters, digits, underscores or hyphens.' },
      { path: '/2/tools/0/function/name', message: 'Use 1 to 64 letters, digits, underscores or hyphens.' },
      { path: '/3/tools/1/name', message: 'Tool names must be unique.' },
      { path: '/4/tools/0/parameters', message: expect.stringContaining('Not a valid JSON Schema') },
      { path: '/5/tools/0/parameters', message: 'Give the parameters as a JSON Schema object.' },
      { path: '/5/tools/1/description', message: 'Give the description as a string.' },
      { path: '/5/tools/2/name', message: 'Give the function’s name.' },
      { path: '/6/tools/0', message: 'Give each tool as an object.' },
      { path: '/6/tools/1/type', message: 'Give the tool’s type.' },
      { path: '/6/tools/2/function', message: 'Give the function as an object.' },
      { path: '/7/tools', message: 'Use at most 64 tools.' },
    ]);
  });
});

describe('output formats', () => {
  it('carries json_schema, notes json_object and other formats, keeps text silently', () => {
    expect(
      contentOf(body({ text: { format: { type: 'json_schema', name: 'x', schema: calendarSchema } } })).outputSchema,
    ).toBe(JSON.stringify(calendarSchema));
    expect(only(body({ text: { format: { type: 'text' } } })).notes).toEqual([]);
    expect(only(body({ text: { format: { type: 'json_object' } } })).notes).toEqual([
      'JSON mode (json_object) has no counterpart here: add an output schema to ask for JSON.',
    ]);
    expect(only(body({ text: { format: { type: 'grammar', syntax: 'lark' } } })).notes).toEqual([
      'The output format “grammar” has no counterpart here and was not carried.',
    ]);
  });

  it('refuses formats that give no usable schema, at the schema', () => {
    const chat = { input: undefined, messages: [{ role: 'user', content: 'a' }] };
    const mapped = map([
      body({ text: 'json' }),
      body({ name: 'b', text: { format: 'json' } }),
      body({ name: 'c', text: { format: { type: 'json_schema', name: 'x' } } }),
      body({ name: 'd', text: { format: { type: 'json_schema', name: 'x', schema: { type: 'nope' } } } }),
      body({ name: 'e', ...chat, response_format: { type: 'json_schema', schema: calendarSchema } }),
      body({ name: 'f', ...chat, response_format: { type: 'json_schema', json_schema: { name: 'x', schema: [1] } } }),
      body({ name: 'g', text: { format: { schema: {} } } }),
    ]);
    expect(mapped.problems).toEqual([
      { path: '/0/text', message: 'Give text as an object.' },
      { path: '/1/text/format', message: 'Give the format as an object.' },
      { path: '/2/text/format/schema', message: 'Give the JSON Schema as an object.' },
      { path: '/3/text/format/schema', message: expect.stringContaining('Not a valid JSON Schema') },
      { path: '/4/response_format/json_schema', message: 'Give json_schema as an object with the schema.' },
      { path: '/5/response_format/json_schema/schema', message: 'Give the JSON Schema as an object.' },
      { path: '/6/text/format/type', message: 'Give the format’s type.' },
    ]);
  });
});

describe('fields we do not carry', () => {
  it('notes every field by name, never our own name and version, never empty ones', () => {
    const prompt = only(
      body({
        version: 1,
        stream: true,
        store: true,
        metadata: { team: 'a' },
        seed: 1,
        empty: {},
        none: null,
        blank: '',
        list: [],
      }),
    );
    expect(prompt.notes).toEqual([
      'stream has no counterpart here and was not carried.',
      'store has no counterpart here and was not carried.',
      'metadata has no counterpart here and was not carried.',
      'seed has no counterpart here and was not carried.',
    ]);
  });

  it('says why a stored prompt reference cannot be carried', () => {
    expect(only(body({ prompt: { id: 'pmpt_123', variables: { city: 'San Francisco' } } })).notes).toEqual([
      'prompt refers to a prompt stored at OpenAI, which cannot be read from here: it was not carried.',
    ]);
  });
});

describe('never throws', () => {
  it('refuses nesting deeper than 64 levels before reading', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 5000; i++) deep = [deep];
    expect(map(deep).problems).toEqual([{ path: '', message: 'The document nests deeper than 64 levels.' }]);
    expect(map([body({ tools: [fn(deep)] })]).problems).toEqual([
      { path: '', message: 'The document nests deeper than 64 levels.' },
    ]);
    function fn(parameters: unknown) {
      return { type: 'function', name: 'a', parameters };
    }
  });

  it('answers every JSON document with a mapping, the same one twice', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (document) => {
        const first = map(document);
        expect(map(document)).toEqual(first);
      }),
      { numRuns: 300 },
    );
  });

  const role = fc.constantFrom('system', 'developer', 'user', 'assistant', 'tool', 'function', 'robot', 3);
  const text = fc.oneof(fc.string(), fc.constantFrom('{{city}}', '', 'a\u0000b', '\ud800'));
  const part = fc.oneof(
    fc.record({ type: fc.constantFrom('text', 'input_text', 'output_text'), text }),
    fc.record({ type: fc.constantFrom('image_url', 'input_image', 'refusal') }),
    fc.jsonValue({ maxDepth: 2 }),
  );
  const message = fc.record(
    { role, content: fc.oneof(text, fc.array(part, { maxLength: 3 }), fc.constant(null)), name: fc.string() },
    { requiredKeys: ['role'] },
  );
  const tool = fc.oneof(
    fc.record({
      type: fc.constant('function'),
      name: fc.string(),
      parameters: fc.jsonValue({ maxDepth: 3 }),
      strict: fc.boolean(),
    }),
    fc.record({
      type: fc.constant('function'),
      function: fc.record({ name: fc.stringMatching(/^[a-z]{1,5}$/), description: fc.string() }),
    }),
    fc.record({ type: fc.constantFrom('web_search', 'file_search') }),
  );
  const shapedBody = fc.record(
    {
      name: fc.constantFrom('a', 'b', ' a', '', 7),
      version: fc.oneof(fc.integer({ min: -1, max: 4 }), fc.constant('1')),
      model: fc.constantFrom('gpt-4.1', 'gpt-4o', 'o3', 5),
      instructions: text,
      input: fc.oneof(text, fc.array(fc.oneof(message, fc.record({ type: fc.string() })), { maxLength: 4 })),
      messages: fc.array(message, { maxLength: 4 }),
      temperature: fc.oneof(fc.double(), fc.constant(null)),
      max_output_tokens: fc.oneof(fc.integer(), fc.double()),
      max_tokens: fc.integer(),
      tools: fc.array(tool, { maxLength: 3 }),
      text: fc.record({
        format: fc.record({
          type: fc.constantFrom('text', 'json_schema', 'json_object', 'x'),
          schema: fc.jsonValue({ maxDepth: 3 }),
        }),
      }),
      response_format: fc.record({
        type: fc.constantFrom('json_schema', 'text'),
        json_schema: fc.record({ name: fc.string(), schema: fc.jsonValue({ maxDepth: 3 }) }),
      }),
      top_p: fc.double(),
    },
    { requiredKeys: ['name'] },
  );

  it('maps request-shaped junk deterministically; without problems, every content passes our schema', () => {
    fc.assert(
      fc.property(
        fc.array(shapedBody, { maxLength: 4 }),
        fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
        (document, productionVersion) => {
          const mapped = map(document, { productionVersion });
          expect(map(document, { productionVersion })).toEqual(mapped);
          if (mapped.problems.length === 0) expectImportable(mapped);
          for (const problem of mapped.problems) expect(problem.path).toMatch(/^(\/[^/]+)*$/);
        },
      ),
      { numRuns: 400 },
    );
  });
});
