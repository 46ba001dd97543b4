import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '@/server/errors';
import { complete, stream } from '@/server/models/provider';
import { chatRequest } from '@/server/models/render';
import { configuredRoutes, findRoute, localRoute, type RouteConfig } from '@/server/models/routes';
import { toolCallsOutput } from '@/server/models/tool-calls';
import type { ChatRequest, StreamEvent } from '@/server/models/types';
import { draftContentInput, type Tool } from '@/server/prompts/schemas';
import { startFakeProvider, type FakeProvider } from '../helpers/openai-server';

// Tools and the output token limit on the wire to an OpenAI-compatible route, and tool calls in
// the answer as the output (docs/decisions.md, M9 "Tools and max output tokens").

let fake: FakeProvider;
const weather: Tool = {
  type: 'function',
  name: 'get_weather',
  description: 'Current weather for a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const noDescription: Tool = { type: 'function', name: 'ping', description: '', parameters: { type: 'object' } };
const request: ChatRequest = {
  messages: [{ role: 'user', content: 'Weather in Paris?' }],
  temperature: 0,
  tools: [weather, noDescription],
  maxTokens: 256,
};

beforeAll(async () => {
  fake = await startFakeProvider();
  process.env.MODEL_RETRY_BASE_MS = '1';
  process.env.MODEL_ROUTES = JSON.stringify([
    { id: 'fake/gpt-4o', provider: 'fake', name: 'Fake 4o', baseUrl: fake.baseUrl, modelId: 'gpt-4o' },
    { id: 'fake/openai', provider: 'openai', name: 'Fake OpenAI', baseUrl: fake.baseUrl, modelId: 'o4-mini' },
    {
      id: 'fake/new-field',
      provider: 'vllm',
      name: 'Fake vLLM',
      baseUrl: fake.baseUrl,
      modelId: 'qwen',
      maxTokensField: 'max_completion_tokens',
    },
  ]);
});
afterAll(async () => {
  await fake.close();
  delete process.env.MODEL_ROUTES;
  delete process.env.MODEL_RETRY_BASE_MS;
});
beforeEach(() => fake.script([{ kind: 'ok', text: 'hello' }]));

const route = (id: string): RouteConfig => findRoute(id)!;

async function collect(events: AsyncGenerator<StreamEvent>): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

async function failure(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe('the request: tools as function definitions, the token limit in the route’s field', () => {
  it('sends tools as Chat Completions function definitions and max_tokens to a non-OpenAI route', async () => {
    await complete(route('fake/gpt-4o'), request);
    expect(fake.requests[0].body).toEqual({
      model: 'gpt-4o',
      messages: request.messages,
      temperature: 0,
      stream: false,
      max_tokens: 256,
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', description: 'Current weather for a city.', parameters: weather.parameters },
        },
        // An empty description is left out.
        { type: 'function', function: { name: 'ping', parameters: { type: 'object' } } },
      ],
    });
  });

  it('an OpenAI route gets max_completion_tokens; a MODEL_ROUTES entry may choose the field', async () => {
    fake.script([
      { kind: 'ok', text: 'a' },
      { kind: 'stream', chunks: ['b'] },
    ]);
    await complete(route('fake/openai'), request);
    await collect(stream(route('fake/new-field'), request));
    expect(fake.requests[0].body).toMatchObject({ max_completion_tokens: 256 });
    expect(fake.requests[0].body).not.toHaveProperty('max_tokens');
    expect(fake.requests[1].body).toMatchObject({ stream: true, max_completion_tokens: 256 });
    expect(fake.requests[1].body.tools).toHaveLength(2);
    const builtIn = configuredRoutes({ OPENAI_API_KEY: 'k', OPENAI_MODELS: 'gpt-4.1' });
    expect(builtIn.find((r) => r.id === 'openai/gpt-4.1')?.maxTokensField).toBe('max_completion_tokens');
    expect(() =>
      configuredRoutes({
        MODEL_ROUTES: JSON.stringify([
          { id: 'x/y', provider: 'x', name: 'X', baseUrl: 'http://127.0.0.1:1/v1', modelId: 'y', maxTokensField: 'n' },
        ]),
      }),
    ).toThrow(/MODEL_ROUTES/);
  });

  it('no tools and no limit: neither field is sent (an empty tools list is refused by OpenAI)', async () => {
    const content = draftContentInput.parse({ messages: [], inputType: 'user_message' });
    const plain = chatRequest(content, request.messages);
    expect(plain).toEqual({ messages: request.messages, temperature: 1 });
    await complete(route('fake/gpt-4o'), plain);
    expect(Object.keys(fake.requests[0].body).sort()).toEqual(['messages', 'model', 'stream', 'temperature']);
  });

  it('chatRequest takes the content’s tools and maxOutputTokens', () => {
    const content = draftContentInput.parse({
      messages: [],
      inputType: 'user_message',
      temperature: 0.4,
      tools: [weather],
      maxOutputTokens: 50,
    });
    expect(chatRequest(content, request.messages)).toEqual({
      messages: request.messages,
      temperature: 0.4,
      tools: [weather],
      maxTokens: 50,
    });
  });
});

describe('the answer: tool calls are the output, as JSON', () => {
  it('a reply with tool calls: [{ name, arguments }] with the arguments parsed; text beside them is left out', async () => {
    fake.script([
      {
        kind: 'ok',
        text: 'Let me check.',
        toolCalls: [
          { name: 'get_weather', arguments: '{"city":"Paris"}' },
          { name: 'ping', arguments: 'not json' },
        ],
      },
    ]);
    const result = await complete(route('fake/gpt-4o'), request);
    expect(result.finishReason).toBe('tool_calls');
    expect(result.output).toBe(
      '[{"name":"get_weather","arguments":{"city":"Paris"}},{"name":"ping","arguments":"not json"}]',
    );
    expect(JSON.parse(result.output)).toEqual([
      { name: 'get_weather', arguments: { city: 'Paris' } },
      { name: 'ping', arguments: 'not json' },
    ]);
  });

  it('a reply with content null and one tool call (OpenAI’s own shape)', async () => {
    fake.script([{ kind: 'ok', text: null, toolCalls: [{ name: 'get_weather', arguments: '{"city":"Oslo"}' }] }]);
    const result = await complete(route('fake/gpt-4o'), request);
    expect(JSON.parse(result.output)).toEqual([{ name: 'get_weather', arguments: { city: 'Oslo' } }]);
  });

  it('a streamed answer: arguments arrive in fragments and are joined; text deltas still stream', async () => {
    fake.script([
      {
        kind: 'stream',
        chunks: ['Checking'],
        toolCalls: [
          { name: 'get_weather', arguments: '{"city": "Lisbon", "days": 3}' },
          { name: 'ping', arguments: '{}' },
        ],
        argumentPiece: 3,
        usage: { prompt_tokens: 20, completion_tokens: 9 },
      },
    ]);
    const events = await collect(stream(route('fake/gpt-4o'), request));
    expect(events.filter((e) => e.type === 'delta')).toEqual([{ type: 'delta', text: 'Checking' }]);
    const done = events.at(-1) as Extract<StreamEvent, { type: 'done' }>;
    expect(done).toMatchObject({ type: 'done', finishReason: 'tool_calls', inputTokens: 20, outputTokens: 9 });
    expect(JSON.parse(done.output)).toEqual([
      { name: 'get_weather', arguments: { city: 'Lisbon', days: 3 } },
      { name: 'ping', arguments: {} },
    ]);
  });

  it.each([
    ['tool_calls not an array', { tool_calls: { function: { name: 'x' } } }],
    ['a call without a function name', { content: null, tool_calls: [{ id: 'c', type: 'function', function: {} }] }],
  ])('a malformed tool call (%s) is 503 unavailable, not retried', async (_label, message) => {
    fake.script([{ kind: 'raw', body: JSON.stringify({ choices: [{ message, finish_reason: 'tool_calls' }] }) }]);
    const error = await failure(complete(route('fake/gpt-4o'), request));
    expect(error.code).toBe('unavailable');
    expect(error.message).toMatch(/malformed reply/);
    expect(fake.requests).toHaveLength(1);
  });

  it('a streamed tool call that never names its function fails the stream', async () => {
    const piece = { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{}' } }] } }] };
    const end = { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] };
    fake.script([
      {
        kind: 'raw',
        contentType: 'text/event-stream',
        body: `data: ${JSON.stringify(piece)}\n\ndata: ${JSON.stringify(end)}\n\ndata: [DONE]\n\n`,
      },
    ]);
    const error = await failure(collect(stream(route('fake/gpt-4o'), request)));
    expect(error.message).toMatch(/no function name/);
  });

  it('toolCallsOutput: object arguments are kept, deep ones are not handed to JSON.stringify', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 10_000; i++) deep = [deep];
    expect(JSON.parse(toolCallsOutput([{ name: 'a', arguments: { x: 1 } }]))).toEqual([
      { name: 'a', arguments: { x: 1 } },
    ]);
    expect(JSON.parse(toolCallsOutput([{ name: 'a', arguments: deep }]))[0].arguments).toMatch(/nested more than 64/);
    const deepText = '['.repeat(100) + ']'.repeat(100);
    expect(JSON.parse(toolCallsOutput([{ name: 'a', arguments: deepText }]))[0].arguments).toBe(deepText);
    // Unstorable characters in arguments come back escaped in the JSON text, never raw.
    const output = toolCallsOutput([{ name: 'a', arguments: '{"x":"\\u0000\\ud800"}' }]);
    expect(output).not.toContain('\u0000');
    expect(output.isWellFormed()).toBe(true);
  });
});

describe('the local echo route', () => {
  it('ignores tools and cuts its echo to maxOutputTokens words, finish reason length', async () => {
    const words = { messages: [{ role: 'user' as const, content: 'one two  three four five' }], temperature: 1 };
    expect(await complete(localRoute, { ...words, tools: [weather], maxTokens: 3 })).toMatchObject({
      output: 'one two  three',
      outputTokens: 3,
      finishReason: 'length',
    });
    expect(await complete(localRoute, { ...words, maxTokens: 5 })).toMatchObject({
      output: 'one two  three four five',
      finishReason: 'stop',
    });
    const events = await collect(stream(localRoute, { ...words, maxTokens: 2 }));
    expect(events.at(-1)).toMatchObject({ output: 'one two', finishReason: 'length' });
  });
});
