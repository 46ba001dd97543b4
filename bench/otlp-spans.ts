import { randomBytes } from 'node:crypto';
import Long from 'long';
import type protobuf from 'protobufjs';
import { contents } from './spans';

// The OTLP benchmark's request bodies: the traces of bench/spans.ts (same trace shape, names,
// service, session and user, content and metadata) as an OTel SDK would export them, each span once
// and finished, as ExportTraceServiceRequest protobuf, encoded with protobufjs from the official
// OTLP schema the endpoint vendors (server/otlp/proto, loaded by server/otlp/schema.ts).

type AnyValue = { stringValue?: string; boolValue?: boolean; intValue?: number; arrayValue?: { values: AnyValue[] } };
type KeyValue = { key: string; value: AnyValue };

function attribute(key: string, value: string | number | boolean | string[]): KeyValue {
  if (Array.isArray(value))
    return { key, value: { arrayValue: { values: value.map((stringValue) => ({ stringValue })) } } };
  if (typeof value === 'string') return { key, value: { stringValue: value } };
  if (typeof value === 'boolean') return { key, value: { boolValue: value } };
  return { key, value: { intValue: value } };
}

// The native content document of each kind ({ input: { messages, variables }, output }) as the
// GenAI semantic conventions carry it: input and output messages as JSON strings of role + parts.
// Same texts, so the same few KB per span.
function genAiContent(kind: string): KeyValue[] {
  const native = JSON.parse(contents[kind]) as {
    input: { messages: { role: string; content: string }[]; variables: Record<string, string> };
    output: { role: string; content: string } | { rows: unknown[] };
  };
  const input = native.input.messages.map(({ role, content }) => ({ role, parts: [{ type: 'text', content }] }));
  const output =
    'rows' in native.output
      ? [{ role: 'tool', parts: [{ type: 'tool_call_response', id: 'call_1', response: native.output }] }]
      : [{ role: 'assistant', parts: [{ type: 'text', content: native.output.content }], finish_reason: 'stop' }];
  return [
    attribute('gen_ai.input.messages', JSON.stringify(input)),
    attribute('gen_ai.output.messages', JSON.stringify(output)),
  ];
}

// The native metadataJson ({ region, release, userAgent, flags, tags, attempt }) as attributes under
// the same names (flat, dotted), which is how they land in metadataJson beside otel.scope.name and
// otel.span.kind.
const metadata: KeyValue[] = [
  attribute('region', 'eu-west-1'),
  attribute('release', '2026.11.3'),
  attribute('userAgent', 'bench/1.0'),
  attribute('flags.cache', true),
  attribute('flags.stream', false),
  attribute('tags', ['bench', 'ingest']),
  attribute('attempt', 1),
];
const conversation: KeyValue[] = [attribute('gen_ai.conversation.id', 'sess_42'), attribute('enduser.id', 'user_7')];
const operations: Record<string, string> = {
  execution: 'invoke_agent',
  model: 'chat',
  tool: 'execute_tool',
  retrieval: 'retrieval',
};
const model: KeyValue[] = [
  attribute('gen_ai.provider.name', 'openai'),
  attribute('gen_ai.request.model', 'gpt-4o-mini'),
  attribute('gen_ai.usage.input_tokens', 812),
  attribute('gen_ai.usage.output_tokens', 240),
];

// Every span of one kind carries the same attribute values, so each kind's list is built once; the
// spans around them (ids, times) are new objects for every request and all of it is encoded anew.
const attributesOf: Record<string, KeyValue[]> = Object.fromEntries(
  Object.keys(operations).map((kind) => [
    kind,
    [
      attribute('gen_ai.operation.name', operations[kind]),
      ...(kind === 'model' ? model : []),
      ...conversation,
      ...genAiContent(kind),
      ...metadata,
    ],
  ]),
);
const spanKinds = { internal: 1, client: 3 };
const children = ['model', 'tool', 'retrieval', 'model', 'tool', 'model', 'retrieval', 'model', 'tool'];
export const spansPerTrace = children.length + 1;

type Span = {
  traceId: Uint8Array;
  spanId: Uint8Array;
  parentSpanId?: Uint8Array;
  name: string;
  kind: number;
  startTimeUnixNano: Long;
  endTimeUnixNano: Long;
  attributes: KeyValue[];
  status: { code: number };
};

const nanos = (ms: number) => Long.fromNumber(ms, true).multiply(1_000_000);

// One request's spans: consecutive traces (children, then their root: the order in which a batch
// span processor sees them end), the last trace possibly cut, its rest left for the next request.
function* spanStream(): Generator<Span> {
  for (;;) {
    const now = Date.now();
    const start = nanos(now - 2000);
    const end = nanos(now);
    const ids = randomBytes(16 + 8 * spansPerTrace);
    const traceId = ids.subarray(0, 16);
    const rootId = ids.subarray(16, 24);
    for (let i = 0; i < children.length; i++) {
      const kind = children[i];
      yield {
        traceId,
        spanId: ids.subarray(24 + 8 * i, 32 + 8 * i),
        parentSpanId: rootId,
        name: `${kind} call`,
        kind: kind === 'model' ? spanKinds.client : spanKinds.internal,
        startTimeUnixNano: start,
        endTimeUnixNano: end,
        attributes: attributesOf[kind],
        status: { code: 0 },
      };
    }
    yield {
      traceId,
      spanId: rootId,
      name: 'answer support ticket',
      kind: spanKinds.internal,
      startTimeUnixNano: start,
      endTimeUnixNano: end,
      attributes: attributesOf.execution,
      status: { code: 0 },
    };
  }
}

// An endless stream of ExportTraceServiceRequest bodies of `size` spans each: one resource
// (service.name support-bot) and one instrumentation scope, as the SDK groups them.
export function* otlpBodies(request: protobuf.Type, size: number): Generator<Buffer> {
  const spans = spanStream();
  for (;;) {
    const batch: Span[] = [];
    for (let i = 0; i < size; i++) batch.push(spans.next().value as Span);
    const message = {
      resourceSpans: [
        {
          resource: { attributes: [attribute('service.name', 'support-bot')] },
          scopeSpans: [{ scope: { name: 'promptloop-bench', version: '1.0.0' }, spans: batch }],
        },
      ],
    };
    const bytes = request.encode(message).finish();
    yield Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
}
