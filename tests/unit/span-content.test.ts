import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attributeGroups, visibleAttributes } from '@/components/traces/attributes';
import { readChatContent, type ChatContent, type ChatMessage } from '@/components/traces/chat';
import { spanRows } from '@/components/traces/span-tree';
import { caseFromSpanContent, spanContentOf } from '@/server/online/span-case';
import { mapOtlpSpan } from '@/server/otlp/mapping';
import type { KeyValue } from '@/server/otlp/types';

// The content our OTLP mapping stores for a span with these attributes and events: the explorer
// reads what ingestion wrote, so its examples are made by the mapping itself.
const now = 1_764_000_000_000;
const kv = (attributes: Record<string, string | number>): KeyValue[] =>
  Object.entries(attributes).map(([key, value]) => ({
    key,
    value: typeof value === 'string' ? { stringValue: value } : { intValue: String(value) },
  }));
function stored(
  attributes: Record<string, string | number>,
  events: { name: string; attributes: Record<string, string | number> }[] = [],
) {
  const result = mapOtlpSpan(
    {
      resourceAttributes: kv({ 'service.name': 'checkout', 'service.version': '1.2.3' }),
      scopeName: 'opentelemetry.instrumentation.openai',
      span: {
        traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
        spanId: '00f067aa0ba902b7',
        parentSpanId: '53995c3f42cd8ad8',
        name: 'chat gpt-4',
        kind: 3,
        startTimeUnixNano: BigInt(now - 2000) * 1_000_000n,
        endTimeUnixNano: BigInt(now - 1000) * 1_000_000n,
        attributes: kv(attributes),
        events: events.map((e) => ({ name: e.name, attributes: kv(e.attributes) })),
      },
    },
    now,
  );
  if (!result.ok) throw new Error(result.reason);
  return {
    content: result.span.contentJson === undefined ? undefined : (JSON.parse(result.span.contentJson) as unknown),
    metadata: result.span.metadataJson === undefined ? undefined : (JSON.parse(result.span.metadataJson) as unknown),
  };
}

function chat(content: unknown): ChatContent {
  const result = readChatContent(content);
  if (!result) throw new Error('not recognised as chat');
  return result;
}
function messages(section: ChatContent['input']): ChatMessage[] {
  if (section?.kind !== 'messages') throw new Error(`not messages: ${JSON.stringify(section)}`);
  return section.messages;
}

// open-telemetry/semantic-conventions docs/gen-ai/non-normative/examples-llm-calls.md (the same
// examples as tests/unit/otlp-mapping.test.ts), with the tool-call turn of "Tool calls (functions)".
const genAiInput = [
  { role: 'system', parts: [{ type: 'text', content: 'You are a helpful bot' }] },
  { role: 'user', parts: [{ type: 'text', content: 'Weather in Paris?' }] },
  {
    role: 'assistant',
    parts: [
      { type: 'tool_call', id: 'call_VSPygqKTWdrhaFErNvMV18Yl', name: 'get_weather', arguments: { location: 'Paris' } },
    ],
  },
  {
    role: 'tool',
    parts: [{ type: 'tool_call_response', id: 'call_VSPygqKTWdrhaFErNvMV18Yl', response: 'rainy, 57°F' }],
  },
];
const genAiOutput = [
  {
    role: 'assistant',
    parts: [{ type: 'text', content: 'The weather in Paris is currently rainy with a temperature of 57°F.' }],
    finish_reason: 'stop',
  },
];

describe('readChatContent on content stored by the OTLP mapping', () => {
  it('GenAI parts messages: text, tool call, tool call response, finish reason, system instructions', () => {
    const { content } = stored({
      'gen_ai.operation.name': 'chat',
      'gen_ai.input.messages': JSON.stringify(genAiInput),
      'gen_ai.output.messages': JSON.stringify(genAiOutput),
      'gen_ai.system_instructions': JSON.stringify([{ type: 'text', content: 'Answer briefly.' }]),
    });
    const result = chat(content);
    expect(messages(result.system)).toEqual([
      { role: 'system', name: null, parts: [{ kind: 'text', text: 'Answer briefly.' }], finishReason: null },
    ]);
    const input = messages(result.input);
    expect(input.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(input[1].parts).toEqual([{ kind: 'text', text: 'Weather in Paris?' }]);
    expect(input[2].parts).toEqual([
      { kind: 'tool_call', id: 'call_VSPygqKTWdrhaFErNvMV18Yl', name: 'get_weather', arguments: { location: 'Paris' } },
    ]);
    expect(input[3].parts).toEqual([
      { kind: 'tool_result', id: 'call_VSPygqKTWdrhaFErNvMV18Yl', name: null, result: 'rainy, 57°F' },
    ]);
    expect(messages(result.output)).toEqual([
      {
        role: 'assistant',
        name: null,
        parts: [{ kind: 'text', text: 'The weather in Paris is currently rainy with a temperature of 57°F.' }],
        finishReason: 'stop',
      },
    ]);
    expect(result.error).toBeNull();
    expect(result.extra).toBeNull();
  });

  it('older GenAI message events: system text, { role, content } messages, gen_ai.choice with tool calls', () => {
    const { content } = stored({ 'gen_ai.system': 'openai' }, [
      { name: 'gen_ai.system.message', attributes: { content: 'You are a helpful bot' } },
      { name: 'gen_ai.user.message', attributes: { content: 'Tell me a joke about OpenTelemetry' } },
      { name: 'gen_ai.tool.message', attributes: { content: 'rainy, 57°F', id: 'call_1' } },
      {
        name: 'gen_ai.choice',
        attributes: {
          index: 0,
          finish_reason: 'tool_calls',
          message: JSON.stringify({
            tool_calls: [
              { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
            ],
          }),
        },
      },
    ]);
    const result = chat(content);
    expect(messages(result.system)).toEqual([
      { role: 'system', name: null, parts: [{ kind: 'text', text: 'You are a helpful bot' }], finishReason: null },
    ]);
    expect(messages(result.input)).toEqual([
      {
        role: 'user',
        name: null,
        parts: [{ kind: 'text', text: 'Tell me a joke about OpenTelemetry' }],
        finishReason: null,
      },
      {
        role: 'tool',
        name: null,
        parts: [{ kind: 'tool_result', id: 'call_1', name: null, result: 'rainy, 57°F' }],
        finishReason: null,
      },
    ]);
    expect(messages(result.output)).toEqual([
      {
        role: 'assistant',
        name: null,
        parts: [{ kind: 'tool_call', id: 'call_2', name: 'get_weather', arguments: { location: 'Paris' } }],
        finishReason: 'tool_calls',
      },
    ]);
  });

  it('OpenInference flattened messages, a named tool message and flat tool calls', () => {
    // Arize-ai/openinference spec/llm_spans.md, with the tool call of the assistant turn
    const { content } = stored({
      'openinference.span.kind': 'LLM',
      'llm.input_messages.0.message.role': 'user',
      'llm.input_messages.0.message.content': 'what is 23 times 87',
      'llm.input_messages.1.message.role': 'assistant',
      'llm.input_messages.1.message.tool_calls.0.tool_call.function.name': 'multiply',
      'llm.input_messages.1.message.tool_calls.0.tool_call.function.arguments': '{"a": 23, "b": 87}',
      'llm.input_messages.2.message.role': 'tool',
      'llm.input_messages.2.message.content': '2001',
      'llm.input_messages.2.message.name': 'multiply',
      'llm.output_messages.0.message.role': 'assistant',
      'llm.output_messages.0.message.content': 'The product of 23 times 87 is 2001.',
    });
    const input = messages(chat(content).input);
    expect(input[0].parts).toEqual([{ kind: 'text', text: 'what is 23 times 87' }]);
    expect(input[1].parts).toEqual([{ kind: 'tool_call', id: null, name: 'multiply', arguments: { a: 23, b: 87 } }]);
    expect(input[2]).toEqual({
      role: 'tool',
      name: null,
      parts: [{ kind: 'tool_result', id: null, name: 'multiply', result: '2001' }],
      finishReason: null,
    });
    expect(messages(chat(content).output)[0].parts).toEqual([
      { kind: 'text', text: 'The product of 23 times 87 is 2001.' },
    ]);
  });

  it('OpenInference content items and tool calls read as text, other parts and calls; a case gets the user text', () => {
    const { content } = stored({
      'openinference.span.kind': 'LLM',
      'llm.input_messages.0.message.role': 'user',
      'llm.input_messages.0.message.contents.0.message_content.type': 'text',
      'llm.input_messages.0.message.contents.0.message_content.text': 'What is the weather in Paris?',
      'llm.input_messages.0.message.contents.1.message_content.type': 'image',
      'llm.input_messages.0.message.contents.1.message_content.image.image.url': 'https://example.com/sky.jpg',
      'llm.output_messages.0.message.role': 'assistant',
      'llm.output_messages.0.message.tool_calls.0.tool_call.id': 'call_1',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'get_weather',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments': '{"city": "Paris"}',
    });
    const result = chat(content);
    expect(messages(result.input)[0].parts).toEqual([
      { kind: 'text', text: 'What is the weather in Paris?' },
      { kind: 'other', type: 'image', value: { type: 'image', url: 'https://example.com/sky.jpg' } },
    ]);
    expect(messages(result.output)[0].parts).toEqual([
      { kind: 'tool_call', id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } },
    ]);
    // From the span to a case: the user's text, not the message's JSON.
    const spanContent = spanContentOf(JSON.stringify(content));
    expect(spanContent).not.toBeNull();
    expect(caseFromSpanContent(spanContent!, { template: null, inputType: null })).toMatchObject({
      input: 'What is the weather in Paris?',
      inputFormat: 'text',
    });
  });

  it('OpenInference input.value JSON and output.value text: a value section and a bare text message', () => {
    const { content } = stored({
      'openinference.span.kind': 'CHAIN',
      'input.value': '{"query": "What is the capital of France?"}',
      'output.value': 'Hello, World!',
    });
    const result = chat(content);
    expect(result.input).toEqual({ kind: 'value', value: { query: 'What is the capital of France?' } });
    expect(messages(result.output)).toEqual([
      { role: null, name: null, parts: [{ kind: 'text', text: 'Hello, World!' }], finishReason: null },
    ]);
    expect(result.system).toBeNull();
  });

  it('Vercel AI SDK prompt messages with text parts and the response text', () => {
    const { content } = stored({
      'ai.prompt.messages': JSON.stringify([
        { role: 'system', content: 'You write haiku.' },
        { role: 'user', content: [{ type: 'text', text: 'Write a haiku' }] },
        {
          role: 'assistant',
          content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'weather', args: { city: 'Kyoto' } }],
        },
        {
          role: 'tool',
          content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'weather', result: { sky: 'clear' } }],
        },
      ]),
      'ai.response.text': 'Leaves fall in silence',
    });
    const result = chat(content);
    const input = messages(result.input);
    expect(input.map((m) => m.parts)).toEqual([
      [{ kind: 'text', text: 'You write haiku.' }],
      [{ kind: 'text', text: 'Write a haiku' }],
      [{ kind: 'tool_call', id: 'c1', name: 'weather', arguments: { city: 'Kyoto' } }],
      [{ kind: 'tool_result', id: 'c1', name: 'weather', result: { sky: 'clear' } }],
    ]);
    expect(messages(result.output)[0].parts).toEqual([{ kind: 'text', text: 'Leaves fall in silence' }]);
  });

  it('an exception event alone is recognised: the error with its stack', () => {
    const { content } = stored({}, [
      {
        name: 'exception',
        attributes: { 'exception.type': 'ValueError', 'exception.message': 'bad', 'exception.stacktrace': 'at x' },
      },
    ]);
    expect(chat(content)).toEqual({
      system: null,
      input: null,
      output: null,
      error: { type: 'ValueError', message: 'bad', stacktrace: 'at x' },
      extra: null,
    });
  });
});

describe('readChatContent on native and odd content', () => {
  it('native { input: { messages }, output: { choices } } is chat', () => {
    const result = chat({
      input: { messages: [{ role: 'user', content: 'Hi' }], temperature: 0 },
      output: { choices: [{ message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }] },
      region: 'eu',
    });
    expect(messages(result.input)[0].parts).toEqual([{ kind: 'text', text: 'Hi' }]);
    expect(messages(result.output)[0]).toMatchObject({ role: 'assistant', finishReason: 'stop' });
    expect(result.extra).toEqual({ region: 'eu' });
  });

  it('Anthropic content blocks: tool_use and tool_result', () => {
    const result = chat({
      input: [
        { role: 'assistant', content: [{ type: 'tool_use', id: 'tu_1', name: 'lookup', input: { q: 'x' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu_1', content: 'found' }] },
      ],
    });
    expect(messages(result.input).map((m) => m.parts)).toEqual([
      [{ kind: 'tool_call', id: 'tu_1', name: 'lookup', arguments: { q: 'x' } }],
      [{ kind: 'tool_result', id: 'tu_1', name: null, result: 'found' }],
    ]);
  });

  it('unknown parts are kept as other, with their text when that is all they hold', () => {
    const result = chat({
      output: [
        {
          role: 'assistant',
          parts: [
            { type: 'reasoning', content: 'Thinking…' },
            { type: 'uri', modality: 'image', uri: 'https://example.com/a.png' },
          ],
        },
      ],
    });
    expect(messages(result.output)[0].parts).toEqual([
      { kind: 'other', type: 'reasoning', value: 'Thinking…' },
      { kind: 'other', type: 'uri', value: { type: 'uri', modality: 'image', uri: 'https://example.com/a.png' } },
    ]);
  });

  it.each([
    ['a string', 'hello'],
    ['an array', [1, 2]],
    ['null', null],
    ['an object without chat', { input: { query: 'x' }, output: { documents: [] } }],
    ['empty message lists', { input: [], output: [] }],
    ['a list that is not all messages', { input: [{ role: 'user', content: 'a' }, 3] }],
    ['an error that is not an error object', { error: 'boom' }],
  ])('%s is not chat (shown as JSON)', (_title, value) => {
    expect(readChatContent(value)).toBeNull();
  });

  it('never throws on arbitrary JSON, and whatever it returns is a well-formed transcript', () => {
    const chatty = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.jsonValue({ maxDepth: 3 }),
        fc.record(
          {
            role: fc.oneof(fc.constantFrom('user', 'assistant', 'tool', 'system', '__proto__'), fc.jsonValue()),
            parts: fc.array(tie('part'), { maxLength: 3 }),
            content: fc.oneof(fc.string(), fc.array(tie('part'), { maxLength: 3 }), fc.jsonValue({ maxDepth: 2 })),
            tool_calls: fc.oneof(fc.array(tie('part'), { maxLength: 2 }), fc.string()),
            finish_reason: fc.jsonValue({ maxDepth: 1 }),
          },
          { requiredKeys: [] },
        ),
        fc.array(tie('value'), { maxLength: 3 }),
      ),
      part: fc.record(
        {
          type: fc.oneof(
            fc.constantFrom(
              'text',
              'tool_call',
              'tool-call',
              'tool_use',
              'tool_call_response',
              'tool-result',
              'tool_result',
              'function',
            ),
            fc.jsonValue({ maxDepth: 1 }),
          ),
          content: fc.jsonValue({ maxDepth: 2 }),
          text: fc.jsonValue({ maxDepth: 1 }),
          id: fc.jsonValue({ maxDepth: 1 }),
          name: fc.jsonValue({ maxDepth: 1 }),
          arguments: fc.oneof(fc.string(), fc.jsonValue({ maxDepth: 2 })),
          function: fc.jsonValue({ maxDepth: 2 }),
        },
        { requiredKeys: [] },
      ),
    }));
    const content = fc.oneof(
      fc.jsonValue(),
      fc.record(
        { input: chatty.value, output: chatty.value, system: chatty.value, error: fc.jsonValue({ maxDepth: 2 }) },
        { requiredKeys: [] },
      ),
    );
    fc.assert(
      fc.property(content, (value) => {
        const result = readChatContent(JSON.parse(JSON.stringify(value)));
        if (!result) return;
        for (const section of [result.system, result.input, result.output]) {
          if (section?.kind !== 'messages') continue;
          for (const message of section.messages) {
            expect(message.role === null || typeof message.role === 'string').toBe(true);
            for (const part of message.parts)
              expect(['text', 'tool_call', 'tool_result', 'other']).toContain(part.kind);
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('attribute groups', () => {
  it('keeps span attributes, resource attributes and otel.* apart, resource names without their prefix', () => {
    const { metadata } = stored({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.max_tokens': 200,
      'gen_ai.response.id': 'r1',
    });
    const groups = attributeGroups(metadata)!;
    expect(groups.map((g) => [g.id, g.rows.map((r) => r.name)])).toEqual([
      ['span', ['gen_ai.request.max_tokens', 'gen_ai.response.id']],
      ['resource', ['service.version']],
      ['otel', ['otel.scope.name', 'otel.span.kind']],
    ]);
    expect(groups[1].rows[0]).toEqual({
      key: 'resource.service.version',
      name: 'service.version',
      value: '1.2.3',
      text: '1.2.3',
    });
    expect(groups[0].rows[0].text).toBe('200');
  });

  it('filters on key or value in any case and sorts within each group', () => {
    const groups = attributeGroups({
      b: 'Paris',
      a: 10,
      c: { nested: true },
      'resource.host.name': 'paris-1',
      'otel.span.kind': 'CLIENT',
    })!;
    const sortedKeys = (query: string, by: 'key' | 'value', direction: 'ascending' | 'descending') =>
      visibleAttributes(groups, query, { by, direction }).map((g) => g.rows.map((r) => r.key));
    expect(sortedKeys('', 'key', 'ascending')).toEqual([['a', 'b', 'c'], ['resource.host.name'], ['otel.span.kind']]);
    expect(sortedKeys('', 'key', 'descending')[0]).toEqual(['c', 'b', 'a']);
    expect(sortedKeys('', 'value', 'ascending')[0]).toEqual(['c', 'a', 'b']);
    expect(sortedKeys('PARIS', 'key', 'ascending')).toEqual([['b'], ['resource.host.name']]);
    expect(sortedKeys('nested', 'key', 'ascending')).toEqual([['c']]);
    expect(sortedKeys('nothing', 'key', 'ascending')).toEqual([]);
  });

  it('is null for metadata that is not an object, and total on any JSON', () => {
    expect(attributeGroups([1])).toBeNull();
    expect(attributeGroups('x')).toBeNull();
    expect(attributeGroups(null)).toBeNull();
    fc.assert(
      fc.property(fc.jsonValue(), fc.string(), (value, query) => {
        const groups = attributeGroups(JSON.parse(JSON.stringify(value)));
        if (groups) visibleAttributes(groups, query, { by: 'value', direction: 'descending' });
      }),
    );
  });
});

describe('span tree of OTLP traces', () => {
  const span = (spanId: string, parentSpanId: string | null, startedAt: number) => ({
    spanId,
    parentSpanId,
    startedAt,
  });

  it('shows children that arrived before their root at the top level, in start order with extra parentless spans', () => {
    // The root r has not arrived: a and b point at it; x is a second span without a parent.
    const rows = spanRows([span('b', 'r', 30), span('x', null, 20), span('a', 'r', 10), span('a1', 'a', 12)]);
    expect(rows.map((r) => [r.span.spanId, r.depth, r.orphan])).toEqual([
      ['a', 0, true],
      ['a1', 1, false],
      ['x', 0, false],
      ['b', 0, true],
    ]);
  });

  it('once the root arrives, the same spans nest under it', () => {
    const rows = spanRows([span('b', 'r', 30), span('x', null, 20), span('a', 'r', 10), span('r', null, 0)]);
    expect(rows.map((r) => [r.span.spanId, r.depth, r.orphan])).toEqual([
      ['r', 0, false],
      ['a', 1, false],
      ['b', 1, false],
      ['x', 0, false],
    ]);
  });
});
