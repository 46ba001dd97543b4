import { randomBytes } from 'node:crypto';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { otlpSchema } from '@/server/otlp/schema';

// OTLP requests for tests: OTLP/JSON objects (the canonical form here), the same request as
// protobuf bytes (encoded by protobufjs with the vendored official schema), and real spans made by
// the OpenTelemetry SDK for its exporters.

export type JsonRequest = { resourceSpans: Record<string, unknown>[] };

export const hexId = (bytes: 8 | 16) => randomBytes(bytes).toString('hex');

/** A nanosecond time as the exporters write it in JSON: a decimal string. */
export const nanos = (ms: number, extraNs = 0) => (BigInt(ms) * 1_000_000n + BigInt(extraNs)).toString();

/** One finished span in OTLP/JSON; `overrides` replace fields (undefined drops one). */
export function jsonSpan(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const start = Date.now() - 2000;
  const span: Record<string, unknown> = {
    traceId: hexId(16),
    spanId: hexId(8),
    name: 'chat gpt-4o',
    kind: 3,
    startTimeUnixNano: nanos(start),
    endTimeUnixNano: nanos(start + 1000),
    attributes: [
      { key: 'gen_ai.operation.name', value: { stringValue: 'chat' } },
      { key: 'gen_ai.request.model', value: { stringValue: 'gpt-4o' } },
      { key: 'gen_ai.usage.input_tokens', value: { intValue: '12' } },
    ],
    status: { code: 1 },
    ...overrides,
  };
  for (const key of Object.keys(span)) if (span[key] === undefined) delete span[key];
  return span;
}

export function jsonRequest(spans: Record<string, unknown>[], serviceName = 'checkout'): JsonRequest {
  return {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: serviceName } }] },
        scopeSpans: [{ scope: { name: 'test-scope', version: '1.0.0' }, spans }],
      },
    ],
  };
}

const idFields = new Set(['traceId', 'spanId', 'parentSpanId']);

// OTLP/JSON → what protobufjs's fromObject takes: ids from hex to bytes, bytesValue from base64.
function toProtobufObject(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((item) => toProtobufObject(item));
  if (value === null || typeof value !== 'object') {
    if (idFields.has(key) && typeof value === 'string') return Buffer.from(value, 'hex');
    if (key === 'bytesValue' && typeof value === 'string') return Buffer.from(value, 'base64');
    return value;
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toProtobufObject(v, k)]));
}

/** The same request as protobuf bytes (ExportTraceServiceRequest). */
export function protobufRequest(request: JsonRequest | Record<string, unknown>): Buffer {
  const type = otlpSchema().request;
  return Buffer.from(type.encode(type.fromObject(toProtobufObject(request) as Record<string, unknown>)).finish());
}

/**
 * Real spans from the OpenTelemetry SDK: a root `invoke_agent` span with a child GenAI chat span
 * (attributes, a legacy message event, an exception event, status ERROR) and a tool span; the
 * root ends last, so it is the last one exported.
 */
export function sdkSpans(
  serviceName = 'otel-test-service',
  // A fourth span, `late span`, child of the root, at these times (Unix ms).
  late?: { startTime: number; endTime: number },
): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName, 'deployment.environment.name': 'test' }),
    spanProcessors: [new SimpleSpanProcessor({ exporter: memory })],
  });
  const tracer = provider.getTracer('promptloop-tests', '1.0.0');
  const root = tracer.startSpan('invoke_agent support', {
    kind: SpanKind.INTERNAL,
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'session.id': 'session-1', 'enduser.id': 'user-7' },
  });
  const inRoot = trace.setSpan(context.active(), root);
  const chat = tracer.startSpan(
    'chat gpt-4o',
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.response.model': 'gpt-4o-2024-08-06',
        'gen_ai.usage.input_tokens': 120,
        'gen_ai.usage.output_tokens': 42,
        'gen_ai.request.temperature': 0.2,
        'http.retries': [1, 2],
      },
    },
    inRoot,
  );
  chat.addEvent('gen_ai.user.message', { 'gen_ai.system': 'openai', content: 'Where is my order?' });
  chat.recordException(Object.assign(new Error('upstream timed out'), { name: 'TimeoutError' }));
  chat.setStatus({ code: SpanStatusCode.ERROR, message: 'upstream timed out' });
  chat.end();
  const tool = tracer.startSpan(
    'execute_tool lookup_order',
    { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup_order' } },
    inRoot,
  );
  tool.end();
  if (late) tracer.startSpan('late span', { startTime: late.startTime }, inRoot).end(late.endTime);
  root.end();
  return memory.getFinishedSpans();
}
