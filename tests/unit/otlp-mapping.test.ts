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
    // open-telemetry/semantic-conventions docs/gen-ai/llm-spans.md (v1.26: gen_ai.system,
    // gen_ai.usage.prompt_tokens / completion_tokens) and docs/gen-ai/gen-ai-events.md (before v1.37:
    // gen_ai.system.message, gen_ai.user.message, gen_ai.choice events; body fields content / index,
    // finish_reason, message here carried as event attributes)
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
    // open-telemetry/semantic-conventions docs/gen-ai/llm-spans.md (v1.26: gen_ai.content.prompt event
    // with gen_ai.prompt, gen_ai.content.completion event with gen_ai.completion)
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
    // Arize-ai/openinference spec/semantic_conventions.md (openinference.span.kind CHAIN, input.value,
    // output.value, session.id, user.id, llm.provider)
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
    // vercel/ai content/docs/03-ai-sdk-core/60-telemetry.mdx (https://ai-sdk.dev/docs/ai-sdk-core/telemetry),
    // "generateText function" ai.generateText.doGenerate and "Basic LLM span information"
    {
      title: 'ai.generateText.doGenerate',
      options: {
        name: 'ai.generateText.doGenerate',
        attributes: {
          'operation.name': 'ai.generateText.doGenerate my-function',
          'ai.operationId': 'ai.generateText.doGenerate',
          'ai.model.id': 'gpt-4-turbo',
          'ai.model.provider': 'openai.chat',
          'ai.settings.maxRetries': 2,
          'ai.telemetry.functionId': 'my-function',
          'ai.prompt.format': 'messages',
          'ai.prompt.messages': JSON.stringify([{ role: 'user', content: [{ type: 'text', text: 'Write a haiku' }] }]),
          'ai.response.text': 'Leaves fall in silence',
          'ai.response.finishReason': 'stop',
          'ai.usage.promptTokens': 10,
          'ai.usage.completionTokens': 7,
          'gen_ai.system': 'openai.chat',
          'gen_ai.request.model': 'gpt-4-turbo',
          'gen_ai.response.finish_reasons': ['stop'],
          'gen_ai.usage.prompt_tokens': 10,
          'gen_ai.usage.completion_tokens': 7,
        },
      },
      expected: { kind: 'model', provider: 'openai.chat', model: 'gpt-4-turbo', inputTokens: 10, outputTokens: 7 },
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
        'ai.model.provider',
        'ai.settings.maxRetries',
        'ai.telemetry.functionId',
        'ai.prompt.format',
        'ai.response.finishReason',
        'gen_ai.response.finish_reasons',
      ],
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
