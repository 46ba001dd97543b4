import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mapOtlpSpan, type MappedSpan } from '../../server/otlp/mapping';
import { anyValueToJs, type AnyValue, type KeyValue, type OtlpSpanInput } from '../../server/otlp/types';

const now = 1_764_000_000_000;
const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
const spanId = '00f067aa0ba902b7';
const parentSpanId = '53995c3f42cd8ad8';
const startNs = BigInt(now - 2000) * 1_000_000n + 123_456n;
const endNs = BigInt(now - 1000) * 1_000_000n + 999_999n;

// Attribute values as the SDKs set them: strings, integers, doubles, booleans and string arrays.
type Plain = string | number | boolean | string[];
function toAnyValue(value: Plain): AnyValue {
  if (Array.isArray(value)) return { arrayValue: { values: value.map((v) => ({ stringValue: v })) } };
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
}
const kv = (attributes: Record<string, Plain>): KeyValue[] =>
  Object.entries(attributes).map(([key, value]) => ({ key, value: toAnyValue(value) }));

type SpanOptions = {
  name?: string;
  attributes?: Record<string, Plain>;
  events?: { name: string; attributes?: Record<string, Plain> }[];
  resource?: Record<string, Plain>;
  parent?: string;
  kind?: number;
  status?: { code?: number; message?: string };
};
function input(options: SpanOptions = {}): OtlpSpanInput {
  return {
    resourceAttributes: kv(options.resource ?? { 'service.name': 'checkout' }),
    scopeName: 'test-scope',
    span: {
      traceId,
      spanId,
      parentSpanId: options.parent ?? parentSpanId,
      name: options.name ?? 'span',
      kind: options.kind ?? 3,
      startTimeUnixNano: startNs,
      endTimeUnixNano: endNs,
      attributes: kv(options.attributes ?? {}),
      events: (options.events ?? []).map((e) => ({
        name: e.name,
        timeUnixNano: endNs,
        attributes: kv(e.attributes ?? {}),
      })),
      status: options.status,
    },
  };
}
function mapped(options: SpanOptions = {}): MappedSpan & { content: unknown; metadata: Record<string, unknown> } {
  const result = mapOtlpSpan(input(options), now);
  if (!result.ok) throw new Error(`rejected: ${result.reason}`);
  const { span } = result;
  return {
    ...span,
    content: span.contentJson === undefined ? undefined : JSON.parse(span.contentJson),
    metadata: span.metadataJson === undefined ? {} : JSON.parse(span.metadataJson),
  };
}

type Row = {
  title: string;
  options: SpanOptions;
  expected: Partial<MappedSpan>;
  content?: unknown;
  metadataKeys?: string[];
};
function runTable(rows: Row[]) {
  it.each(rows)('$title', ({ options, expected, content, metadataKeys }) => {
    const span = mapped(options);
    expect(span).toMatchObject(expected);
    if (content !== undefined) expect(span.content).toEqual(content);
    if (metadataKeys) expect(Object.keys(span.metadata).sort()).toEqual([...metadataKeys].sort());
  });
}

const simpleInput = [
  { role: 'system', parts: [{ type: 'text', content: 'You are a helpful bot' }] },
  { role: 'user', parts: [{ type: 'text', content: 'Tell me a joke about OpenTelemetry' }] },
];
const simpleOutput = [
  {
    role: 'assistant',
    parts: [
      {
        type: 'text',
        content:
          ' Why did the developer bring OpenTelemetry to the party? Because it always knows how to trace the fun!',
      },
    ],
    finish_reason: 'stop',
  },
];

describe('GenAI semantic conventions, current names', () => {
  runTable([
    // open-telemetry/semantic-conventions docs/gen-ai/non-normative/examples-llm-calls.md,
    // "Simple chat completion", "GenAI client span when content capturing is enabled on span attributes"
    {
      title: 'chat completion with content on span attributes',
      options: {
        name: 'chat gpt-4',
        attributes: {
          'gen_ai.provider.name': 'openai',
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'gpt-4',
          'gen_ai.request.max_tokens': 200,
          'gen_ai.request.top_p': 1.0,
          'gen_ai.response.id': 'chatcmpl-9J3uIL87gldCFtiIbyaOvTeYBRA3l',
          'gen_ai.response.model': 'gpt-4-0613',
          'gen_ai.usage.output_tokens': 47,
          'gen_ai.usage.input_tokens': 52,
          'gen_ai.response.finish_reasons': ['stop'],
          'gen_ai.input.messages': JSON.stringify(simpleInput),
          'gen_ai.output.messages': JSON.stringify(simpleOutput),
        },
      },
      expected: { kind: 'model', provider: 'openai', model: 'gpt-4-0613', inputTokens: 52, outputTokens: 47 },
      content: { input: simpleInput, output: simpleOutput, system: null },
      metadataKeys: [
        'otel.scope.name',
        'otel.span.kind',
        'gen_ai.request.max_tokens',
        'gen_ai.request.top_p',
        'gen_ai.response.id',
        'gen_ai.response.finish_reasons',
      ],
    },
    // same file, "Tool calls (functions)", "Tool call" (execute-tool span)
    {
      title: 'execute_tool span',
      options: {
        name: 'execute_tool get_weather',
        attributes: {
          'gen_ai.tool.call.id': 'call_VSPygqKTWdrhaFErNvMV18Yl',
          'gen_ai.tool.name': 'get_weather',
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.type': 'function',
        },
      },
      expected: { kind: 'tool' },
      metadataKeys: [
        'otel.scope.name',
        'otel.span.kind',
        'gen_ai.tool.call.id',
        'gen_ai.tool.name',
        'gen_ai.tool.type',
      ],
    },
    // open-telemetry/semantic-conventions docs/gen-ai/gen-ai-spans.md (gen_ai.operation.name values
    // embeddings, gen_ai.conversation.id) and docs/gen-ai/gen-ai-system-instructions.json
    {
      title: 'embeddings, conversation id and system instructions',
      options: {
        name: 'embeddings text-embedding-3-small',
        attributes: {
          'gen_ai.operation.name': 'embeddings',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'text-embedding-3-small',
          'gen_ai.conversation.id': 'conv_5j66UpCpwteGg4YSxUnt7lPY',
          'gen_ai.system_instructions': JSON.stringify([{ type: 'text', content: 'You are a helpful bot' }]),
        },
      },
      expected: { kind: 'retrieval', model: 'text-embedding-3-small', sessionId: 'conv_5j66UpCpwteGg4YSxUnt7lPY' },
      content: { input: null, output: null, system: [{ type: 'text', content: 'You are a helpful bot' }] },
    },
    // docs/gen-ai/gen-ai-agent-spans.md: invoke_agent spans
    {
      title: 'invoke_agent',
      options: { name: 'invoke_agent Math Tutor', attributes: { 'gen_ai.operation.name': 'invoke_agent' } },
      expected: { kind: 'execution' },
    },
  ]);
});

describe('GenAI semantic conventions, legacy names and message events', () => {
  runTable([
    // open-telemetry/semantic-conventions docs/gen-ai/gen-ai-events.md at v1.36.0 (the version the
    // current page links for older instrumentations): gen_ai.system.message, gen_ai.user.message and
    // gen_ai.choice events with bodies { content } and { index, finish_reason, message }; example text
    // from docs/gen-ai/non-normative/examples-llm-calls.md. Those are log events with a body: an
    // instrumentation that records them as span events carries the body fields as event attributes,
    // which is the layout read here (our assumption, see docs/decisions.md)
    {
      title: 'gen_ai.system with message events',
      options: {
        name: 'chat gpt-4',
        attributes: {
          'gen_ai.system': 'openai',
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'gpt-4',
          'gen_ai.usage.prompt_tokens': 52,
          'gen_ai.usage.completion_tokens': 47,
        },
        events: [
          {
            name: 'gen_ai.system.message',
            attributes: { 'gen_ai.system': 'openai', content: 'You are a helpful bot' },
          },
          {
            name: 'gen_ai.user.message',
            attributes: { 'gen_ai.system': 'openai', content: 'Tell me a joke about OpenTelemetry' },
          },
          {
            name: 'gen_ai.choice',
            attributes: {
              'gen_ai.system': 'openai',
              index: 0,
              finish_reason: 'stop',
              message: JSON.stringify({ content: 'Why did the developer bring OpenTelemetry to the party?' }),
            },
          },
        ],
      },
      expected: { kind: 'model', provider: 'openai', model: 'gpt-4', inputTokens: 52, outputTokens: 47 },
      content: {
        input: [{ role: 'user', content: 'Tell me a joke about OpenTelemetry' }],
        output: [
          {
            role: 'assistant',
            content: 'Why did the developer bring OpenTelemetry to the party?',
            index: 0,
            finish_reason: 'stop',
          },
        ],
        system: 'You are a helpful bot',
      },
      metadataKeys: ['otel.scope.name', 'otel.span.kind'],
    },
    // open-telemetry/semantic-conventions docs/gen-ai/llm-spans.md at 034991e4e9b00e56bddaf0b1f386bb46fb5a3df7,
    // the span attribute table with its example values (gen_ai.operation.name chat.completions is not in
    // our table: it falls through, and a child span is custom)
    {
      title: 'llm-spans.md attribute table',
      options: {
        name: 'chat.completions gpt-4',
        attributes: {
          'gen_ai.request.model': 'gpt-4',
          'gen_ai.system': 'openai',
          'gen_ai.operation.name': 'chat.completions',
          'gen_ai.request.max_tokens': 100,
          'gen_ai.request.temperature': 0,
          'gen_ai.request.top_p': 1,
          'gen_ai.response.finish_reasons': ['stop'],
          'gen_ai.response.id': 'chatcmpl-123',
          'gen_ai.response.model': 'gpt-4-0613',
          'gen_ai.usage.completion_tokens': 180,
          'gen_ai.usage.prompt_tokens': 100,
        },
      },
      expected: { kind: 'custom', provider: 'openai', model: 'gpt-4-0613', inputTokens: 100, outputTokens: 180 },
      metadataKeys: [
        'otel.scope.name',
        'otel.span.kind',
        'gen_ai.request.max_tokens',
        'gen_ai.request.temperature',
        'gen_ai.request.top_p',
        'gen_ai.response.finish_reasons',
        'gen_ai.response.id',
      ],
    },
    // same file: the gen_ai.content.prompt event (gen_ai.prompt) and gen_ai.content.completion event
    // (gen_ai.completion) with their example values; those examples are Python reprs, not JSON, so
    // they are kept as text
    {
      title: 'gen_ai.content.prompt / completion events, example values as written',
      options: {
        name: 'chat gpt-4',
        attributes: { 'gen_ai.system': 'openai' },
        events: [
          {
            name: 'gen_ai.content.prompt',
            attributes: { 'gen_ai.prompt': "[{'role': 'user', 'content': 'What is the capital of France?'}]" },
          },
          {
            name: 'gen_ai.content.completion',
            attributes: {
              'gen_ai.completion': "[{'role': 'assistant', 'content': 'The capital of France is Paris.'}]",
            },
          },
        ],
      },
      expected: { kind: 'custom', provider: 'openai' },
      content: {
        input: "[{'role': 'user', 'content': 'What is the capital of France?'}]",
        output: "[{'role': 'assistant', 'content': 'The capital of France is Paris.'}]",
        system: null,
      },
    },
    // same file and events, the values as JSON text (the note there recommends the OpenAI messages format)
    {
      title: 'gen_ai.content.prompt / gen_ai.content.completion events',
      options: {
        name: 'chat gpt-4',
        attributes: { 'gen_ai.system': 'openai', 'gen_ai.request.model': 'gpt-4' },
        events: [
          {
            name: 'gen_ai.content.prompt',
            attributes: {
              'gen_ai.prompt': JSON.stringify([{ role: 'user', content: 'What is the capital of France?' }]),
            },
          },
          {
            name: 'gen_ai.content.completion',
            attributes: {
              'gen_ai.completion': JSON.stringify([{ role: 'assistant', content: 'The capital of France is Paris.' }]),
            },
          },
        ],
      },
      expected: { kind: 'custom', provider: 'openai', model: 'gpt-4' },
      content: {
        input: [{ role: 'user', content: 'What is the capital of France?' }],
        output: [{ role: 'assistant', content: 'The capital of France is Paris.' }],
        system: null,
      },
    },
  ]);
});

describe('OpenInference', () => {
  runTable([
    // Arize-ai/openinference spec/llm_spans.md, "A synthesis call using a function call output"
    // (llm.input_messages flattened as OTel attributes: llm.input_messages.N.message.role / .content)
    {
      title: 'LLM span with flattened messages',
      options: {
        name: 'llm',
        attributes: {
          'openinference.span.kind': 'LLM',
          'llm.input_messages.0.message.role': 'user',
          'llm.input_messages.0.message.content': 'what is 23 times 87',
          'llm.input_messages.1.message.role': 'tool',
          'llm.input_messages.1.message.content': '2001',
          'llm.input_messages.1.message.name': 'multiply',
          'llm.model_name': 'gpt-3.5-turbo-0613',
          'llm.invocation_parameters': '{"model": "gpt-3.5-turbo-0613", "temperature": 0.1, "max_tokens": null}',
          'output.value': 'The product of 23 times 87 is 2001.',
          'output.mime_type': 'text/plain',
          'llm.output_messages.0.message.role': 'assistant',
          'llm.output_messages.0.message.content': 'The product of 23 times 87 is 2001.',
          'llm.token_count.prompt': 259,
          'llm.token_count.completion': 14,
          'llm.token_count.total': 273,
        },
      },
      expected: { kind: 'model', model: 'gpt-3.5-turbo-0613', inputTokens: 259, outputTokens: 14 },
      content: {
        input: [
          { role: 'user', content: 'what is 23 times 87' },
          { role: 'tool', content: '2001', name: 'multiply' },
        ],
        output: [{ role: 'assistant', content: 'The product of 23 times 87 is 2001.' }],
        system: null,
      },
      metadataKeys: [
        'otel.scope.name',
        'otel.span.kind',
        'llm.invocation_parameters',
        'output.mime_type',
        'llm.token_count.total',
      ],
    },
    // Arize-ai/openinference spec/multimodal_attributes.md (message.contents.N.message_content.type /
    // .text / .image.image.url) and the tool calling conventions (message.tool_calls.N.tool_call.id /
    // .function.name / .function.arguments), as its OpenAI instrumentation emits them
    {
      title: 'LLM span with content items and tool calls',
      options: {
        name: 'llm',
        attributes: {
          'openinference.span.kind': 'LLM',
          'llm.input_messages.0.message.role': 'user',
          'llm.input_messages.0.message.contents.0.message_content.type': 'text',
          'llm.input_messages.0.message.contents.0.message_content.text': 'What is in this image?',
          'llm.input_messages.0.message.contents.1.message_content.type': 'image',
          'llm.input_messages.0.message.contents.1.message_content.image.image.url': 'https://example.com/a.jpg',
          'llm.output_messages.0.message.role': 'assistant',
          'llm.output_messages.0.message.tool_calls.0.tool_call.id': 'call_1',
          'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'get_weather',
          'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments': '{"city": "Paris"}',
          'llm.output_messages.0.message.tool_calls.1.tool_call.function.name': 'get_time',
        },
      },
      expected: { kind: 'model' },
      content: {
        input: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is in this image?' },
              { type: 'image', url: 'https://example.com/a.jpg' },
            ],
          },
        ],
        output: [
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { type: 'function', id: 'call_1', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } },
              { type: 'function', function: { name: 'get_time' } },
            ],
          },
        ],
        system: null,
      },
      metadataKeys: ['otel.scope.name', 'otel.span.kind'],
    },
    // Arize-ai/openinference spec/semantic_conventions.md, reserved attributes (openinference.span.kind
    // CHAIN, input.value, input.mime_type, output.value "Hello, World!", session.id, user.id, llm.provider);
    // the input, session and user values are ours
    {
      title: 'CHAIN span with input.value / output.value',
      options: {
        name: 'chain',
        attributes: {
          'openinference.span.kind': 'CHAIN',
          'input.value': '{"query": "What is the capital of France?"}',
          'input.mime_type': 'application/json',
          'output.value': 'Hello, World!',
          'session.id': 'a6c5e4d2-1f3b-4c8a-9e7d-2b1a0f9c8d7e',
          'user.id': 'user-1234',
          'llm.provider': 'openai',
        },
      },
      expected: {
        kind: 'execution',
        sessionId: 'a6c5e4d2-1f3b-4c8a-9e7d-2b1a0f9c8d7e',
        endUserId: 'user-1234',
        provider: 'openai',
      },
      content: { input: { query: 'What is the capital of France?' }, output: 'Hello, World!', system: null },
    },
    // Arize-ai/openinference spec/semantic_conventions.md, span kinds RETRIEVER, TOOL, AGENT
    {
      title: 'RETRIEVER',
      options: { attributes: { 'openinference.span.kind': 'RETRIEVER' } },
      expected: { kind: 'retrieval' },
    },
    { title: 'TOOL', options: { attributes: { 'openinference.span.kind': 'TOOL' } }, expected: { kind: 'tool' } },
    {
      title: 'AGENT',
      options: { attributes: { 'openinference.span.kind': 'AGENT' } },
      expected: { kind: 'execution' },
    },
  ]);
});

describe('Vercel AI SDK', () => {
  runTable([
    // vercel/ai content/docs/03-ai-sdk-core/60-telemetry.mdx as published at
    // https://ai-sdk.dev/docs/ai-sdk-core/telemetry: "generateText function" ai.generateText.doGenerate,
    // "Basic LLM span information" and "Call LLM span information" (gen_ai.* set beside ai.*)
    {
      title: 'ai.generateText.doGenerate (current docs: gen_ai.* beside ai.*)',
      options: {
        name: 'ai.generateText.doGenerate',
        attributes: {
          'operation.name': 'ai.generateText.doGenerate my-function',
          'ai.operationId': 'ai.generateText.doGenerate',
          'ai.prompt.messages': JSON.stringify([{ role: 'user', content: [{ type: 'text', text: 'Write a haiku' }] }]),
          'ai.response.text': 'Leaves fall in silence',
          'ai.response.finishReason': 'stop',
          'ai.response.model': 'gpt-4-turbo-2024-04-09',
          'ai.response.id': 'chatcmpl-123',
          'ai.model.id': 'gpt-4-turbo',
          'ai.model.provider': 'openai.chat',
          'ai.settings.maxRetries': 2,
          'ai.telemetry.functionId': 'my-function',
          'ai.usage.promptTokens': 10,
          'ai.usage.completionTokens': 7,
          'gen_ai.system': 'openai.chat',
          'gen_ai.request.model': 'gpt-4-turbo',
          'gen_ai.response.model': 'gpt-4-turbo-2024-04-09',
          'gen_ai.response.id': 'chatcmpl-123',
          'gen_ai.response.finish_reasons': ['stop'],
          'gen_ai.usage.input_tokens': 10,
          'gen_ai.usage.output_tokens': 7,
        },
      },
      expected: {
        kind: 'model',
        provider: 'openai.chat',
        model: 'gpt-4-turbo-2024-04-09',
        inputTokens: 10,
        outputTokens: 7,
      },
      content: {
        input: [{ role: 'user', content: [{ type: 'text', text: 'Write a haiku' }] }],
        output: 'Leaves fall in silence',
        system: null,
      },
      metadataKeys: [
        'otel.scope.name',
        'otel.span.kind',
        'operation.name',
        'ai.operationId',
        'ai.response.finishReason',
        'ai.response.model',
        'ai.response.id',
        'ai.model.provider',
        'ai.settings.maxRetries',
        'ai.telemetry.functionId',
        'gen_ai.response.id',
        'gen_ai.response.finish_reasons',
      ],
    },
    // same file, "Basic LLM span information" (ai.model.id, ai.usage.promptTokens / completionTokens) on
    // a doGenerate span with only the ai.* attributes: the Vercel fallbacks of the table
    {
      title: 'ai.generateText.doGenerate with ai.* only',
      options: {
        name: 'ai.generateText.doGenerate',
        attributes: {
          'ai.model.id': 'gpt-4-turbo',
          'ai.model.provider': 'openai.chat',
          'ai.usage.promptTokens': 10,
          'ai.usage.completionTokens': 7,
          'ai.prompt.messages': JSON.stringify([{ role: 'user', content: [{ type: 'text', text: 'Write a haiku' }] }]),
        },
      },
      expected: { kind: 'model', model: 'gpt-4-turbo', inputTokens: 10, outputTokens: 7 },
      metadataKeys: ['otel.scope.name', 'otel.span.kind', 'ai.model.provider'],
    },
    // same page, "streamText function" ai.streamText.doStream
    {
      title: 'ai.streamText.doStream',
      options: { name: 'ai.streamText.doStream', attributes: { 'ai.model.id': 'gpt-4o', 'ai.usage.promptTokens': 3 } },
      expected: { kind: 'model', model: 'gpt-4o', inputTokens: 3 },
    },
    // same page, "Tool call spans"
    {
      title: 'ai.toolCall',
      options: {
        name: 'ai.toolCall',
        attributes: {
          'operation.name': 'ai.toolCall',
          'ai.operationId': 'ai.toolCall',
          'ai.toolCall.name': 'weather',
          'ai.toolCall.id': 'call_1',
          'ai.toolCall.args': '{"location":"San Francisco"}',
        },
      },
      expected: { kind: 'tool' },
    },
    // same page: ai.generateText (the outer span) is neither doGenerate nor doStream
    {
      title: 'ai.generateText (outer span, child)',
      options: { name: 'ai.generateText' },
      expected: { kind: 'custom' },
    },
    // AI SDK 5 usage names (ai.usage.inputTokens / outputTokens), the table's fallback
    {
      title: 'ai.usage.inputTokens / outputTokens',
      options: {
        name: 'ai.generateText.doGenerate',
        attributes: { 'ai.usage.inputTokens': 11, 'ai.usage.outputTokens': 5 },
      },
      expected: { inputTokens: 11, outputTokens: 5 },
    },
  ]);
});

function rejection(span: Partial<OtlpSpanInput['span']>, extra: Partial<OtlpSpanInput> = {}): string | undefined {
  const base = input();
  const result = mapOtlpSpan({ ...base, ...extra, span: { ...base.span, ...span } }, now);
  return result.ok ? undefined : result.reason;
}

describe('rejections', () => {
  it.each([
    ['trace id too short', { traceId: traceId.slice(2) }, /traceId/],
    ['trace id all zeros', { traceId: '0'.repeat(32) }, /traceId is all zeros/],
    ['trace id not hex', { traceId: 'g'.repeat(32) }, /traceId is not hexadecimal/],
    ['trace id missing', { traceId: undefined }, /traceId/],
    ['span id too long', { spanId: spanId + '00' }, /spanId/],
    ['span id all zeros', { spanId: '0'.repeat(16) }, /spanId is all zeros/],
    ['span id bytes of the wrong length', { spanId: new Uint8Array(4) }, /spanId/],
    ['parent id not hex', { parentSpanId: 'z'.repeat(16) }, /parentSpanId/],
    ['parent id wrong length', { parentSpanId: 'abc' }, /parentSpanId/],
    ['a span that is its own parent', { parentSpanId: spanId.toUpperCase() }, /names the span itself/],
    ['end before start', { endTimeUnixNano: startNs - 1n }, /end time is before start/],
    ['start time not a number', { startTimeUnixNano: 'soon' }, /startTimeUnixNano/],
    ['end time beyond the range of a date', { endTimeUnixNano: 10n ** 25n }, /out of range/],
    ['end time negative', { endTimeUnixNano: -1 }, /endTimeUnixNano/],
    [
      'start more than five minutes ahead',
      { startTimeUnixNano: BigInt(now + 300_001) * 1_000_000n, endTimeUnixNano: BigInt(now + 300_002) * 1_000_000n },
      /five minutes ahead/,
    ],
    ['U+0000 in the name', { name: 'a\u0000b' }, /U\+0000/],
    ['lone surrogate in an attribute value', { attributes: kv({ note: 'x\ud800' }) }, /surrogate/],
    ['lone surrogate in an attribute key', { attributes: kv({ ['\udc00']: 'x' }) }, /surrogate/],
    [
      'U+0000 nested in a kvlist',
      {
        attributes: [
          { key: 'a', value: { kvlistValue: { values: [{ key: 'b', value: { stringValue: '\u0000' } }] } } },
        ],
      },
      /U\+0000/,
    ],
    ['U+0000 in an event attribute', { events: [{ name: 'e', attributes: kv({ a: '\u0000' }) }] }, /U\+0000/],
    ['U+0000 in the status message', { status: { code: 2, message: '\u0000' } }, /U\+0000/],
  ] as const)('%s', (_title, span, reason) => {
    expect(rejection(span as Partial<OtlpSpanInput['span']>)).toMatch(reason);
  });

  it('rejects U+0000 in a resource attribute and in the scope name', () => {
    expect(rejection({}, { resourceAttributes: kv({ 'service.name': '\u0000' }) })).toMatch(/U\+0000/);
    expect(rejection({}, { scopeName: '\ud800' })).toMatch(/surrogate/);
  });

  it('accepts a start exactly five minutes ahead, and a zero-length span', () => {
    const at = BigInt(now + 300_000) * 1_000_000n;
    expect(rejection({ startTimeUnixNano: at, endTimeUnixNano: at })).toBeUndefined();
  });
});

describe('ids, parents and times', () => {
  it('stores hex ids lowercase; raw bytes become hex', () => {
    const result = mapOtlpSpan(
      {
        span: {
          ...input().span,
          traceId: traceId.toUpperCase(),
          spanId: Buffer.from(spanId, 'hex'),
          parentSpanId: parentSpanId.toUpperCase(),
        },
      },
      now,
    );
    expect(result).toMatchObject({ ok: true, span: { traceId, spanId, parentSpanId } });
  });

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['all zeros', '0'.repeat(16)],
    ['empty bytes', new Uint8Array(0)],
    ['zero bytes', new Uint8Array(8)],
  ])('a %s parent means a root span: kind execution, no parentSpanId', (_title, parent) => {
    const base = input();
    const result = mapOtlpSpan({ ...base, span: { ...base.span, parentSpanId: parent } }, now);
    expect(result.ok && result.span.parentSpanId).toBe(undefined);
    expect(result.ok && result.span.kind).toBe('execution');
  });

  it('a child span without a convention is custom', () => {
    expect(mapped().kind).toBe('custom');
  });

  it('floors times to ms, from bigint, decimal strings or numbers', () => {
    expect(mapped()).toMatchObject({ startedAt: now - 2000, endedAt: now - 1000 });
    const base = input();
    const result = mapOtlpSpan(
      { ...base, span: { ...base.span, startTimeUnixNano: '1000999999', endTimeUnixNano: 2_000_999_999 } },
      now,
    );
    expect(result).toMatchObject({ ok: true, span: { startedAt: 1000, endedAt: 2000 } });
  });

  it('maps status ERROR to error, anything else to success', () => {
    expect(mapped({ status: { code: 2 } }).status).toBe('error');
    expect(mapped({ status: { code: 1 } }).status).toBe('success');
    expect(mapped().status).toBe('success');
  });

  it('cuts the name to 200 characters without splitting a surrogate pair; defaults service and name', () => {
    const span = mapped({ name: '😀'.repeat(250), resource: {} });
    expect(Array.from(span.name)).toHaveLength(200);
    expect(span.name).toBe('😀'.repeat(200));
    expect(span.service).toBe('unknown_service');
    expect(mapped({ name: '' }).name).toBe('unknown_span');
  });
});

describe('first match wins, and what was read stays out of metadata', () => {
  it('takes the higher rule and drops the lower ones from metadata', () => {
    const span = mapped({
      attributes: {
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.system': 'openai',
        'llm.provider': 'azure',
        'gen_ai.request.model': 'claude-sonnet-4',
        'llm.model_name': 'gpt-4',
        'ai.model.id': 'x',
        'gen_ai.operation.name': 'summon_demon',
        'openinference.span.kind': 'TOOL',
        'gen_ai.conversation.id': 'c1',
        'session.id': 's1',
        'enduser.id': 'u1',
        'user.id': 'u2',
        'promptloop.prompt.version_id': 'pv_123',
      },
    });
    expect(span).toMatchObject({
      provider: 'anthropic',
      model: 'claude-sonnet-4',
      kind: 'tool',
      sessionId: 'c1',
      endUserId: 'u1',
      promptVersionId: 'pv_123',
    });
    expect(span.metadata).toEqual({ 'otel.scope.name': 'test-scope', 'otel.span.kind': 'CLIENT' });
  });

  it('puts other resource attributes under resource.<name>, never service.name', () => {
    const span = mapped({
      resource: { 'service.name': 'api', 'service.version': '1.2.3', 'host.name': 'h1' },
      kind: 0,
    });
    expect(span.service).toBe('api');
    expect(span.metadata).toEqual({
      'otel.scope.name': 'test-scope',
      'resource.service.version': '1.2.3',
      'resource.host.name': 'h1',
    });
  });

  it.each([
    [1, 'INTERNAL'],
    [2, 'SERVER'],
    [3, 'CLIENT'],
    [4, 'PRODUCER'],
    [5, 'CONSUMER'],
  ])('OTel kind %i is %s', (kind, name) => {
    expect(mapped({ kind }).metadata['otel.span.kind']).toBe(name);
  });

  it('keeps an exception event as contentJson.error and the status message in metadata', () => {
    const span = mapped({
      status: { code: 2, message: 'boom' },
      events: [
        {
          name: 'exception',
          attributes: { 'exception.type': 'ValueError', 'exception.message': 'bad', 'exception.stacktrace': 'at x' },
        },
      ],
    });
    expect(span.content).toEqual({
      input: null,
      output: null,
      system: null,
      error: { type: 'ValueError', message: 'bad', stacktrace: 'at x' },
    });
    expect(span.metadata['otel.status.message']).toBe('boom');
  });

  it('keeps JSON-looking text that does not parse cleanly as text', () => {
    const bad = '{"a": "\\u0000"}';
    expect(mapped({ attributes: { 'input.value': bad } }).content).toMatchObject({ input: bad });
    expect(mapped({ attributes: { 'input.value': '{oops' } }).content).toMatchObject({ input: '{oops' });
    expect(mapped({ attributes: { 'input.value': '42' } }).content).toMatchObject({ input: '42' });
  });
});

describe('content edge cases', () => {
  it('an empty value does not win over a lower rule; a __proto__ sub-key stays a plain field', () => {
    const span = mapOtlpSpan(
      {
        span: {
          ...input().span,
          attributes: [
            { key: 'gen_ai.input.messages', value: {} },
            { key: 'llm.input_messages.0.message.role', value: { stringValue: 'user' } },
            { key: 'llm.input_messages.0.__proto__', value: { kvlistValue: { values: [] } } },
          ],
        },
      },
      now,
    );
    expect(span.ok && span.span.contentJson).toBe(
      '{"input":[{"role":"user","content":null,"__proto__":{}}],"output":null,"system":null}',
    );
  });
});

describe('limits', () => {
  it('drops metadata beyond 64 keys with omitted metadata', () => {
    const attributes = Object.fromEntries(Array.from({ length: 70 }, (_, i) => [`k${i}`, i]));
    const span = mapped({ attributes });
    expect(Object.keys(span.metadata)).toHaveLength(64);
    expect(span.metadata['otel.scope.name']).toBe('test-scope');
    expect(span.omitted).toEqual(['metadata']);
  });

  it('drops metadata beyond 16 KiB with omitted metadata', () => {
    const span = mapped({ attributes: { big: 'x'.repeat(17 * 1024), small: 'y' } });
    expect(span.metadata).toMatchObject({ small: 'y' });
    expect(span.metadata.big).toBeUndefined();
    expect(Buffer.byteLength(span.metadataJson!)).toBeLessThanOrEqual(16 * 1024);
    expect(span.omitted).toEqual(['metadata']);
  });

  it('nulls the largest of input, output, system until contentJson fits 256 KiB', () => {
    const span = mapped({
      attributes: {
        'input.value': 'i'.repeat(200 * 1024),
        'output.value': 'o'.repeat(150 * 1024),
        'gen_ai.system_instructions': 's',
      },
    });
    expect(span.content).toEqual({ input: null, output: 'o'.repeat(150 * 1024), system: 's' });
    expect(span.omitted).toEqual(['input']);
    const both = mapped({
      attributes: { 'input.value': 'i'.repeat(300 * 1024), 'output.value': 'o'.repeat(300 * 1024) },
    });
    expect(both.content).toEqual({ input: null, output: null, system: null });
    expect(both.omitted).toEqual(['input', 'output']);
    expect(Buffer.byteLength(both.contentJson!)).toBeLessThanOrEqual(256 * 1024);
  });

  it('drops an oversized exception before the small parts it could never make room for', () => {
    const span = mapped({
      attributes: { 'input.value': 'hi', 'gen_ai.system_instructions': 'Be brief.' },
      events: [{ name: 'exception', attributes: { 'exception.message': 'x'.repeat(300 * 1024) } }],
    });
    expect(span.content).toEqual({ input: 'hi', output: null, system: 'Be brief.' });
    expect(span.omitted).toEqual(['error']);
    // An input larger than the error still goes first, and the error stays when that is enough.
    const big = mapped({
      attributes: { 'input.value': 'i'.repeat(300 * 1024) },
      events: [{ name: 'exception', attributes: { 'exception.message': 'bad' } }],
    });
    expect(big.content).toEqual({
      input: null,
      output: null,
      system: null,
      error: { type: 'exception', message: 'bad' },
    });
    expect(big.omitted).toEqual(['input']);
  });

  it('has no contentJson or metadataJson when there is nothing to keep', () => {
    const base = input();
    const result = mapOtlpSpan({ span: { ...base.span, kind: 0 } }, now);
    expect(result.ok && result.span.contentJson).toBeUndefined();
    expect(result.ok && result.span.metadataJson).toBeUndefined();
  });
});

describe('anyValueToJs', () => {
  it('converts every AnyValue kind', () => {
    expect(anyValueToJs({ intValue: '9007199254740993' })).toBe('9007199254740993');
    expect(anyValueToJs({ intValue: 42n })).toBe(42);
    expect(anyValueToJs({ intValue: '-7' })).toBe(-7);
    expect(anyValueToJs({ doubleValue: 1.5 })).toBe(1.5);
    expect(anyValueToJs({ boolValue: false })).toBe(false);
    expect(anyValueToJs({ bytesValue: new Uint8Array([1, 2, 3]) })).toBe('AQID');
    expect(anyValueToJs({ arrayValue: { values: [{ stringValue: 'a' }, {}] } })).toEqual(['a', null]);
    expect(anyValueToJs({ kvlistValue: { values: [{ key: '__proto__', value: { stringValue: 'x' } }] } })).toEqual(
      JSON.parse('{"__proto__":"x"}'),
    );
    expect(anyValueToJs(undefined)).toBe(null);
  });
});

const anyValue: fc.Arbitrary<AnyValue> = fc.letrec<{ value: AnyValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.record({ stringValue: fc.string({ unit: 'binary' }) }),
    fc.record({ boolValue: fc.boolean() }),
    fc.record({ intValue: fc.oneof(fc.bigInt(), fc.string(), fc.integer(), fc.double()) as fc.Arbitrary<bigint> }),
    fc.record({ doubleValue: fc.double() }),
    fc.record({ bytesValue: fc.uint8Array({ maxLength: 8 }) }),
    fc.record({ arrayValue: fc.record({ values: fc.array(tie('value'), { maxLength: 4 }) }) }),
    fc.record({
      kvlistValue: fc.record({
        values: fc.array(fc.record({ key: fc.string(), value: tie('value') }), { maxLength: 4 }),
      }),
    }),
    fc.constant({} as AnyValue),
  ),
})).value;
const keys = fc.oneof(
  fc.constantFrom(
    'gen_ai.input.messages',
    'gen_ai.operation.name',
    'gen_ai.usage.input_tokens',
    'llm.input_messages.0.message.content',
    'llm.input_messages.x',
    'llm.output_messages.1.message.role',
    'input.value',
    'ai.prompt.messages',
    'openinference.span.kind',
    'service.name',
    '__proto__',
  ),
  fc.string(),
);
const attributes = fc.array(fc.record({ key: keys, value: anyValue }), { maxLength: 8 });

describe('property', () => {
  it('never throws on arbitrary attribute values, and valid spans stay within the limits', () => {
    fc.assert(
      fc.property(
        attributes,
        attributes,
        fc.array(
          fc.record({ name: fc.constantFrom('exception', 'gen_ai.choice', 'gen_ai.user.message', 'x'), attributes }),
          {
            maxLength: 3,
          },
        ),
        (spanAttributes, resourceAttributes, events) => {
          const base = input();
          const result = mapOtlpSpan(
            { resourceAttributes, span: { ...base.span, attributes: spanAttributes, events } },
            now,
          );
          if (!result.ok) return;
          if (result.span.metadataJson) {
            expect(Object.keys(JSON.parse(result.span.metadataJson)).length).toBeLessThanOrEqual(64);
            expect(Buffer.byteLength(result.span.metadataJson)).toBeLessThanOrEqual(16 * 1024);
          }
          if (result.span.contentJson) JSON.parse(result.span.contentJson);
        },
      ),
      { numRuns: 300 },
    );
  });
});
