import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseCleanJson } from '@/server/input-hygiene';
import { parseTraceBatch } from '@/server/traces/ingest-schema';
import { TraceExporter, type SpanSnapshot, type TraceExportError } from '@/sdk/src/index';

// The exporter refuses locally, alone, every span the server would refuse (sdk/src/span-rules.ts
// mirrors server/traces/ingest-schema.ts), so one bad span never gets its batch of good ones
// refused. The local stand-in for POST /api/v1/traces judges each batch with the server's own
// parsing (parseCleanJson, then parseTraceBatch) and answers 400 as the server would.

type Answer = { status: number; events: SpanSnapshot[]; issues: unknown };
let server: Server;
let url: string;
let answers: Answer[] = [];

// What the server decides for a batch body: its events, or the issues of its 400.
function judge(body: string): { ok: true; events: SpanSnapshot[] } | { ok: false; issues: unknown } {
  try {
    return { ok: true, events: parseTraceBatch(parseCleanJson(body, 'request body')).events as SpanSnapshot[] };
  } catch (error) {
    return { ok: false, issues: (error as { details?: unknown }).details ?? String(error) };
  }
}
const serverAccepts = (span: unknown) => judge(JSON.stringify({ version: 1, events: [span] })).ok;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const verdict = judge(Buffer.concat(chunks).toString('utf8'));
      answers.push(
        verdict.ok
          ? { status: 200, events: verdict.events, issues: null }
          : { status: 400, events: [], issues: verdict.issues },
      );
      res.writeHead(verdict.ok ? 200 : 400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          verdict.ok
            ? { accepted: verdict.events.length }
            : {
                error: {
                  code: 'invalid_request',
                  message: 'The trace batch is not valid.',
                  details: verdict.issues,
                  requestId: 'req_test',
                },
              },
        ),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  answers = [];
});

function exporter() {
  const errors: TraceExportError[] = [];
  const instance = new TraceExporter({
    url,
    ingestionKey: 'plt_test',
    flushIntervalMs: 10_000,
    onError: (error) => errors.push(error),
  });
  return { instance, errors };
}

const traceId = 'aaaaaaaaaaaaaaaabbbbbbbbbbbbbbbb';
const rootId = '1111111111111111';
const childId = '2222222222222222';
const startedAt = 1_750_000_000_000;
let serial = 0;
// A finished root span; each test case changes what it names.
function good(overrides: Record<string, unknown> = {}): SpanSnapshot {
  return {
    traceId,
    spanId: rootId,
    rootSpanId: rootId,
    revision: 0,
    name: `good ${serial++}`,
    service: 'checkout',
    kind: 'execution',
    status: 'success',
    startedAt,
    endedAt: startedAt + 5,
    ...overrides,
  } as SpanSnapshot;
}
const child = (overrides: Record<string, unknown> = {}) =>
  good({ spanId: childId, parentSpanId: rootId, kind: 'model', ...overrides });
const without = (field: string, overrides: Record<string, unknown> = {}) => {
  const span = good(overrides) as Record<string, unknown>;
  delete span[field];
  return span as SpanSnapshot;
};

const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
const keys = (count: number) =>
  JSON.stringify(Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, i])));
// JSON strings of exactly `bytes` UTF-8 bytes, in one- and two-byte characters.
const jsonOfBytes = (bytes: number) => JSON.stringify('a'.repeat(bytes - 2));
const jsonOfTwoByteChars = (bytes: number) => JSON.stringify('é'.repeat((bytes - 2) / 2));
const objectOfBytes = (bytes: number) => JSON.stringify({ a: 'a'.repeat(bytes - 8) });
const kib256 = 256 * 1024;
const kib16 = 16 * 1024;

// One span of each kind the server refuses, with the field the refusal names.
const bad: [string, string, SpanSnapshot][] = [
  ['endedAt while running', 'endedAt', good({ status: 'running' })],
  ['no endedAt once finished', 'endedAt', without('endedAt', { status: 'error' })],
  ['endedAt before startedAt', 'endedAt', good({ endedAt: startedAt - 1 })],
  ['a root span with parentSpanId', 'parentSpanId', good({ parentSpanId: childId })],
  ['a child span without parentSpanId', 'parentSpanId', child({ parentSpanId: undefined })],
  ['a span its own parent', 'parentSpanId', child({ parentSpanId: childId })],
  ['costUsdNanos without costSource', 'costUsdNanos', good({ costUsdNanos: 1200 })],
  ['costUsdNanos with costSource unavailable', 'costUsdNanos', good({ costUsdNanos: 1200, costSource: 'unavailable' })],
  ['an unknown field', 'durationMs', good({ durationMs: 5 })],
  ['a field in the wrong case', 'parentSpanID', child({ parentSpanID: rootId })],
  ['a missing required field', 'service', without('service')],
  ['traceId not a string', 'traceId', good({ traceId: [traceId] })],
  ['traceId in uppercase', 'traceId', good({ traceId: traceId.toUpperCase() })],
  ['revision above 1,000,000', 'revision', good({ revision: 1_000_001 })],
  ['startedAt beyond the last Unix millisecond', 'startedAt', good({ startedAt: 8.64e15 + 1 })],
  ['endedAt not an integer', 'endedAt', good({ endedAt: startedAt + 0.5 })],
  ['name of 201 characters', 'name', good({ name: 'n'.repeat(201) })],
  ['an empty service', 'service', good({ service: '' })],
  ['service of 101 characters', 'service', good({ service: 's'.repeat(101) })],
  ['model of 201 characters', 'model', good({ model: 'm'.repeat(201) })],
  ['sessionId of 201 astral characters', 'sessionId', good({ sessionId: '😀'.repeat(201) })],
  ['provider of 101 characters', 'provider', good({ provider: 'p'.repeat(101) })],
  ['promptVersionId of 101 characters', 'promptVersionId', good({ promptVersionId: 'v'.repeat(101) })],
  ['a negative token count', 'inputTokens', good({ inputTokens: -1 })],
  ['a fractional token count', 'outputTokens', good({ outputTokens: 1.5 })],
  ['a token count beyond safe integers', 'inputTokens', good({ inputTokens: 2 ** 53 })],
  ['a kind not in the enum', 'kind', good({ kind: 'llm' })],
  ['a costSource not in the enum', 'costSource', good({ costSource: 'guessed' })],
  ['omitted entries repeated', 'omitted', good({ omitted: ['input', 'input'] })],
  ['omitted with five entries', 'omitted', good({ omitted: ['input', 'output', 'error', 'metadata', 'input'] })],
  ['omitted with an unknown entry', 'omitted', good({ omitted: ['prompt'] })],
  ['a name holding U+0000', 'name', good({ name: 'a\u0000b' })],
  ['an endUserId holding a lone surrogate', 'endUserId', good({ endUserId: 'user \ud800' })],
  ['contentJson not JSON', 'contentJson', good({ contentJson: '{"input": ' })],
  ['contentJson not a string', 'contentJson', good({ contentJson: { input: 'hi' } })],
  ['contentJson over 256 KiB', 'contentJson', good({ contentJson: jsonOfBytes(kib256 + 1) })],
  ['contentJson over 256 KiB in UTF-8', 'contentJson', good({ contentJson: jsonOfTwoByteChars(kib256 + 2) })],
  ['contentJson 33 levels deep', 'contentJson', good({ contentJson: nested(33) })],
  ['contentJson escaping U+0000', 'contentJson', good({ contentJson: '{"input":"a\\u0000"}' })],
  ['contentJson escaping a lone surrogate in a key', 'contentJson', good({ contentJson: '{"\\udc00":1}' })],
  ['metadataJson an array', 'metadataJson', good({ metadataJson: '[1]' })],
  ['metadataJson null', 'metadataJson', good({ metadataJson: 'null' })],
  ['metadataJson not JSON', 'metadataJson', good({ metadataJson: "{'a': 1}" })],
  ['metadataJson with 65 keys', 'metadataJson', good({ metadataJson: keys(65) })],
  ['metadataJson over 16 KiB', 'metadataJson', good({ metadataJson: objectOfBytes(kib16 + 1) })],
  ['metadataJson 33 levels deep', 'metadataJson', good({ metadataJson: `{"a":${nested(32)}}` })],
];

describe('TraceExporter refuses locally, alone, what the server would refuse', () => {
  it('each kind of bad span is reported with its field, and the good spans around it are sent and accepted', async () => {
    const { instance, errors } = exporter();
    const sent: SpanSnapshot[] = [];
    for (const [, , span] of bad) {
      const before = good();
      sent.push(before);
      instance.export(before);
      instance.export(span);
    }
    expect(await instance.flush()).toBe(true);
    // Every request was accepted by the server's own rules, and it got exactly the good spans.
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(answers.flatMap((a) => a.events).map((e) => e.name)).toEqual(sent.map((s) => s.name));
    expect(errors.map((e) => [e.code, e.details.field])).toEqual(bad.map(([, field]) => ['invalid_span', field]));
    for (const [i, error] of errors.entries()) {
      const [what, field, span] = bad[i];
      expect(error.message, what).toContain(field);
      expect(error).toMatchObject({ droppedEvents: 1, status: 0, details: { spanId: span.spanId } });
      // And the server refuses it too, naming the same field.
      const verdict = judge(JSON.stringify({ version: 1, events: [span] }));
      expect(verdict.ok, what).toBe(false);
      expect(JSON.stringify(verdict), what).toContain(field);
    }
    expect(instance.stats()).toMatchObject({ droppedInvalid: bad.length, droppedRejected: 0, sent: bad.length });
    await instance.shutdown();
  });

  it('sends spans right at every limit, which the server accepts', async () => {
    const { instance, errors } = exporter();
    const edge = [
      good({ endedAt: startedAt }),
      without('endedAt', { status: 'running' }),
      good({ status: 'cancelled', parentSpanId: undefined, sessionId: undefined }),
      child(),
      good({ revision: 1_000_000, startedAt: 0, endedAt: 8.64e15 }),
      good({ name: '😀'.repeat(200), service: 's'.repeat(100), model: 'm'.repeat(200), endUserId: '' }),
      good({ costUsdNanos: 0, costSource: 'catalog_estimate', inputTokens: 2 ** 53 - 1, outputTokens: 0 }),
      good({ costUsdNanos: 7, costSource: 'provider_reported' }),
      good({ costSource: 'unavailable' }),
      good({ omitted: ['metadata', 'error', 'output', 'input'] }),
      good({ omitted: [] }),
      good({ contentJson: jsonOfBytes(kib256) }),
      good({ contentJson: jsonOfTwoByteChars(kib256) }),
      good({ contentJson: nested(32) }),
      good({ contentJson: '"\\ud83d\\ude00 \\u00e9"' }),
      good({ contentJson: 'null', metadataJson: '{}' }),
      good({ metadataJson: keys(64) }),
      good({ metadataJson: objectOfBytes(kib16) }),
      good({ metadataJson: `{"a":${nested(31)}}` }),
      good({ name: 'emoji 😀 and é' }),
    ];
    for (const span of edge) instance.export(span);
    expect(await instance.flush()).toBe(true);
    expect(errors.map((e) => e.message)).toEqual([]);
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(answers.flatMap((a) => a.events)).toHaveLength(edge.length);
    await instance.shutdown();
  });

  it('checks promptVersionId as sent, taken from the prompt option', async () => {
    const { instance, errors } = exporter();
    instance.export(good(), { prompt: { promptId: 'prm_1', versionId: 'v'.repeat(101), version: 1 } });
    instance.export(good(), { prompt: { promptId: 'prm_1', versionId: 'ver_1', version: 1 } });
    expect(await instance.flush()).toBe(true);
    expect(errors.map((e) => [e.code, e.details.field])).toEqual([['invalid_span', 'promptVersionId']]);
    expect(answers.flatMap((a) => a.events).map((e) => e.promptVersionId)).toEqual(['ver_1']);
    await instance.shutdown();
  });
});

// Values around each limit of the server, mostly valid so that whole spans often pass.
const mostly = <T>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 30, arbitrary: good as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: bad });
const optional = (arbitrary: fc.Arbitrary<unknown>) => fc.option(arbitrary, { nil: undefined, freq: 2 });
const ids = ['1111111111111111', '2222222222222222', 'abcdef0123456789'];
const id = mostly(fc.constantFrom(...ids), fc.constantFrom('0000000000000000', 'ABCDEF0123456789', '12345', 123, null));
const text = (max: number, min = 0) =>
  mostly(
    fc.oneof(
      fc.string({ minLength: min, maxLength: 8 }),
      fc.constantFrom('x'.repeat(max), '😀'.repeat(max), 'é'.repeat(max), '😀'.repeat(max - 1) + 'x'),
    ),
    fc.oneof(
      fc.constantFrom(
        'x'.repeat(max + 1),
        '😀'.repeat(max + 1),
        'a\u0000',
        '\ud83d',
        'x\ude00y',
        '\ude00\ud83d',
        ['x'],
        1,
        null,
      ),
      fc.string({ unit: 'binary', maxLength: 4 }),
      fc.constant(min > 0 ? '' : 'x'.repeat(max + 1)),
    ),
  );
const countValue = mostly(
  fc.oneof(fc.nat(), fc.constantFrom(0, Number.MAX_SAFE_INTEGER)),
  fc.constantFrom(-1, 1.5, 2 ** 53, Number.NaN, Infinity, '5', -0),
);
const unixMs = (around: number) =>
  mostly(
    fc.integer({ min: around - 2, max: around + 2 }),
    fc.constantFrom(-1, 0.5, 8.64e15, 8.64e15 + 1, '1750000000000', Number.NaN),
  );
const jsonValue = fc.oneof(
  { weight: 8, arbitrary: fc.json({ maxDepth: 3 }) },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      nested(32),
      nested(33),
      `{"a":${nested(31)}}`,
      `{"a":${nested(32)}}`,
      jsonOfBytes(kib16),
      jsonOfBytes(kib16 + 1),
      objectOfBytes(kib16),
      objectOfBytes(kib16 + 1),
      jsonOfBytes(kib256),
      jsonOfBytes(kib256 + 1),
      jsonOfTwoByteChars(kib256),
      jsonOfTwoByteChars(kib256 + 2),
      keys(64),
      keys(65),
      '{"a":"\\u0000"}',
      '{"\\ud800":1}',
      '["\\ud83d\\ude00"]',
      '"\\ude00"',
      '{"a":1,"a":2}',
      '{',
      '',
      ' {} ',
      'undefined',
      'NaN',
      '{"x":"\u0000"}',
      '"\ud800"',
    ),
  },
);
const omittedEntries = fc.constantFrom('input', 'output', 'error', 'metadata');
const omitted = mostly(
  fc.uniqueArray(omittedEntries, { maxLength: 4 }),
  fc.oneof(fc.array(fc.oneof(omittedEntries, fc.constant('prompt')), { maxLength: 6 }), fc.constant('input')),
);
const rarely = fc.integer({ min: 0, max: 9 }).map((n) => n === 0);

const generatedSpan = fc
  .record({
    traceId: mostly(fc.constant('0123456789abcdef0123456789abcdef'), fc.constantFrom('0'.repeat(32), 'ab', '')),
    spanId: id,
    root: fc.boolean(),
    otherId: id,
    breakTree: fc.oneof(
      { weight: 20, arbitrary: fc.constant('none') },
      { weight: 1, arbitrary: fc.constantFrom('parentOnRoot', 'noParent', 'self') },
    ),
    revision: mostly(
      fc.oneof(fc.nat({ max: 10 }), fc.constant(1_000_000)),
      fc.constantFrom(1_000_001, -1, 0.5, '0', null),
    ),
    name: text(200, 1),
    service: text(100, 1),
    kind: mostly(fc.constantFrom('execution', 'model', 'attempt', 'tool', 'retrieval', 'custom'), fc.constant('llm')),
    status: mostly(fc.constantFrom('running', 'success', 'error', 'cancelled'), fc.constantFrom('ok', 'Running')),
    startedAt: unixMs(startedAt),
    // Mostly a few milliseconds around startedAt (one before), else a value on its own.
    endedAt: fc.oneof(
      { weight: 20, arbitrary: fc.integer({ min: -1, max: 3 }).map((delta) => ({ delta })) },
      { weight: 1, arbitrary: unixMs(startedAt).map((value) => ({ value })) },
    ),
    flipEnded: rarely,
    costFromSource: fc.integer({ min: 0, max: 4 }).map((n) => n > 0),
    sessionId: optional(text(200)),
    endUserId: optional(text(200)),
    provider: optional(text(100)),
    promptVersionId: optional(text(100)),
    pricingVersion: optional(text(100)),
    model: optional(text(200)),
    inputTokens: optional(countValue),
    outputTokens: optional(countValue),
    costUsdNanos: optional(countValue),
    costSource: optional(
      mostly(fc.constantFrom('provider_reported', 'catalog_estimate', 'unavailable'), fc.constant('estimate')),
    ),
    contentJson: optional(
      mostly(
        jsonValue.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))),
        fc.nat(),
      ),
    ),
    metadataJson: optional(
      mostly(
        fc.oneof(fc.dictionary(fc.string({ maxLength: 3 }), fc.json({ maxDepth: 1 })).map(JSON.stringify), jsonValue),
        fc.constant({}),
      ),
    ),
    omitted: optional(omitted),
    extra: fc.oneof(
      { weight: 12, arbitrary: fc.constant(undefined) },
      {
        weight: 1,
        arbitrary: fc.constantFrom<Record<string, unknown>>(
          { durationMs: 1 },
          { Name: 'x' },
          { parentSpanID: '1111111111111111' },
          { spanId: undefined },
          { tags: [] },
          { '': 1 },
        ),
      },
    ),
  })
  .map(({ root, otherId, breakTree, flipEnded, costFromSource, extra, endedAt, ...fields }) => {
    const span: Record<string, unknown> = { ...fields };
    span.endedAt =
      'value' in endedAt
        ? endedAt.value
        : typeof fields.startedAt === 'number'
          ? fields.startedAt + endedAt.delta
          : startedAt;
    // A cost mostly comes with a source that allows it.
    if (costFromSource && fields.costUsdNanos !== undefined && fields.costSource !== 'provider_reported')
      span.costSource = 'catalog_estimate';
    span.rootSpanId = root ? fields.spanId : otherId;
    if (!root) span.parentSpanId = otherId;
    if (breakTree === 'parentOnRoot') span.parentSpanId = otherId;
    if (breakTree === 'noParent') delete span.parentSpanId;
    if (breakTree === 'self') span.parentSpanId = fields.spanId;
    // endedAt goes with the status, unless flipped.
    if ((fields.status === 'running') !== flipEnded) delete span.endedAt;
    return { ...span, ...extra } as unknown as SpanSnapshot;
  });

describe('span-rules mirrors the server (generated spans around every limit)', () => {
  it('the exporter sends exactly the spans the server accepts, and refuses the rest alone', async () => {
    const { instance, errors } = exporter();
    let accepted = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(generatedSpan, { minLength: 1, maxLength: 4 }), async (spans) => {
        answers = [];
        errors.length = 0;
        for (const span of spans) instance.export(span);
        expect(await instance.flush()).toBe(true);
        // Never a refused batch: whatever the SDK let through, the server's rules accept.
        expect(answers.filter((a) => a.status !== 200)).toEqual([]);
        // And exactly those: the SDK refuses only what the server refuses (each span judged alone).
        const expected = spans.filter(serverAccepts);
        expect(answers.flatMap((a) => a.events)).toEqual(expected.map((s) => JSON.parse(JSON.stringify(s))));
        expect(errors).toHaveLength(spans.length - expected.length);
        for (const error of errors) {
          expect(error.code).toBe('invalid_span');
          expect(typeof error.details.field).toBe('string');
          expect(error.message).toContain(error.details.field as string);
        }
        accepted += expected.length;
        refused += spans.length - expected.length;
      }),
      { numRuns: 400 },
    );
    // The generator reaches both sides of the limits.
    expect(accepted).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(100);
    await instance.shutdown();
  }, 120_000);
});
