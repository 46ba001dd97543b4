import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { serveOtlp } from '@/server/api/otlp';
import { otlpSchema } from '@/server/otlp/schema';
import { newIngestion, storedSpans } from '../helpers/ingestion';
import { hexId, jsonRequest, jsonSpan, nanos, protobufRequest } from '../helpers/otlp';

// Fuzzing POST /api/v1/otel/v1/traces end to end, storage included: whatever attribute values, ids,
// times and strings a request carries, the answer is a 200 whose partialSuccess accounts for every
// span that was not stored, or a 4xx for a body that is not a request; never a 5xx. The decoders'
// own fuzzing (tests/unit/otlp-decode.test.ts) covers many more bodies without the database.

beforeAll(() => getDb().then(() => undefined), 120_000);

let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((req, res) => void serveOtlp(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/otel/v1/traces`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const anyValue = fc.letrec<{ value: Record<string, unknown> }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ stringValue: fc.string({ unit: 'binary', maxLength: 40 }) }),
    fc.record({ stringValue: fc.json() }), // JSON text: the content attributes parse it
    fc.record({ boolValue: fc.boolean() }),
    fc.record({ intValue: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String) }),
    fc.record({ doubleValue: fc.double({ noNaN: true, noDefaultInfinity: true }) }),
    fc.record({ bytesValue: fc.uint8Array({ maxLength: 16 }).map((b) => Buffer.from(b).toString('base64')) }),
    fc.record({ arrayValue: fc.record({ values: fc.array(tie('value'), { maxLength: 4 }) }) }),
    fc.record({
      kvlistValue: fc.record({
        values: fc.array(fc.record({ key: fc.string({ unit: 'binary' }), value: tie('value') }), { maxLength: 4 }),
      }),
    }),
    fc.constant({}),
  ),
})).value;

// The keys the mapping reads, so that the fuzzed values reach every rule (content, tokens, kinds …).
const mappedKeys = [
  'gen_ai.operation.name',
  'gen_ai.request.model',
  'gen_ai.response.model',
  'gen_ai.usage.input_tokens',
  'gen_ai.usage.output_tokens',
  'gen_ai.input.messages',
  'gen_ai.output.messages',
  'gen_ai.system_instructions',
  'openinference.span.kind',
  'llm.input_messages.0.message.role',
  'llm.input_messages.0.message.content',
  'input.value',
  'output.value',
  'ai.prompt.messages',
  'ai.response.text',
  'session.id',
  'enduser.id',
  'promptloop.prompt.version_id',
];
const attribute = fc.record({
  key: fc.oneof(fc.constantFrom(...mappedKeys), fc.string({ unit: 'binary', maxLength: 30 })),
  value: anyValue,
});

const now = Date.now();
// Ids and times that are sometimes wrong (wrong length, all zeros, not hex, end before start, far ahead).
const id = (bytes: 8 | 16) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant(null).map(() => hexId(bytes)) },
    fc.constant('0'.repeat(bytes * 2)),
    fc.constant('zz'.repeat(bytes)),
    fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), maxLength: 40 }),
  );
const span = fc
  .record({
    traceId: id(16),
    spanId: id(8),
    parent: fc.option(id(8), { nil: undefined }),
    startOffset: fc.integer({ min: -60_000, max: 10 * 60_000 }),
    duration: fc.integer({ min: -1000, max: 5000 }),
    name: fc.string({ unit: 'binary', maxLength: 30 }),
    attributes: fc.array(attribute, { maxLength: 6 }),
    events: fc.array(
      fc.record({
        name: fc.constantFrom('gen_ai.user.message', 'gen_ai.choice', 'exception', 'other'),
        attributes: fc.array(attribute, { maxLength: 3 }),
      }),
      { maxLength: 2 },
    ),
    status: fc.integer({ min: 0, max: 3 }),
  })
  .map((s) => {
    const start = now - s.startOffset;
    return jsonSpan({
      traceId: s.traceId,
      spanId: s.spanId,
      parentSpanId: s.parent,
      name: s.name,
      startTimeUnixNano: nanos(start),
      endTimeUnixNano: nanos(start + s.duration),
      attributes: s.attributes,
      events: s.events.map((e) => ({ ...e, timeUnixNano: nanos(start) })),
      status: { code: s.status },
    });
  });

type Answer = { status: number; rejectedSpans: number };

async function send(secret: string, spans: Record<string, unknown>[], encoding: 'json' | 'protobuf', gzip: boolean) {
  const request = jsonRequest(spans);
  const raw = encoding === 'json' ? Buffer.from(JSON.stringify(request)) : protobufRequest(request);
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${secret}`,
      'content-type': encoding === 'json' ? 'application/json' : 'application/x-protobuf',
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
    },
    body: new Uint8Array(gzip ? gzipSync(raw) : raw),
  });
  const body = Buffer.from(await response.arrayBuffer());
  const answer: Answer = { status: response.status, rejectedSpans: 0 };
  if (response.status === 200) {
    const decoded =
      encoding === 'json'
        ? (JSON.parse(body.toString()) as { partialSuccess?: { rejectedSpans?: string } })
        : (otlpSchema().response.toObject(otlpSchema().response.decode(body), { longs: String }) as {
            partialSuccess?: { rejectedSpans?: string };
          });
    answer.rejectedSpans = Number(decoded.partialSuccess?.rejectedSpans ?? 0);
  }
  return answer;
}

describe('OTLP export fuzzed end to end', () => {
  it('arbitrary spans: always 200, every span either stored or counted in partialSuccess', async () => {
    const { secret, organizationId } = await newIngestion();
    let stored = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(span, { minLength: 1, maxLength: 8 }),
        fc.constantFrom('json' as const, 'protobuf' as const),
        fc.boolean(),
        async (spans, encoding, gzip) => {
          const answer = await send(secret, spans, encoding, gzip);
          expect(answer.status).toBe(200);
          const now = (await storedSpans(organizationId)).length;
          // Every span of the request is either new in the store or rejected (fresh valid ids never
          // collide, so a stored span is always a new row; a rejected one adds none).
          expect(now - stored + answer.rejectedSpans).toBe(spans.length);
          stored = now;
        },
      ),
      { numRuns: 60 },
    );
    // The generator's valid spans do reach the store (the property is not all rejections).
    expect(stored).toBeGreaterThan(20);
  }, 120_000);

  it('arbitrary bytes as a body: a 4xx, never a 5xx, and nothing stored', async () => {
    const { secret, organizationId } = await newIngestion();
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 300 }),
        fc.constantFrom('application/json', 'application/x-protobuf'),
        async (bytes, type) => {
          const response = await fetch(url, {
            method: 'POST',
            headers: { authorization: `Bearer ${secret}`, 'content-type': type },
            body: new Uint8Array(bytes),
          });
          await response.arrayBuffer();
          expect(response.status === 200 || (response.status >= 400 && response.status < 500)).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
    // Random bytes that happen to decode hold no valid span (its ids and times would have to be right).
    expect(await storedSpans(organizationId)).toHaveLength(0);
  }, 120_000);
});
