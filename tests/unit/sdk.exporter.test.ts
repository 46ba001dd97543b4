import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newSpanId, newTraceId, TraceExporter, type SpanSnapshot, type TraceExportError } from '@/sdk/src/index';

// A local stand-in for POST /api/v1/traces: answers from a script, records every request.
type Received = { path: string | undefined; headers: IncomingHttpHeaders; body: string; at: number };
type Reply = (res: ServerResponse, req: IncomingMessage) => void;

let server: Server;
let url: string;
let received: Received[] = [];
let script: Reply[] = [];
const ok: Reply = (res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end('{"accepted":1}');
};
const status =
  (code: number, errorCode: string, headers: Record<string, string> = {}): Reply =>
  (res) => {
    res.writeHead(code, { 'content-type': 'application/json', ...headers });
    res.end(
      JSON.stringify({ error: { code: errorCode, message: `answered ${code}`, details: {}, requestId: 'req_test' } }),
    );
  };
const hangUp: Reply = (_res, req) => req.socket.destroy();

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({
        path: req.url,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      });
      (script.shift() ?? ok)(res, req);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

// Any rejection nobody handled fails the test that caused it.
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeEach(() => {
  received = [];
  script = [];
  unhandled.length = 0;
  process.on('unhandledRejection', onUnhandled);
});
afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

function span(overrides: Partial<SpanSnapshot> = {}): SpanSnapshot {
  const spanId = overrides.spanId ?? newSpanId();
  return {
    traceId: newTraceId(),
    spanId,
    rootSpanId: spanId,
    revision: 0,
    name: 'handle request',
    service: 'checkout',
    kind: 'execution',
    status: 'running',
    startedAt: Date.now(),
    ...overrides,
  };
}

function exporter(options: Partial<ConstructorParameters<typeof TraceExporter>[0]> = {}) {
  const errors: TraceExportError[] = [];
  const instance = new TraceExporter({
    url,
    ingestionKey: 'plt_test',
    initialBackoffMs: 20,
    maxBackoffMs: 200,
    flushIntervalMs: 50,
    onError: (error) => errors.push(error),
    ...options,
  });
  return { instance, errors };
}

const events = (r: Received) => (JSON.parse(r.body) as { version: number; events: SpanSnapshot[] }).events;

describe('TraceExporter batching', () => {
  it('sends batches of at most 50 events in export order, as JSON with the ingestion key', async () => {
    const { instance, errors } = exporter();
    const spans = Array.from({ length: 120 }, (_, i) => span({ name: `span ${i}` }));
    for (const s of spans) instance.export(s);
    expect(await instance.flush()).toBe(true);
    expect(received.map((r) => events(r).length)).toEqual([50, 50, 20]);
    expect(received.flatMap(events).map((e) => e.name)).toEqual(spans.map((s) => s.name));
    for (const r of received) {
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers.authorization).toBe('Bearer plt_test');
      expect(JSON.parse(r.body).version).toBe(1);
    }
    expect(errors).toEqual([]);
    expect(instance.stats()).toMatchObject({ exported: 120, sent: 120, pending: 0, requests: 3 });
    await instance.shutdown();
  });

  it('posts to {url}/api/v1/traces, also when url already ends in /api/v1 or /api/v1/traces', async () => {
    for (const suffix of ['', '/', '/api/v1', '/api/v1/', '/api/v1/traces', '/api/v1/traces/']) {
      received = [];
      const { instance, errors } = exporter({ url: url + suffix });
      instance.export(span());
      expect(await instance.flush()).toBe(true);
      expect(
        received.map((r) => r.path),
        suffix,
      ).toEqual(['/api/v1/traces']);
      expect(errors).toEqual([]);
    }
  });

  it('keeps every request body within 1 MiB, measured in UTF-8 bytes', async () => {
    const { instance } = exporter();
    // ~278 KB of JSON per span (content and metadata within the server's 256 KiB and 16 KiB), half of
    // it two-byte characters: four spans never fit in one batch.
    const content = JSON.stringify({ text: 'é'.repeat(65_000) + 'a'.repeat(131_000) });
    const metadata = JSON.stringify({ note: 'é'.repeat(8_000) });
    for (let i = 0; i < 7; i++)
      instance.export(span({ contentJson: content, metadataJson: metadata, name: `big ${i}` }));
    expect(await instance.flush()).toBe(true);
    expect(received.length).toBeGreaterThanOrEqual(3);
    for (const r of received) expect(Buffer.byteLength(r.body)).toBeLessThanOrEqual(1024 * 1024);
    expect(received.flatMap(events).map((e) => e.name)).toEqual(Array.from({ length: 7 }, (_, i) => `big ${i}`));
    await instance.shutdown();
  });

  it('sends a partial batch once the flush interval passes, without flush()', async () => {
    const { instance } = exporter({ flushIntervalMs: 30 });
    instance.export(span());
    instance.export(span());
    expect(received).toHaveLength(0);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(received.map((r) => events(r).length)).toEqual([2]);
    await instance.shutdown();
  });

  it('sends the snapshot as it was at export time (later mutation does not leak in)', async () => {
    const { instance } = exporter();
    const s = span({ name: 'before' });
    instance.export(s);
    s.name = 'after';
    s.revision = 7;
    await instance.flush();
    expect(events(received[0])[0]).toMatchObject({ name: 'before', revision: 0 });
    await instance.shutdown();
  });

  it('keeps the revisions of one span in order across batches', async () => {
    const { instance } = exporter({ maxBatchEvents: 3 });
    const root = span();
    for (let revision = 0; revision < 10; revision++)
      instance.export({
        ...root,
        revision,
        status: revision === 9 ? 'success' : 'running',
        ...(revision === 9 ? { endedAt: Date.now() } : {}),
      });
    await instance.flush();
    expect(received.map((r) => events(r).length)).toEqual([3, 3, 3, 1]);
    expect(received.flatMap(events).map((e) => e.revision)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    await instance.shutdown();
  });
});

describe('TraceExporter retries', () => {
  it('resends the identical batch after 429 and 503, no sooner than Retry-After', async () => {
    script = [status(429, 'rate_limited', { 'retry-after': '1' }), status(503, 'unavailable', { 'retry-after': '1' })];
    const { instance, errors } = exporter();
    for (let i = 0; i < 5; i++) instance.export(span({ revision: i }));
    expect(await instance.flush()).toBe(true);
    expect(received).toHaveLength(3);
    expect(new Set(received.map((r) => r.body)).size).toBe(1);
    expect(received[1].at - received[0].at).toBeGreaterThanOrEqual(950);
    expect(received[2].at - received[1].at).toBeGreaterThanOrEqual(950);
    expect(events(received[2]).map((e) => e.revision)).toEqual([0, 1, 2, 3, 4]);
    expect(errors).toEqual([]);
    expect(instance.stats()).toMatchObject({ sent: 5, retries: 2, requests: 3 });
    await instance.shutdown();
  });

  it('resends the identical batch after a network error, with growing backoff', async () => {
    script = [hangUp, hangUp, status(502, 'internal')];
    const { instance, errors } = exporter({ initialBackoffMs: 40, maxBackoffMs: 1000 });
    instance.export(span());
    instance.export(span());
    expect(await instance.flush()).toBe(true);
    expect(received).toHaveLength(4);
    expect(new Set(received.map((r) => r.body)).size).toBe(1);
    // Equal jitter: the n-th wait is at least half of 40·2^(n-1).
    expect(received[1].at - received[0].at).toBeGreaterThanOrEqual(19);
    expect(received[3].at - received[2].at).toBeGreaterThanOrEqual(79);
    expect(errors).toEqual([]);
    await instance.shutdown();
  });

  it('a 4xx other than 429 drops that batch, reports it, and the next batch still goes', async () => {
    script = [status(400, 'invalid_request')];
    const { instance, errors } = exporter({ maxBatchEvents: 2 });
    for (let i = 0; i < 4; i++) instance.export(span({ name: `s${i}` }));
    expect(await instance.flush()).toBe(true);
    expect(received.map((r) => events(r).map((e) => e.name))).toEqual([
      ['s0', 's1'],
      ['s2', 's3'],
    ]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'invalid_request', status: 400, droppedEvents: 2, requestId: 'req_test' });
    expect(instance.stats()).toMatchObject({ sent: 2, droppedRejected: 2 });
    await instance.shutdown();
  });

  it('gives up after maxAttempts and reports the batch', async () => {
    script = [
      status(503, 'unavailable', { 'retry-after': '0' }),
      status(503, 'unavailable', { 'retry-after': '0' }),
      status(503, 'unavailable', { 'retry-after': '0' }),
    ];
    const { instance, errors } = exporter({ maxAttempts: 3 });
    instance.export(span());
    expect(await instance.flush()).toBe(true);
    expect(received).toHaveLength(3);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'unavailable', status: 503, droppedEvents: 1 });
    await instance.shutdown();
  });
});

describe('TraceExporter never blocks or throws into the application', () => {
  it('drops the oldest snapshots when the queue is full, counts and reports them', async () => {
    // The first batch is held by a 429 while 25 more spans arrive in a queue of 10.
    script = [status(429, 'rate_limited', { 'retry-after': '1' })];
    const { instance, errors } = exporter({ maxQueueEvents: 10, maxBatchEvents: 1 });
    instance.export(span({ name: 'first' }));
    await instance.flush(100);
    for (let i = 0; i < 25; i++) instance.export(span({ name: `n${i}` }));
    expect(instance.stats()).toMatchObject({ droppedQueueFull: 15, pending: 11 });
    expect(await instance.flush()).toBe(true);
    const names = received.flatMap(events).map((e) => e.name);
    expect(names.slice(0, 2)).toEqual(['first', 'first']);
    expect(names.slice(2)).toEqual(Array.from({ length: 10 }, (_, i) => `n${i + 15}`));
    expect(errors.filter((e) => e.code === 'queue_full').reduce((n, e) => n + e.droppedEvents, 0)).toBe(15);
    await instance.shutdown();
  });

  it('export returns at once and never throws, even for invalid or unserializable spans', async () => {
    const { instance, errors } = exporter();
    const cyclic = span() as SpanSnapshot & { self?: unknown };
    cyclic.self = cyclic;
    const started = performance.now();
    expect(() => instance.export({ ...span(), traceId: 'nope' })).not.toThrow();
    expect(() => instance.export(cyclic)).not.toThrow();
    expect(() => instance.export(null as unknown as SpanSnapshot)).not.toThrow();
    expect(() => instance.export(span({ contentJson: 'x'.repeat(1024 * 1024) }))).not.toThrow();
    expect(performance.now() - started).toBeLessThan(200);
    expect(errors.map((e) => e.code)).toEqual(['invalid_span', 'invalid_span', 'invalid_span', 'invalid_span']);
    expect(instance.stats().droppedInvalid).toBe(4);
    await instance.flush();
    expect(received).toHaveLength(0);
    await instance.shutdown();
  });

  it('an onError callback that throws does not break the exporter', async () => {
    script = [status(400, 'invalid_request')];
    const instance = new TraceExporter({
      url,
      ingestionKey: 'plt_test',
      maxBatchEvents: 1,
      onError: () => {
        throw new Error('callback bug');
      },
    });
    instance.export(span());
    instance.export(span());
    expect(await instance.flush()).toBe(true);
    expect(instance.stats()).toMatchObject({ sent: 1, droppedRejected: 1 });
    await instance.shutdown();
  });

  it('shutdown with the server down gives up after its timeout, reports what was lost, and refuses later exports', async () => {
    const { instance, errors } = exporter({ url: 'http://127.0.0.1:9', initialBackoffMs: 50 });
    instance.export(span());
    instance.export(span());
    const started = Date.now();
    expect(await instance.shutdown(300)).toBe(false);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(errors.at(-1)).toMatchObject({ code: 'shutdown', droppedEvents: 2 });
    instance.export(span());
    expect(errors.at(-1)).toMatchObject({ code: 'shutdown', droppedEvents: 1 });
    expect(instance.stats()).toMatchObject({ droppedShutdown: 3, pending: 0 });
  });

  it('flush with nothing queued resolves at once', async () => {
    const { instance } = exporter();
    expect(await instance.flush(10)).toBe(true);
    await instance.shutdown();
  });
});
