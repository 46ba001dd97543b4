import { AsyncLocalStorage } from 'node:async_hooks';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  context,
  ROOT_CONTEXT,
  SpanKind,
  trace,
  type Context,
  type ContextManager,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import {
  AlwaysOffSampler,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
  type ReadableSpan,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  PROMPT_ID_ATTRIBUTE,
  PROMPT_VERSION_ATTRIBUTE,
  PROMPT_VERSION_ID_ATTRIBUTE,
  PromptVersionSpanProcessor,
  promptSpanAttributes,
  tagActiveSpan,
  withPromptVersion,
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

  it('returns false and tags nothing for something that names no prompt version', async () => {
    await tracer.startActiveSpan('not a prompt', async (span) => {
      for (const wrong of [{}, null, { versionId: '', promptId: 'p', version: 1 }, { versionId: 'v', promptId: 'p' }])
        expect(tagActiveSpan(wrong as never)).toBe(false);
      span.end();
    });
    expect(finished('not a prompt').attributes).toEqual({});
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

// What @opentelemetry/instrumentation-openai does around `openai.chat.completions.create(...)`: a `chat <model>`
// span started in the active context (here after an await, as the client does), ended when the answer comes.
const chatAttributes = {
  'gen_ai.operation.name': 'chat',
  'gen_ai.provider.name': 'openai',
  'gen_ai.request.model': 'gpt-4o-mini',
  'gen_ai.usage.input_tokens': 12,
  'gen_ai.usage.output_tokens': 3,
};
const tick = () => new Promise((resolve) => setImmediate(resolve));
async function instrumentedChat(tracer: Tracer, name = 'chat gpt-4o-mini'): Promise<string> {
  await tick();
  const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes: chatAttributes });
  await tick();
  span.end();
  return 'the answer';
}

const other: RetrievedPrompt = { ...body, promptId: 'prm_other', versionId: 'ver_fedcba9876543210', version: 2 };
const otherExpected = {
  'promptloop.prompt.version_id': 'ver_fedcba9876543210',
  'promptloop.prompt.id': 'prm_other',
  'promptloop.prompt.version': 2,
};

describe('withPromptVersion with PromptVersionSpanProcessor', () => {
  const exported = new InMemorySpanExporter();
  const exporting = new SimpleSpanProcessor({ exporter: exported });
  // The processor listed before, and after, the processor that exports: attributes set in onStart are exported.
  const providers = {
    before: new TracerProvider({ spanProcessors: [new PromptVersionSpanProcessor(), exporting] }),
    after: new TracerProvider({ spanProcessors: [exporting, new PromptVersionSpanProcessor()] }),
  };
  const tracer = providers.before.getTracer('instrumentation');
  const span = (name: string): ReadableSpan => {
    const found = exported.getFinishedSpans().find((s) => s.name === name);
    if (!found) throw new Error(`no finished span "${name}"`);
    return found;
  };
  afterEach(() => exported.reset());
  afterAll(async () => {
    await providers.before.shutdown();
    await providers.after.shutdown();
  });

  it.each(['before', 'after'] as const)(
    "the instrumentation's chat span started inside, across awaits, gets the attributes (processor %s the exporting one)",
    async (order) => {
      const instrumentation = providers[order].getTracer('instrumentation');
      const answer = await instrumentation.startActiveSpan('request', async (request) => {
        const result = await withPromptVersion(prompt, async () => {
          await tick();
          return instrumentedChat(instrumentation);
        });
        request.end();
        return result;
      });
      expect(answer).toBe('the answer');
      const chat = span('chat gpt-4o-mini');
      expect(chat.attributes).toEqual({ ...chatAttributes, ...expected });
      // The child of the span that was active, which itself stays untagged (it started outside).
      expect(chat.parentSpanContext?.spanId).toBe(span('request').spanContext().spanId);
      expect(span('request').attributes).toEqual({});
    },
  );

  it('spans started outside carry nothing, also while a withPromptVersion call is still running', async () => {
    tracer.startSpan('before').end();
    const running = withPromptVersion(prompt.compile({ name: 'Ada' }), () => instrumentedChat(tracer, 'inside'));
    const concurrent = instrumentedChat(tracer, 'concurrent');
    await Promise.all([running, concurrent]);
    tracer.startSpan('after').end();
    expect(span('inside').attributes).toEqual({ ...chatAttributes, ...expected });
    expect(span('concurrent').attributes).toEqual(chatAttributes);
    expect(span('before').attributes).toEqual({});
    expect(span('after').attributes).toEqual({});
  });

  it('a nested withPromptVersion wins for the spans inside it, the outer one applies again after it', async () => {
    await withPromptVersion(prompt, async () => {
      await withPromptVersion(other, () => instrumentedChat(tracer, 'inner'));
      await instrumentedChat(tracer, 'outer');
    });
    expect(span('inner').attributes).toEqual({ ...chatAttributes, ...otherExpected });
    expect(span('outer').attributes).toEqual({ ...chatAttributes, ...expected });
  });

  it("passes fn's result, promise and error through as they are", async () => {
    expect(withPromptVersion(prompt, () => 42)).toBe(42);
    const promise = withPromptVersion(prompt, async () => {
      await tick();
      return { ok: true };
    });
    expect(promise).toBeInstanceOf(Promise);
    await expect(promise).resolves.toEqual({ ok: true });
    const failure = new Error('rate limited');
    expect(() =>
      withPromptVersion(prompt, () => {
        throw failure;
      }),
    ).toThrow(failure);
    await expect(
      withPromptVersion(prompt, async () => {
        await tick();
        throw failure;
      }),
    ).rejects.toBe(failure);
  });

  it('withPromptVersion alone (no processor registered) tags nothing', async () => {
    await withPromptVersion(prompt, () => instrumentedChat(provider.getTracer('instrumentation'), 'unprocessed'));
    expect(finished('unprocessed').attributes).toEqual(chatAttributes);
  });

  it('never throws: a sampled-out span, a missing context, a span refusing attributes; flush and shutdown resolve', async () => {
    const sampledOut = new TracerProvider({
      sampler: new AlwaysOffSampler(),
      spanProcessors: [new PromptVersionSpanProcessor(), exporting],
    });
    withPromptVersion(prompt, () => sampledOut.getTracer('off').startSpan('dropped').end());
    expect(exported.getFinishedSpans()).toEqual([]);

    const processor = new PromptVersionSpanProcessor();
    const refusing = {
      setAttributes(): Span {
        throw new Error('ended');
      },
    };
    const carrying = withPromptVersion(prompt, () => context.active());
    expect(() => processor.onStart(refusing, carrying)).not.toThrow();
    expect(() => processor.onStart(refusing, undefined as unknown as Context)).not.toThrow();
    expect(() => processor.onStart(refusing, ROOT_CONTEXT)).not.toThrow();
    processor.onEnd();
    await expect(processor.forceFlush()).resolves.toBeUndefined();
    await expect(processor.shutdown()).resolves.toBeUndefined();
  });

  it('is a SpanProcessor of @opentelemetry/sdk-trace (checked by tsc)', () => {
    const processors: SpanProcessor[] = [new PromptVersionSpanProcessor()];
    expect(processors).toHaveLength(1);
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
  beforeEach(() => {
    bodies.length = 0;
  });

  type ExportRequest = {
    resourceSpans: {
      resource: { attributes: OtlpSpanInput['resourceAttributes'] };
      scopeSpans: { scope: { name: string }; spans: OtlpSpanInput['span'][] }[];
    }[];
  };
  /** Every span of every request received, as our ingestion maps it. */
  const mappedSpans = () =>
    (bodies as ExportRequest[]).flatMap((request) =>
      request.resourceSpans.flatMap((resourceSpans) =>
        resourceSpans.scopeSpans.flatMap((scopeSpans) =>
          scopeSpans.spans.map((span) => {
            const mapped = mapOtlpSpan({
              resourceAttributes: resourceSpans.resource.attributes,
              scopeName: scopeSpans.scope.name,
              span,
            });
            if (!mapped.ok) throw new Error(mapped.reason);
            return mapped.span;
          }),
        ),
      ),
    );

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
  it("withPromptVersion: the instrumentation's child chat span is stored as a model span with promptVersionId", async () => {
    const exported = new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'support-bot' }),
      spanProcessors: [
        new SimpleSpanProcessor({ exporter: new OTLPTraceExporter({ url }) }),
        new PromptVersionSpanProcessor(),
      ],
    });
    const tracer = exported.getTracer('support');
    await tracer.startActiveSpan('answer ticket', async (span) => {
      await withPromptVersion(prompt, () =>
        instrumentedChat(exported.getTracer('@opentelemetry/instrumentation-openai')),
      );
      span.end();
    });
    await exported.forceFlush();
    await exported.shutdown();

    const spans = mappedSpans();
    expect(spans).toHaveLength(2);
    const root = spans.find((s) => s.name === 'answer ticket');
    const chat = spans.find((s) => s.name === 'chat gpt-4o-mini');
    expect(root).toMatchObject({ kind: 'execution', service: 'support-bot' });
    expect(root?.promptVersionId ?? null).toBeNull();
    expect(chat).toMatchObject({
      kind: 'model',
      service: 'support-bot',
      parentSpanId: root?.spanId,
      provider: 'openai',
      model: 'gpt-4o-mini',
      inputTokens: 12,
      outputTokens: 3,
      promptVersionId: 'ver_0123456789abcdef',
    });
    const metadata = JSON.parse(chat?.metadataJson ?? '{}') as Record<string, unknown>;
    expect(metadata).toMatchObject({ 'promptloop.prompt.id': 'prm_support', 'promptloop.prompt.version': 7 });
  });
});
