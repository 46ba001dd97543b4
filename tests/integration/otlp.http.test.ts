import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createGzip, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDatabase, getDb, openDatabase, setDatabase } from '@/db/client';
import { newSecret } from '@/server/ids';
import { serveOtlp } from '@/server/api/otlp';
import { dispatch } from '@/server/api/router';
import { otlpSchema } from '@/server/otlp/schema';
import { signToken } from '../helpers/issuer';
import { newUser } from '../helpers/api';
import { closedPort } from '../helpers/net';
import { newIngestion, setReadOnly, storedSpans } from '../helpers/ingestion';
import { retrievalSetup } from '../helpers/retrieval';
import { hexId, jsonRequest, jsonSpan, nanos, protobufRequest } from '../helpers/otlp';

// POST /api/v1/otel/v1/traces over real HTTP: the OTLP handler behind a node:http listener, exactly as
// the production entry mounts it (server/main.ts hot-path table).

// Read when the first request is limited; each test file runs in its own process. Low enough for the
// 429 test to run out, high enough for every other test (each with its own key) never to.
process.env.INGEST_RATE_LIMIT_PER_SECOND = '20';

// Opening (and, on PGlite, migrating) the database can take longer than one test's timeout.
beforeAll(() => getDb().then(() => undefined), 120_000);

let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((req, res) => void serveOtlp(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const otlpPath = '/api/v1/otel/v1/traces';
const { response: responseType, status: statusType } = otlpSchema();

type Reply = { status: number; headers: IncomingHttpHeaders; raw: Buffer; body: any; reusedSocket: boolean };

// The answer's body decoded by its Content-Type: JSON, or protobuf (a google.rpc.Status for a failure,
// an ExportTraceServiceResponse for a 200, int64 as strings as in OTLP/JSON).
function decodeAnswer(status: number, contentType: string | undefined, raw: Buffer): unknown {
  if (contentType === 'application/x-protobuf') {
    const type = status === 200 ? responseType : statusType;
    return type.toObject(type.decode(raw), { longs: String });
  }
  return raw.length ? JSON.parse(raw.toString('utf8')) : null;
}

function post(options: {
  headers?: Record<string, string | number>;
  body?: string | Buffer;
  // Chunks written one by one without Content-Length (Transfer-Encoding: chunked).
  chunks?: Buffer[];
  method?: string;
  agent?: Agent;
  target?: number;
}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: options.target ?? port,
        method: options.method ?? 'POST',
        path: otlpPath,
        headers: options.headers,
        agent: options.agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          resolve({
            status: res.statusCode!,
            headers: res.headers,
            raw,
            body: decodeAnswer(res.statusCode!, res.headers['content-type'], raw),
            reusedSocket: req.reusedSocket,
          });
        });
      },
    );
    req.on('error', reject);
    if (options.chunks) {
      for (const chunk of options.chunks) req.write(chunk);
      req.end();
    } else {
      req.end(options.body);
    }
  });
}

const protobufHeaders = (secret: string, extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${secret}`,
  'content-type': 'application/x-protobuf',
  ...extra,
});
const jsonHeaders = (secret: string, extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${secret}`,
  'content-type': 'application/json',
  ...extra,
});

// What a failure carries, in each encoding.
function expectStatus(reply: Reply, code: number, encoding: 'json' | 'protobuf', message?: RegExp) {
  expect(reply.headers['content-type']).toBe(encoding === 'json' ? 'application/json' : 'application/x-protobuf');
  expect(reply.body).toEqual({ code, message: expect.any(String) });
  if (message) expect(reply.body.message).toMatch(message);
  expect(reply.headers['x-request-id']).toMatch(/^req_/);
}

async function gzipBomb(mib: number): Promise<Buffer> {
  const gzip = createGzip({ level: 9 });
  const chunks: Buffer[] = [];
  gzip.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise((resolve) => gzip.on('end', resolve));
  const zeros = Buffer.alloc(1024 * 1024);
  for (let i = 0; i < mib; i++) gzip.write(zeros);
  gzip.end();
  await ended;
  return Buffer.concat(chunks);
}

describe('OTLP export over HTTP: stored', () => {
  it('protobuf: 200 with an empty ExportTraceServiceResponse, spans stored as sent, keep-alive kept', async () => {
    const { secret, organizationId } = await newIngestion();
    const traceId = hexId(16);
    const root = jsonSpan({ traceId, name: 'invoke_agent support', attributes: [] });
    const child = jsonSpan({ traceId, parentSpanId: root.spanId, startTimeUnixNano: '1700000000000999999' });
    child.endTimeUnixNano = '1700000000500000000';
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const first = await post({
      headers: protobufHeaders(secret),
      body: protobufRequest(jsonRequest([root, child])),
      agent,
    });
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe('application/x-protobuf');
    expect(first.raw).toHaveLength(0);
    const second = await post({ headers: protobufHeaders(secret), body: protobufRequest(jsonRequest([])), agent });
    expect(second.status).toBe(200);
    expect(second.reusedSocket).toBe(true);
    agent.destroy();
    const stored = await storedSpans(organizationId);
    expect(stored).toHaveLength(2);
    expect(stored.find((s) => s.spanId === root.spanId)).toMatchObject({
      traceId,
      rootSpanId: root.spanId,
      parentSpanId: null,
      name: 'invoke_agent support',
      service: 'checkout',
      kind: 'execution',
    });
    expect(stored.find((s) => s.spanId === child.spanId)).toMatchObject({
      rootSpanId: root.spanId,
      parentSpanId: root.spanId,
      kind: 'model',
      model: 'gpt-4o',
      inputTokens: 12,
      status: 'success',
      startedAt: 1_700_000_000_000,
      endedAt: 1_700_000_000_500,
    });
  });

  it('JSON: 200 {}; upper-case ids are stored lowercase', async () => {
    const { secret, organizationId } = await newIngestion();
    const span = jsonSpan();
    const reply = await post({
      headers: jsonHeaders(secret, { 'content-type': 'application/json; charset=utf-8' }),
      body: JSON.stringify(
        jsonRequest([
          { ...span, traceId: String(span.traceId).toUpperCase(), spanId: String(span.spanId).toUpperCase() },
        ]),
      ),
    });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json');
    expect(reply.body).toEqual({});
    const [stored] = await storedSpans(organizationId);
    expect(stored).toMatchObject({ traceId: span.traceId, spanId: span.spanId });
  });

  it.each([
    ['protobuf', protobufHeaders, (r: object) => protobufRequest(r as never)],
    ['JSON', jsonHeaders, (r: object) => Buffer.from(JSON.stringify(r))],
  ])('%s with Content-Encoding: gzip, sent chunked without Content-Length', async (_title, headers, encode) => {
    const { secret, organizationId } = await newIngestion();
    const compressed = gzipSync(encode(jsonRequest([jsonSpan(), jsonSpan()])));
    const half = Math.floor(compressed.length / 2);
    const reply = await post({
      headers: headers(secret, { 'content-encoding': 'gzip' }),
      chunks: [compressed.subarray(0, half), compressed.subarray(half)],
    });
    expect(reply.status).toBe(200);
    expect(await storedSpans(organizationId)).toHaveLength(2);
  });

  it('a request without spans is 200 and stores nothing', async () => {
    const { secret, organizationId } = await newIngestion();
    for (const body of ['{}', '{"resourceSpans":[]}', '{"resourceSpans":[{"scopeSpans":[{"spans":[]}]}]}']) {
      const reply = await post({ headers: jsonHeaders(secret), body });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({});
    }
    expect((await post({ headers: protobufHeaders(secret), body: Buffer.alloc(0) })).status).toBe(200);
    expect(await storedSpans(organizationId)).toHaveLength(0);
  });
});

describe('OTLP export over HTTP: partial success', () => {
  // Four spans: two valid, then a bad trace id and a span that ends before it starts.
  function mixedRequest() {
    const start = Date.now() - 5000;
    const good = [jsonSpan(), jsonSpan()];
    const badId = jsonSpan({ traceId: 'not-a-trace-id' });
    const backwards = jsonSpan({ startTimeUnixNano: nanos(start + 1000), endTimeUnixNano: nanos(start) });
    return { good, request: jsonRequest([good[0], badId, good[1], backwards]) };
  }

  it('JSON: the valid spans are stored; partialSuccess counts the others and names the first problem', async () => {
    const { secret, organizationId } = await newIngestion();
    const { good, request: body } = mixedRequest();
    const reply = await post({ headers: jsonHeaders(secret), body: JSON.stringify(body) });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ partialSuccess: { rejectedSpans: '2', errorMessage: expect.any(String) } });
    expect(reply.body.partialSuccess.errorMessage).toMatch(/traceId/);
    const stored = await storedSpans(organizationId);
    expect(stored.map((s) => s.spanId).sort()).toEqual(good.map((s) => s.spanId).sort());
  });

  it('protobuf: the same, in an ExportTraceServiceResponse', async () => {
    const { secret, organizationId } = await newIngestion();
    const { request: body } = mixedRequest();
    const reply = await post({ headers: protobufHeaders(secret), body: protobufRequest(body) });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      partialSuccess: { rejectedSpans: '2', errorMessage: expect.stringMatching(/traceId/) },
    });
    expect(await storedSpans(organizationId)).toHaveLength(2);
  });

  it('U+0000, a lone surrogate and non-UTF-8 bytes reject only their spans, never the request', async () => {
    const { secret, organizationId } = await newIngestion();
    const text = JSON.stringify(
      jsonRequest([jsonSpan({ name: 'nul\u0000' }), jsonSpan({ name: 'lone \ud800' }), jsonSpan({ name: 'fine' })]),
    );
    const reply = await post({ headers: jsonHeaders(secret), body: text });
    expect(reply.status).toBe(200);
    expect(reply.body.partialSuccess.rejectedSpans).toBe('2');
    const protobuf = protobufRequest(jsonRequest([jsonSpan({ name: 'BADUTF8' }), jsonSpan({ name: 'fine too' })]));
    Buffer.from([0xff, 0xfe, 0xed, 0xa0, 0x80, 0x61, 0x62]).copy(protobuf, protobuf.indexOf('BADUTF8'));
    const second = await post({ headers: protobufHeaders(secret), body: protobuf });
    expect(second.status).toBe(200);
    expect(second.body.partialSuccess.rejectedSpans).toBe('1');
    expect((await storedSpans(organizationId)).map((s) => s.name).sort()).toEqual(['fine', 'fine too']);
  });
});

describe('OTLP export over HTTP: refusals, in the request’s encoding, nothing stored', () => {
  it('401 for a missing, unknown, retrieval or OAuth credential, with WWW-Authenticate', async () => {
    const user = await newUser();
    const retrieval = await retrievalSetup();
    const body = protobufRequest(jsonRequest([jsonSpan()]));
    for (const credential of [newSecret('plt_'), retrieval.secret, await signToken({ sub: user.sub }), user.token]) {
      const reply = await post({ headers: protobufHeaders(credential), body });
      expect(reply.status).toBe(401);
      expectStatus(reply, 16, 'protobuf', /ingestion key/);
      expect(reply.headers['www-authenticate']).toMatch(/^Bearer/);
    }
    const anonymous = await post({ headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(anonymous.status).toBe(401);
    expectStatus(anonymous, 16, 'json');
    expect(anonymous.headers['www-authenticate']).toBe('Bearer');
    // 401 comes before 415: the encoding is unknown, so the answer is JSON.
    const both = await post({ headers: { 'content-type': 'text/plain' }, body: 'x' });
    expect(both.status).toBe(401);
    expectStatus(both, 16, 'json');
  });

  it.each([
    ['text/plain', { 'content-type': 'text/plain' }, 'json'],
    ['a missing Content-Type', {}, 'json'],
    ['application/protobuf', { 'content-type': 'application/protobuf' }, 'json'],
    ['deflate', { 'content-type': 'application/x-protobuf', 'content-encoding': 'deflate' }, 'protobuf'],
    ['br', { 'content-type': 'application/json', 'content-encoding': 'br' }, 'json'],
    ['gzip, deflate', { 'content-type': 'application/json', 'content-encoding': 'gzip, deflate' }, 'json'],
  ] as const)('%s → 415', async (_title, headers, encoding) => {
    const { secret, organizationId } = await newIngestion();
    const reply = await post({
      headers: { authorization: `Bearer ${secret}`, ...headers },
      body: protobufRequest(jsonRequest([jsonSpan()])),
    });
    expect(reply.status).toBe(415);
    expectStatus(reply, 3, encoding);
    expect(await storedSpans(organizationId)).toHaveLength(0);
  });

  it('413 over 4 MiB on the wire, declared or chunked, and the connection is closed', async () => {
    const { secret, organizationId } = await newIngestion();
    const big = Buffer.alloc(4 * 1024 * 1024 + 1, 0x20);
    const declared = await post({ headers: jsonHeaders(secret), body: big });
    expect(declared.status).toBe(413);
    expectStatus(declared, 8, 'json', /4 MiB/);
    expect(declared.headers.connection).toBe('close');
    const chunked = await post({
      headers: protobufHeaders(secret),
      chunks: Array.from({ length: 65 }, () => Buffer.alloc(64 * 1024)),
    });
    expect(chunked.status).toBe(413);
    expectStatus(chunked, 8, 'protobuf');
    expect(chunked.headers.connection).toBe('close');
    // 415 is checked before the size: a big body of the wrong type is 415.
    const wrongType = await post({ headers: jsonHeaders(secret, { 'content-type': 'text/plain' }), body: big });
    expect(wrongType.status).toBe(415);
    expect(await storedSpans(organizationId)).toHaveLength(0);
  });

  it('413 for a gzip bomb: a few KiB that inflate past 32 MiB', async () => {
    const { secret, organizationId } = await newIngestion();
    const bomb = await gzipBomb(64);
    expect(bomb.length).toBeLessThan(100 * 1024);
    const reply = await post({ headers: protobufHeaders(secret, { 'content-encoding': 'gzip' }), body: bomb });
    expect(reply.status).toBe(413);
    expectStatus(reply, 8, 'protobuf', /32 MiB once decompressed/);
    expect(reply.headers.connection).toBe('close');
    expect(await storedSpans(organizationId)).toHaveLength(0);
  });

  // Under every size limit: about 32 KiB of gzip that inflates to 32 MB (under 32 MiB) of tiny values.
  it.each([
    [
      'protobuf, 16 million empty KeyValues in one span',
      protobufHeaders,
      'protobuf',
      () => {
        const attributes = Buffer.alloc(2 * 16_000_000, Buffer.from([0x4a, 0x00])); // Span.attributes = 9, empty
        const length = (n: number) => {
          const out = [];
          for (; n > 0x7f; n >>>= 7) out.push((n & 0x7f) | 0x80);
          return Buffer.from([...out, n]);
        };
        const field = (id: number, payload: Buffer) =>
          Buffer.concat([Buffer.from([(id << 3) | 2]), length(payload.length), payload]);
        return field(1, field(2, field(2, attributes)));
      },
    ],
    [
      'JSON, 10 million empty attributes',
      jsonHeaders,
      'json',
      () =>
        Buffer.from(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"attributes":[${'{},'.repeat(10_000_000)}{}]}]}]}]}`),
    ],
  ] as const)('413 for a bomb-like body: %s', async (_title, headers, encoding, body) => {
    const { secret, organizationId } = await newIngestion();
    const inflated = body();
    expect(inflated.length).toBeLessThanOrEqual(32 * 1024 * 1024);
    const wire = gzipSync(inflated, { level: 9 });
    expect(wire.length).toBeLessThan(64 * 1024);
    const reply = await post({ headers: headers(secret, { 'content-encoding': 'gzip' }), body: wire });
    expect(reply.status).toBe(413);
    expectStatus(reply, 8, encoding, /more than 1,000,000 values/);
    expect(reply.headers.connection).toBe('close');
    expect(await storedSpans(organizationId)).toHaveLength(0);
  });

  it.each([
    ['protobuf', protobufHeaders, (r: object) => protobufRequest(r as never)],
    ['JSON', jsonHeaders, (r: object) => Buffer.from(JSON.stringify(r))],
  ] as const)(
    '%s: a big ordinary request is no bomb: 1,000 spans of 40 attributes, a 20-attribute resource',
    async (_title, headers, encode) => {
      const { secret, organizationId } = await newIngestion();
      const attribute = (key: string, i: number) => ({ key, value: { stringValue: `${key} value ${i}` } });
      const spans = Array.from({ length: 1000 }, (_, i) =>
        jsonSpan({ attributes: Array.from({ length: 40 }, (_, a) => attribute(`app.attribute.${a}`, i)) }),
      );
      const request = {
        resourceSpans: [
          {
            resource: {
              attributes: Array.from({ length: 20 }, (_, a) =>
                attribute(a ? `resource.attribute.${a}` : 'service.name', 0),
              ),
            },
            scopeSpans: [{ scope: { name: 'big' }, spans }],
          },
        ],
      };
      const reply = await post({
        headers: headers(secret, { 'content-encoding': 'gzip' }),
        body: gzipSync(encode(request)),
      });
      expect(reply.status).toBe(200);
      expect(await storedSpans(organizationId)).toHaveLength(1000);
    },
    60_000,
  );

  it.each([
    ['protobuf', protobufHeaders, (r: object) => protobufRequest(r as never)],
    ['JSON', jsonHeaders, (r: object) => Buffer.from(JSON.stringify(r))],
  ] as const)(
    '%s: 10,000 spans are accepted, 10,001 are 413',
    async (title, headers, encode) => {
      const { secret, organizationId } = await newIngestion();
      const traceId = hexId(16);
      const start = Date.now() - 10_000;
      const spans = (count: number) =>
        Array.from({ length: count }, (_, i) =>
          jsonSpan({
            traceId,
            name: `s${i}`,
            attributes: [],
            startTimeUnixNano: nanos(start),
            endTimeUnixNano: nanos(start + 1),
          }),
        );
      const over = await post({
        headers: headers(secret, { 'content-encoding': 'gzip' }),
        body: gzipSync(encode(jsonRequest(spans(10_001)))),
      });
      expect(over.status).toBe(413);
      // The gzip is not what is refused: without compression too.
      expect((await post({ headers: headers(secret), body: encode(jsonRequest(spans(10_001))) })).status).toBe(413);
      expectStatus(over, 8, title === 'JSON' ? 'json' : 'protobuf', /10,000 spans/);
      expect(await storedSpans(organizationId)).toHaveLength(0);
      const exactly = await post({
        headers: headers(secret, { 'content-encoding': 'gzip' }),
        body: gzipSync(encode(jsonRequest(spans(10_000)))),
      });
      expect(exactly.status).toBe(200);
      expect(await storedSpans(organizationId)).toHaveLength(10_000);
    },
    120_000,
  );

  it.each([
    ['corrupt protobuf', protobufHeaders, Buffer.from([0x0a, 0x7f, 0x01]), 'protobuf'],
    ['JSON that does not parse', jsonHeaders, Buffer.from('{"resourceSpans": [}'), 'json'],
    ['a JSON array', jsonHeaders, Buffer.from('[]'), 'json'],
    ['a JSON string', jsonHeaders, Buffer.from('"spans"'), 'json'],
    ['JSON with a wrongly typed field', jsonHeaders, Buffer.from('{"resourceSpans": 5}'), 'json'],
    [
      'corrupt gzip',
      (s: string) => protobufHeaders(s, { 'content-encoding': 'gzip' }),
      Buffer.from('nope'),
      'protobuf',
    ],
    [
      'truncated gzip',
      (s: string) => jsonHeaders(s, { 'content-encoding': 'gzip' }),
      gzipSync('{}').subarray(0, 8),
      'json',
    ],
  ] as const)('%s → 400', async (_title, headers, body, encoding) => {
    const { secret, organizationId } = await newIngestion();
    const reply = await post({ headers: headers(secret), body });
    expect(reply.status).toBe(400);
    expectStatus(reply, 3, encoding);
    expect(await storedSpans(organizationId)).toHaveLength(0);
  });

  it('403 for a read-only organization, after the body was decoded', async () => {
    const { secret, organizationId } = await newIngestion();
    await setReadOnly(organizationId, true);
    const reply = await post({ headers: protobufHeaders(secret), body: protobufRequest(jsonRequest([jsonSpan()])) });
    expect(reply.status).toBe(403);
    expectStatus(reply, 7, 'protobuf', /read-only/);
    // 400 comes first.
    expect((await post({ headers: jsonHeaders(secret), body: '[' })).status).toBe(400);
    await setReadOnly(organizationId, false);
    expect((await post({ headers: jsonHeaders(secret), body: JSON.stringify(jsonRequest([jsonSpan()])) })).status).toBe(
      200,
    );
    expect(await storedSpans(organizationId)).toHaveLength(1);
  });

  it('429 with Retry-After once a key is over its rate (shared with native batches); other keys unaffected', async () => {
    const busy = await newIngestion();
    const quiet = await newIngestion();
    // A span of its own in each request (an identical resend would store nothing new).
    const body = () => JSON.stringify(jsonRequest([jsonSpan()]));
    const replies = await Promise.all(
      Array.from({ length: 60 }, () => post({ headers: jsonHeaders(busy.secret), body: body() })),
    );
    const limited = replies.filter((reply) => reply.status !== 200);
    expect(limited.length).toBeGreaterThan(0);
    for (const reply of limited) {
      expect(reply.status).toBe(429);
      expectStatus(reply, 8, 'json');
      expect(reply.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    }
    expect(await storedSpans(busy.organizationId)).toHaveLength(replies.length - limited.length);
    expect((await post({ headers: jsonHeaders(quiet.secret), body: body() })).status).toBe(200);
  });

  it('503 with Retry-After when the database cannot be reached, never a 500', async () => {
    const { secret } = await newIngestion();
    const real = getDatabase();
    await real;
    const broken = await openDatabase({ url: `postgres://postgres@127.0.0.1:${await closedPort()}/none`, max: 1 });
    setDatabase(Promise.resolve(broken));
    try {
      const reply = await post({ headers: protobufHeaders(secret), body: protobufRequest(jsonRequest([jsonSpan()])) });
      expect(reply.status).toBe(503);
      expectStatus(reply, 14, 'protobuf');
      expect(reply.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    } finally {
      setDatabase(real);
      await broken.close();
    }
  });

  it.each(['GET', 'PUT', 'DELETE'])('%s → 405 with Allow: POST', async (method) => {
    const reply = await post({ method, headers: { 'content-type': 'application/x-protobuf' } });
    expect(reply.status).toBe(405);
    expect(reply.headers.allow).toBe('POST');
    expectStatus(reply, 12, 'protobuf');
  });
});

describe("Next's catch-all (the same handler behind a Web Request)", () => {
  it('stores a gzip protobuf export and answers in protobuf; other methods get 405 in google.rpc.Status', async () => {
    const { secret, organizationId } = await newIngestion();
    // A start time of 0 is protobuf's unset: that span is rejected.
    const answer = await dispatch(
      new Request(`http://localhost:3999${otlpPath}`, {
        method: 'POST',
        headers: protobufHeaders(secret, { 'content-encoding': 'gzip' }),
        body: gzipSync(protobufRequest(jsonRequest([jsonSpan({ startTimeUnixNano: '0' })]))),
      }),
    );
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/x-protobuf');
    const decoded = responseType.toObject(responseType.decode(new Uint8Array(await answer.arrayBuffer())), {
      longs: String,
    });
    expect(decoded).toEqual({ partialSuccess: { rejectedSpans: '1', errorMessage: expect.stringMatching(/start/) } });
    const ok = await dispatch(
      new Request(`http://localhost:3999${otlpPath}/`, {
        method: 'POST',
        headers: jsonHeaders(secret),
        body: JSON.stringify(jsonRequest([jsonSpan()])),
      }),
    );
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({});
    expect(await storedSpans(organizationId)).toHaveLength(1);
    const get = await dispatch(new Request(`http://localhost:3999${otlpPath}`));
    expect(get.status).toBe(405);
    expect(await get.json()).toEqual({ code: 12, message: expect.any(String) });
  });
});

// The production entry itself: `--role=ingest` serves both ingestion paths and nothing else.
// Needs a Postgres server: an in-memory PGlite cannot be shared with another process.
describe.skipIf(!process.env.DATABASE_URL)('production entry --role=ingest', () => {
  let child: ChildProcess | undefined;
  let ingestPort = 0;

  beforeAll(async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    ingestPort = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const root = path.resolve(import.meta.dirname, '../..');
    child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', '--role=ingest'], {
      cwd: root,
      env: { ...process.env, PORT: String(ingestPort), LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    for (let i = 0; i < 300; i++) {
      const ready = await fetch(`http://127.0.0.1:${ingestPort}${otlpPath}`).then(
        () => true,
        () => false,
      );
      if (ready) return;
      if (child.exitCode !== null) throw new Error(`ingest role exited with ${child.exitCode}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error('ingest role did not start');
  }, 90_000);

  afterAll(async () => {
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  });

  it('stores an OTLP export; other paths are 404 naming both ingestion paths', async () => {
    const { secret, organizationId } = await newIngestion();
    const reply = await post({
      target: ingestPort,
      headers: protobufHeaders(secret),
      body: protobufRequest(jsonRequest([jsonSpan()])),
    });
    expect(reply.status).toBe(200);
    expect(await storedSpans(organizationId)).toHaveLength(1);
    const other = await fetch(`http://127.0.0.1:${ingestPort}/api/v1/organizations`);
    expect(other.status).toBe(404);
    const body = await other.json();
    expect(body.error.message).toBe('This process serves POST /api/v1/traces and POST /api/v1/otel/v1/traces only.');
    // The request id travels in the header too, as on every other answer.
    expect(other.headers.get('x-request-id')).toBe(body.error.requestId);
  });
});
