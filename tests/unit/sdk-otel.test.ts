import { AsyncLocalStorage } from 'node:async_hooks';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, ROOT_CONTEXT, trace, type Context, type ContextManager } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import {
  AlwaysOffSampler,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  PROMPT_ID_ATTRIBUTE,
  PROMPT_VERSION_ATTRIBUTE,
  PROMPT_VERSION_ID_ATTRIBUTE,
  promptSpanAttributes,
  tagActiveSpan,
} from '@/sdk/src/otel';
import { promptSpanAttributes as mainEntryAttributes } from '@/sdk/src/index';
import { makePrompt, type RetrievedPrompt } from '@/sdk/src/prompt';
import { mapOtlpSpan } from '@/server/otlp/mapping';
import type { OtlpSpanInput } from '@/server/otlp/types';

// @promptloop/sdk/otel against the real OpenTelemetry JS SDK (a TracerProvider registered globally, an
// in-memory exporter) and, end to end, the real OTLP/JSON exporter into our mapping.

// The SDK's StackContextManager loses the context across `await`: applications run an
// AsyncLocalStorage one (NodeSDK registers it), so the test does too.
class AsyncLocalStorageContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.storage.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== 'function') return target;
    return ((...args: unknown[]) => this.with(ctx, () => (target as (...a: unknown[]) => unknown)(...args))) as T;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.storage.disable();
    return this;
  }
}

const body: RetrievedPrompt = {
  promptId: 'prm_support',
  name: 'Support answers',
  versionId: 'ver_0123456789abcdef',
  version: 7,
  label: 'production',
  content: {
    messages: [{ role: 'user', content: 'Hello {{name}}' }],
    inputType: 'variables',
    modelRouteId: 'local/echo',
    modelId: 'echo',
    temperature: 0,
    outputSchema: '',
    customMetrics: [],
    tools: [],
    maxOutputTokens: null,
  },
  createdAt: '2026-01-01T00:00:00.000Z',
};
const prompt = makePrompt(body, 'server');
const expected = {
  'promptloop.prompt.version_id': 'ver_0123456789abcdef',
  'promptloop.prompt.id': 'prm_support',
  'promptloop.prompt.version': 7,
};

const memory = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: memory })] });
const tracer = provider.getTracer('sdk-otel-test');

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager());
  trace.setGlobalTracerProvider(provider);
});
afterEach(() => memory.reset());
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  context.disable();
});

const finished = (name: string): ReadableSpan => {
  const span = memory.getFinishedSpans().find((s) => s.name === name);
  if (!span) throw new Error(`no finished span "${name}"`);
  return span;
};

describe('promptSpanAttributes', () => {
  it('names the version, the prompt and the version number, from a Prompt, a compiled prompt or a snapshot entry', () => {
    expect(promptSpanAttributes(prompt)).toEqual(expected);
    expect(promptSpanAttributes(prompt.compile({ name: 'Ada' }))).toEqual(expected);
    expect(promptSpanAttributes(body)).toEqual(expected);
    expect([PROMPT_VERSION_ID_ATTRIBUTE, PROMPT_ID_ATTRIBUTE, PROMPT_VERSION_ATTRIBUTE]).toEqual(Object.keys(expected));
    // The dependency-free main entry offers the same function.
    expect(mainEntryAttributes).toBe(promptSpanAttributes);
  });

  it('as the attributes of a span started with any tracer', () => {
    tracer.startActiveSpan('answer ticket', { attributes: promptSpanAttributes(prompt) }, (span) => span.end());
    expect(finished('answer ticket').attributes).toEqual(expected);
  });
});

describe('tagActiveSpan', () => {
  it('tags the active span across awaits and returns true', async () => {
    const tagged = await tracer.startActiveSpan('answer ticket', async (span) => {
      await new Promise((resolve) => setImmediate(resolve));
      const result = tagActiveSpan(prompt);
      span.end();
      return result;
    });
    expect(tagged).toBe(true);
    expect(finished('answer ticket').attributes).toEqual(expected);
  });

  it('tags only the innermost active span, keeping its other attributes', async () => {
    await tracer.startActiveSpan('request', async (outer) => {
      await tracer.startActiveSpan('chat', { attributes: { 'gen_ai.operation.name': 'chat' } }, async (inner) => {
        expect(tagActiveSpan(prompt.compile({ name: 'Ada' }))).toBe(true);
        inner.end();
      });
      outer.end();
    });
    expect(finished('chat').attributes).toEqual({ 'gen_ai.operation.name': 'chat', ...expected });
    expect(finished('request').attributes).toEqual({});
  });

  it('returns false and throws nothing when no span is active', () => {
    expect(tagActiveSpan(prompt)).toBe(false);
    tracer.startSpan('not active').end();
    expect(finished('not active').attributes).toEqual({});
  });

  it('returns false for a span that is not recording (sampled out, or a propagated parent only)', () => {
    const sampledOut = new TracerProvider({
      sampler: new AlwaysOffSampler(),
      spanProcessors: [new SimpleSpanProcessor({ exporter: memory })],
    });
    sampledOut.getTracer('off').startActiveSpan('dropped', (span) => {
      expect(span.isRecording()).toBe(false);
      expect(tagActiveSpan(prompt)).toBe(false);
      span.end();
    });
    const remote = trace.wrapSpanContext({ traceId: '1'.repeat(32), spanId: '2'.repeat(16), traceFlags: 1 });
    expect(context.with(trace.setSpan(context.active(), remote), () => tagActiveSpan(prompt))).toBe(false);
    expect(memory.getFinishedSpans()).toEqual([]);
  });

  it('returns false when the application registered no OpenTelemetry SDK (the API is a no-op)', () => {
    trace.disable();
    try {
      trace.getTracer('none').startActiveSpan('noop', (span) => {
        expect(tagActiveSpan(prompt)).toBe(false);
        span.end();
      });
    } finally {
      trace.setGlobalTracerProvider(provider);
    }
    expect(memory.getFinishedSpans()).toEqual([]);
  });
});

describe('through the real OTLP/JSON exporter into our mapping', () => {
  let server: Server;
  let url: string;
  const bodies: unknown[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/otel/v1/traces`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('the tagged span is stored with promptVersionId, the prompt id and version in its metadata', async () => {
    const exported = new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'support-bot' }),
      spanProcessors: [new SimpleSpanProcessor({ exporter: new OTLPTraceExporter({ url }) })],
    });
    await exported.getTracer('support').startActiveSpan('answer ticket', async (span) => {
      expect(tagActiveSpan(prompt)).toBe(true);
      span.end();
    });
    await exported.forceFlush();
    await exported.shutdown();

    expect(bodies).toHaveLength(1);
    const request = bodies[0] as {
      resourceSpans: {
        resource: { attributes: OtlpSpanInput['resourceAttributes'] };
        scopeSpans: { scope: { name: string }; spans: OtlpSpanInput['span'][] }[];
      }[];
    };
    const [resourceSpans] = request.resourceSpans;
    const [scopeSpans] = resourceSpans.scopeSpans;
    const mapped = mapOtlpSpan({
      resourceAttributes: resourceSpans.resource.attributes,
      scopeName: scopeSpans.scope.name,
      span: scopeSpans.spans[0],
    });
    expect(mapped.ok).toBe(true);
    if (!mapped.ok) return;
    expect(mapped.span).toMatchObject({
      name: 'answer ticket',
      service: 'support-bot',
      kind: 'execution',
      promptVersionId: 'ver_0123456789abcdef',
    });
    const metadata = JSON.parse(mapped.span.metadataJson ?? '{}') as Record<string, unknown>;
    expect(metadata).toMatchObject({ 'promptloop.prompt.id': 'prm_support', 'promptloop.prompt.version': 7 });
    expect(metadata).not.toHaveProperty('promptloop.prompt.version_id');
  });
});
