import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGzip, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { isAppError } from '@/server/errors';
import { gunzipBounded, inflateChunkBytes } from '@/server/http/inflate';
import { decodeJsonRequest, jsonValueCount, quoteLongIntegers } from '@/server/otlp/decode-json';
import { decodeProtobufRequest } from '@/server/otlp/decode-protobuf';
import { maxDecodedValues } from '@/server/otlp/limits';
import { resourceView } from '@/server/otlp/resource';
import { mapOtlpSpan } from '@/server/otlp/mapping';
import { exportAnswer, otlpEncodingOf, statusAnswer } from '@/server/otlp/response';
import { otlpSchema } from '@/server/otlp/schema';
import type { OtlpSpanInput } from '@/server/otlp/types';
import { jsonRequest, jsonSpan, protobufRequest, sdkSpans, type JsonRequest } from '../helpers/otlp';

const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
const spanId = '00f067aa0ba902b7';
const parentSpanId = '53995c3f42cd8ad8';
const now = Date.now();
// A time whose sub-millisecond part is .999999: a lossy double would round it up a millisecond.
const startNs = '1700000000000999999';
const endNs = '1700000001000000001';

const jsonBody = (request: unknown) => Buffer.from(JSON.stringify(request));

// Every field the decoders read, in OTLP/JSON form.
const fullRequest: JsonRequest = {
  resourceSpans: [
    {
      resource: {
        attributes: [
          { key: 'service.name', value: { stringValue: 'checkout' } },
          { key: 'host.cores', value: { intValue: '8' } },
        ],
        droppedAttributesCount: 0,
      },
      scopeSpans: [
        {
          scope: { name: 'openai-instrumentation', version: '0.1.0' },
          spans: [
            {
              traceId,
              spanId,
              parentSpanId,
              traceState: 'vendor=1',
              flags: 257,
              name: 'chat gpt-4o',
              kind: 3,
              startTimeUnixNano: startNs,
              endTimeUnixNano: endNs,
              attributes: [
                { key: 'text', value: { stringValue: 'hello' } },
                { key: 'flag', value: { boolValue: true } },
                { key: 'count', value: { intValue: '-42' } },
                { key: 'huge', value: { intValue: '9223372036854775807' } },
                { key: 'ratio', value: { doubleValue: 0.25 } },
                { key: 'raw', value: { bytesValue: Buffer.from('bytes!').toString('base64') } },
                {
                  key: 'list',
                  value: { arrayValue: { values: [{ stringValue: 'a' }, { intValue: '1' }, { arrayValue: {} }] } },
                },
                { key: 'map', value: { kvlistValue: { values: [{ key: 'inner', value: { boolValue: false } }] } } },
                { key: 'empty', value: {} },
              ],
              droppedAttributesCount: 0,
              events: [
                {
                  timeUnixNano: '1700000000500000000',
                  name: 'gen_ai.user.message',
                  attributes: [{ key: 'content', value: { stringValue: 'hi' } }],
                },
              ],
              links: [{ traceId, spanId: parentSpanId }],
              status: { code: 2, message: 'boom' },
            },
          ],
        },
      ],
    },
  ],
};

// What both decoders must produce for fullRequest (ids and bytes in each encoding's own form).
function expectedInput(
  ids: (hex: string) => unknown,
  bytes: (base64: string) => unknown,
  int: (text: string) => unknown,
) {
  return {
    resourceAttributes: [
      { key: 'service.name', value: { stringValue: 'checkout' } },
      { key: 'host.cores', value: { intValue: int('8') } },
    ],
    scopeName: 'openai-instrumentation',
    span: {
      traceId: ids(traceId),
      spanId: ids(spanId),
      parentSpanId: ids(parentSpanId),
      name: 'chat gpt-4o',
      kind: 3,
      startTimeUnixNano: int(startNs),
      endTimeUnixNano: int(endNs),
      attributes: [
        { key: 'text', value: { stringValue: 'hello' } },
        { key: 'flag', value: { boolValue: true } },
        { key: 'count', value: { intValue: int('-42') } },
        { key: 'huge', value: { intValue: int('9223372036854775807') } },
        { key: 'ratio', value: { doubleValue: 0.25 } },
        { key: 'raw', value: { bytesValue: bytes(Buffer.from('bytes!').toString('base64')) } },
        {
          key: 'list',
          value: {
            arrayValue: { values: [{ stringValue: 'a' }, { intValue: int('1') }, { arrayValue: { values: [] } }] },
          },
        },
        { key: 'map', value: { kvlistValue: { values: [{ key: 'inner', value: { boolValue: false } }] } } },
        { key: 'empty', value: undefined },
      ],
      events: [
        {
          name: 'gen_ai.user.message',
          timeUnixNano: int('1700000000500000000'),
          attributes: [{ key: 'content', value: { stringValue: 'hi' } }],
        },
      ],
      status: { code: 2, message: 'boom' },
    },
  };
}

function mapped(input: OtlpSpanInput, at = now) {
  const result = mapOtlpSpan(input, at);
  if (!result.ok) throw new Error(`rejected: ${result.reason}`);
  return result.span;
}

function rejection(input: OtlpSpanInput): string | undefined {
  const result = mapOtlpSpan(input, now);
  return result.ok ? undefined : result.reason;
}

// The status and message of what `decode` throws, or 'ok'.
function outcome(decode: () => unknown): 'ok' | { status: number; message: string } {
  try {
    decode();
    return 'ok';
  } catch (error) {
    if (!isAppError(error)) throw error;
    return { status: error.status, message: error.message };
  }
}

// protobuf wire helpers for hand-made corner cases: a varint, and a length-delimited field.
function varint(value: number): number[] {
  const out: number[] = [];
  while (value > 0x7f) {
    out.push((value & 0x7f) | 0x80);
    value >>>= 7;
  }
  out.push(value);
  return out;
}
const field = (id: number, bytes: Buffer | number[]) =>
  Buffer.concat([Buffer.from([...varint((id << 3) | 2), ...varint(bytes.length)]), Buffer.from(bytes)]);

describe('decodeProtobufRequest', () => {
  it('decodes every field of the official schema, 64-bit integers exactly (fixed64 as bigint)', () => {
    const [input, ...rest] = decodeProtobufRequest(protobufRequest(fullRequest));
    expect(rest).toEqual([]);
    expect(input).toEqual(
      expectedInput(
        (hex) => Buffer.from(hex, 'hex'),
        (base64) => Buffer.from(base64, 'base64'),
        (text) => BigInt(text),
      ),
    );
    expect(typeof input.span.startTimeUnixNano).toBe('bigint');
  });

  it('floors nanoseconds to milliseconds without rounding through a double', () => {
    const [input] = decodeProtobufRequest(protobufRequest(fullRequest));
    expect(mapped(input, 1_800_000_000_000)).toMatchObject({
      traceId,
      spanId,
      parentSpanId,
      startedAt: 1_700_000_000_000,
      endedAt: 1_700_000_001_000,
      status: 'error',
    });
  });

  it('keeps request order across resources and scopes, each span with its own resource and scope', () => {
    const ids = ['0000000000000001', '0000000000000002', '0000000000000003'];
    const request = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'a' } }] },
          scopeSpans: [
            { scope: { name: 's1' }, spans: [jsonSpan({ spanId: ids[0] })] },
            { spans: [jsonSpan({ spanId: ids[1] })] },
          ],
        },
        { scopeSpans: [{ scope: { name: 's3' }, spans: [jsonSpan({ spanId: ids[2] })] }] },
      ],
    };
    const inputs = decodeProtobufRequest(protobufRequest(request));
    expect(inputs.map((i) => Buffer.from(i.span.spanId as Uint8Array).toString('hex'))).toEqual(ids);
    expect(inputs.map((i) => i.scopeName)).toEqual(['s1', undefined, 's3']);
    expect(inputs.map((i) => mapped(i).service)).toEqual(['a', 'a', 'unknown_service']);
  });

  it('an empty body or an empty request has no spans', () => {
    expect(decodeProtobufRequest(Buffer.alloc(0))).toEqual([]);
    expect(decodeProtobufRequest(protobufRequest({ resourceSpans: [{ scopeSpans: [{ spans: [] }] }] }))).toEqual([]);
  });

  it('ignores unknown fields at every level', () => {
    const unknown = Buffer.from([...varint((99 << 3) | 0), 7, ...varint((98 << 3) | 2), 2, 0x61, 0x62]);
    const span = protobufRequest({ resourceSpans: [{ scopeSpans: [{ spans: [jsonSpan({ traceId, spanId })] }] }] });
    // resource_spans(1) → scope_spans(2) → spans(2): rebuild the nesting with unknown fields at each level.
    const [only] = decodeProtobufRequest(span);
    const spanBytes = Buffer.from(
      otlpSchema()
        .request.root.lookupType('opentelemetry.proto.trace.v1.Span')
        .encode(otlpSchema().request.root.lookupType('opentelemetry.proto.trace.v1.Span').fromObject(only.span))
        .finish(),
    );
    const body = Buffer.concat([
      unknown,
      field(
        1,
        Buffer.concat([unknown, field(2, Buffer.concat([field(2, Buffer.concat([spanBytes, unknown])), unknown]))]),
      ),
    ]);
    const [decoded] = decodeProtobufRequest(body);
    expect(mapped(decoded)).toEqual(mapped(only));
  });

  it('time 0 (proto3 for "not set") rejects the span; a zero parent means a root', () => {
    const [input] = decodeProtobufRequest(
      protobufRequest(jsonRequest([jsonSpan({ startTimeUnixNano: '0', parentSpanId: '0'.repeat(16) })])),
    );
    expect(rejection(input)).toMatch(/startTimeUnixNano is missing/);
    const [root] = decodeProtobufRequest(protobufRequest(jsonRequest([jsonSpan({ parentSpanId: '0'.repeat(16) })])));
    expect(mapped(root).parentSpanId).toBeUndefined();
  });

  it('keeps U+0000 and invalid UTF-8 inside strings, so only that span is rejected', () => {
    const request = jsonRequest([
      jsonSpan({ name: 'nul\u0000' }),
      jsonSpan({ name: 'REPLACE_ME' }),
      jsonSpan({ name: 'genuine \uFFFD stays' }),
    ]);
    const body = protobufRequest(request);
    // Overwrite the placeholder with bytes that are not UTF-8 (a lone surrogate as CESU-8, and 0xFF).
    const at = body.indexOf('REPLACE_ME');
    Buffer.from([0xed, 0xa0, 0x80, 0xff, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66]).copy(body, at);
    const inputs = decodeProtobufRequest(body);
    expect(inputs).toHaveLength(3);
    expect(rejection(inputs[0])).toMatch(/U\+0000/);
    expect(rejection(inputs[1])).toMatch(/unpaired surrogate/);
    expect(mapped(inputs[2]).name).toBe('genuine \uFFFD stays');
  });

  it('counts spans before decoding them: 10,000 pass, 10,001 are 413 (also as empty spans)', () => {
    const spans = (count: number) => Array.from({ length: count }, () => ({}));
    expect(decodeProtobufRequest(protobufRequest(jsonRequest(spans(10_000))))).toHaveLength(10_000);
    expect(outcome(() => decodeProtobufRequest(protobufRequest(jsonRequest(spans(10_001)))))).toMatchObject({
      status: 413,
    });
    // Spread over several resources and scopes.
    const split = {
      resourceSpans: [0, 1, 2].map(() => ({ scopeSpans: [0, 1].map(() => ({ spans: spans(1667) })) })),
    };
    expect(outcome(() => decodeProtobufRequest(protobufRequest(split)))).toMatchObject({ status: 413 });
  });

  it.each([
    ['a truncated body', () => protobufRequest(fullRequest).subarray(0, 40)],
    ['a length past the end', () => field(1, [0x12, 0x7f, 0x01])],
    ['an invalid wire type', () => Buffer.from([0x0f, 0x01])],
    ['field number 0', () => Buffer.from([0x00, 0x01])],
    ['a varint that never ends', () => Buffer.from([0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])],
    ['JSON sent as protobuf', () => jsonBody(fullRequest)],
  ])('%s is 400', (_title, body) => {
    expect(outcome(() => decodeProtobufRequest(body()))).toMatchObject({
      status: 400,
      message: expect.stringMatching(/^The body cannot be decoded as an OTLP ExportTraceServiceRequest/),
    });
  });

  it('a field of the wrong wire type is skipped like an unknown one', () => {
    expect(decodeProtobufRequest(Buffer.from([0x08, 0x01]))).toEqual([]);
  });

  it('nesting past protobufjs’s limit is 400, never a stack overflow', () => {
    // Made by hand: protobufjs's own encoder refuses such nesting. AnyValue.array_value = 5,
    // ArrayValue.values = 1, KeyValue.value = 2, Span.attributes = 9.
    let value = field(1, Buffer.from('deep'));
    for (let i = 0; i < 1000; i++) value = field(5, field(1, value));
    const body = field(1, field(2, field(2, field(9, Buffer.concat([field(1, Buffer.from('k')), field(2, value)])))));
    expect(outcome(() => decodeProtobufRequest(body))).toMatchObject({ status: 400 });
    let shallow: Record<string, unknown> = { stringValue: 'fine' };
    for (let i = 0; i < 40; i++) shallow = { arrayValue: { values: [shallow] } };
    const ok = protobufRequest(jsonRequest([jsonSpan({ attributes: [{ key: 'nested', value: shallow }] })]));
    expect(decodeProtobufRequest(ok)).toHaveLength(1);
  });
});

describe('decodeJsonRequest', () => {
  it('decodes every field; unknown fields (traceState, flags, links, versions) are ignored', () => {
    const [input, ...rest] = decodeJsonRequest(jsonBody(fullRequest));
    expect(rest).toEqual([]);
    expect(input).toEqual(
      expectedInput(
        (hex) => hex,
        (base64) => base64,
        (text) => text,
      ),
    );
  });

  it('maps to exactly what the protobuf encoding of the same request maps to', () => {
    const [fromJson] = decodeJsonRequest(jsonBody(fullRequest));
    const [fromProtobuf] = decodeProtobufRequest(protobufRequest(fullRequest));
    expect(mapped(fromJson, 1_800_000_000_000)).toEqual(mapped(fromProtobuf, 1_800_000_000_000));
  });

  it('takes ids in any case (stored lowercase) and 64-bit integers as strings or numbers, exactly', () => {
    const text = JSON.stringify(
      jsonRequest([
        jsonSpan({
          traceId: traceId.toUpperCase(),
          spanId: 'ABCDEF0123456789',
          startTimeUnixNano: 'START',
          endTimeUnixNano: 1_700_000_001_000_000_000,
          attributes: [
            { key: 'small', value: { intValue: 7 } },
            { key: 'big', value: { intValue: 'BIG' } },
          ],
        }),
      ]),
    )
      .replace('"START"', startNs) // a JSON number past 2^53, as some producers send it
      .replace('"BIG"', '9007199254740993');
    const [input] = decodeJsonRequest(Buffer.from(text));
    expect(input.span.startTimeUnixNano).toBe(startNs);
    const span = mapped(input, 1_800_000_000_000);
    expect(span).toMatchObject({ traceId, spanId: 'abcdef0123456789', startedAt: 1_700_000_000_000 });
    expect(span.endedAt).toBe(1_700_000_001_000);
    expect(JSON.parse(span.metadataJson!)).toMatchObject({ small: 7, big: '9007199254740993' });
  });

  it('takes enum names as well as integers', () => {
    const [input] = decodeJsonRequest(
      jsonBody(jsonRequest([jsonSpan({ kind: 'SPAN_KIND_SERVER', status: { code: 'STATUS_CODE_ERROR' } })])),
    );
    expect(input.span).toMatchObject({ kind: 2, status: { code: 2 } });
  });

  it('null is an unset field; a non-hex id rejects only its span', () => {
    const inputs = decodeJsonRequest(
      jsonBody(
        jsonRequest([jsonSpan({ parentSpanId: null, status: null, events: null }), jsonSpan({ spanId: 'xyz' })]),
      ),
    );
    expect(mapped(inputs[0]).parentSpanId).toBeUndefined();
    expect(rejection(inputs[1])).toMatch(/spanId/);
  });

  it('keeps \\u0000, lone surrogates and non-UTF-8 bytes inside strings: only that span is rejected', () => {
    const text = JSON.stringify(
      jsonRequest([
        jsonSpan({ name: 'nul\u0000' }),
        jsonSpan({ name: 'lone \ud800' }),
        jsonSpan({ name: 'BADBYTES' }),
        jsonSpan({ name: 'genuine \uFFFD' }),
      ]),
    );
    const body = Buffer.from(text);
    Buffer.from([0xc3, 0x28, 0xff, 0xfe, 0x61, 0x62, 0x63, 0x64]).copy(body, body.indexOf('BADBYTES'));
    const inputs = decodeJsonRequest(body);
    expect(rejection(inputs[0])).toMatch(/U\+0000/);
    expect(rejection(inputs[1])).toMatch(/unpaired surrogate/);
    expect(rejection(inputs[2])).toMatch(/unpaired surrogate/);
    // Only bodies with bytes that are not UTF-8 lose their U+FFFD; this one had such bytes.
    expect(rejection(inputs[3])).toMatch(/unpaired surrogate/);
    const clean = decodeJsonRequest(jsonBody(jsonRequest([jsonSpan({ name: 'genuine \uFFFD' })])));
    expect(mapped(clean[0]).name).toBe('genuine \uFFFD');
  });

  it('accepts a UTF-8 byte order mark, and no spans at all', () => {
    expect(decodeJsonRequest(Buffer.from(`\uFEFF${JSON.stringify(jsonRequest([jsonSpan()]))}`))).toHaveLength(1);
    expect(decodeJsonRequest(Buffer.from('{}'))).toEqual([]);
    expect(decodeJsonRequest(Buffer.from('{"resourceSpans":[]}'))).toEqual([]);
  });

  it.each([
    ['not JSON', '{"resourceSpans": ['],
    ['an empty body', ''],
    ['an array', '[]'],
    ['a string', '"resourceSpans"'],
    ['null', 'null'],
    ['a number', '42'],
    ['resourceSpans not an array', '{"resourceSpans": {}}'],
    ['a span that is not an object', '{"resourceSpans":[{"scopeSpans":[{"spans":[42]}]}]}'],
    ['a name that is not a string', JSON.stringify(jsonRequest([jsonSpan({ name: 5 })]))],
    ['a time that is not an integer', JSON.stringify(jsonRequest([jsonSpan({ startTimeUnixNano: '1.5' })]))],
    ['an unknown enum name', JSON.stringify(jsonRequest([jsonSpan({ kind: 'SPAN_KIND_BOGUS' })]))],
    ['attributes not an array', JSON.stringify(jsonRequest([jsonSpan({ attributes: { a: 1 } })]))],
    [
      'a boolValue that is a string',
      JSON.stringify(jsonRequest([jsonSpan({ attributes: [{ key: 'a', value: { boolValue: 'yes' } }] })])),
    ],
    ['a raw non-UTF-8 byte outside strings', Buffer.from([0x7b, 0xff, 0x7d])],
  ])('%s is 400', (_title, body) => {
    expect(outcome(() => decodeJsonRequest(Buffer.isBuffer(body) ? body : Buffer.from(body)))).toMatchObject({
      status: 400,
    });
  });

  it('names the path of a wrongly typed field', () => {
    const body = jsonBody(jsonRequest([jsonSpan(), jsonSpan({ status: { code: 2, message: 7 } })]));
    expect(outcome(() => decodeJsonRequest(body))).toMatchObject({
      message: expect.stringContaining('resourceSpans[0].scopeSpans[0].spans[1].status.message must be a string'),
    });
  });

  it('a body nested past 64 levels is 400 (input hygiene), counted on the text, unknown fields too', () => {
    const nest = (levels: number) => {
      let value: Record<string, unknown> = { stringValue: 'x' };
      for (let i = 0; i < levels; i++) value = { arrayValue: { values: [value] } };
      return value;
    };
    // The attribute's value object is level 10 of the request; each array value adds 3 levels.
    const body = (levels: number) =>
      jsonBody(jsonRequest([jsonSpan({ attributes: [{ key: 'n', value: nest(levels) }] })]));
    expect(decodeJsonRequest(body(18))).toHaveLength(1);
    expect(outcome(() => decodeJsonRequest(body(19)))).toMatchObject({
      status: 400,
      message: expect.stringMatching(/nests more than 64 levels/),
    });
    // Scanned, never parsed or walked recursively: no stack is at risk at any depth.
    const deepUnknown = `{"somethingElse":${'['.repeat(100_000)}${']'.repeat(100_000)},"resourceSpans":[]}`;
    expect(outcome(() => decodeJsonRequest(Buffer.from(deepUnknown)))).toMatchObject({
      status: 400,
      message: expect.stringMatching(/nests more than 64 levels/),
    });
  });

  it('10,001 spans are 413, counted over every resource and scope', () => {
    const spans = (count: number) => Array.from({ length: count }, () => ({}));
    expect(decodeJsonRequest(jsonBody(jsonRequest(spans(10_000))))).toHaveLength(10_000);
    const split = { resourceSpans: [{ scopeSpans: [{ spans: spans(5000) }, { spans: spans(5001) }] }] };
    expect(outcome(() => decodeJsonRequest(jsonBody(split)))).toMatchObject({ status: 413 });
  });
});

// The fields protobufjs's generated decoders read from `body` as a message of `type`: one tag each.
// Strings are read without the UTF-8 check (the fuzzed ones need not be UTF-8; only the count matters).
class FieldCountingReader extends protobuf.BufferReader {
  fields = 0;
  override tag(): number {
    this.fields++;
    return super.tag();
  }
  override stringVerify(): string {
    return this.string();
  }
}
function fieldsRead(body: Buffer, type = otlpSchema().request): number {
  const reader = new FieldCountingReader(body);
  type.decode(reader);
  return reader.fields;
}

// What jsonValueCount counts, from the parsed value: each array or object is max(items, 1).
function containerItems(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const items = Array.isArray(value) ? value : Object.values(value);
  return Math.max(items.length, 1) + items.reduce((sum: number, item) => sum + containerItems(item), 0);
}

const tooManyValues = {
  status: 413,
  message: expect.stringMatching(/^The request decodes into more than [\d,]+ values/),
};
const realCap = new RegExp(`more than ${maxDecodedValues.toLocaleString('en-US')} values`);

// A span (fields 1 to 3 of the request, resource spans and scope spans) holding `payload`.
const inOneSpan = (payload: Buffer) => field(1, field(2, field(2, payload)));
// `count` copies of `bytes`, cheaply.
const repeated = (bytes: number[], count: number) => Buffer.alloc(bytes.length * count, Buffer.from(bytes));
const jsonInOneSpan = (spanFields: string) => `{"resourceSpans":[{"scopeSpans":[{"spans":[{${spanFields}}]}]}]}`;

describe('the bound on decoded values (413 before a bomb-like body becomes objects)', () => {
  it(`the real cap, ${maxDecodedValues.toLocaleString('en-US')}, with bodies that are cheap to decode`, () => {
    // Unknown varint fields (15) of the request: counted like any field, skipped by the decoder.
    expect(decodeProtobufRequest(repeated([0x78, 0x00], maxDecodedValues))).toEqual([]);
    expect(outcome(() => decodeProtobufRequest(repeated([0x78, 0x00], maxDecodedValues + 1)))).toMatchObject({
      ...tooManyValues,
      message: expect.stringMatching(realCap),
    });
    // {"resourceSpans":[],"x":[0,0,…]}: `{`, `[`, `,`, `[` and a comma before every zero but the first.
    const zeros = (count: number) => Buffer.from(`{"resourceSpans":[],"x":[${'0,'.repeat(count - 1)}0]}`);
    expect(decodeJsonRequest(zeros(maxDecodedValues - 3))).toEqual([]);
    expect(outcome(() => decodeJsonRequest(zeros(maxDecodedValues - 2)))).toMatchObject({
      ...tooManyValues,
      message: expect.stringMatching(realCap),
    });
  });

  it.each([
    ['16 million empty KeyValues in one span', () => inOneSpan(repeated([0x4a, 0x00], 16_000_000))],
    [
      'one attribute whose arrayValue holds 16 million empty AnyValues',
      () =>
        inOneSpan(field(9, Buffer.concat([field(1, [0x61]), field(2, field(5, repeated([0x0a, 0x00], 16_000_000)))]))),
    ],
    ['16 million empty events in one span', () => inOneSpan(repeated([0x5a, 0x00], 16_000_000))],
    ['16 million empty ResourceSpans (no span at all)', () => repeated([0x0a, 0x00], 16_000_000)],
    [
      'one AnyValue with its intValue repeated 16 million times (a Long each)',
      () => inOneSpan(field(9, field(2, repeated([0x18, 0x01], 16_000_000)))),
    ],
  ])('protobuf, 32 MB of %s: 413', (_title, body) => {
    expect(outcome(() => decodeProtobufRequest(body()))).toMatchObject({
      ...tooManyValues,
      message: expect.stringMatching(realCap),
    });
  });

  it.each([
    ['10 million empty attributes', () => jsonInOneSpan(`"attributes":[${'{},'.repeat(10_000_000)}{}]`)],
    [
      'an arrayValue of 10 million empty values',
      () =>
        jsonInOneSpan(`"attributes":[{"key":"a","value":{"arrayValue":{"values":[${'{},'.repeat(10_000_000)}{}]}}}]`),
    ],
    ['16 million zeros in an unknown field', () => `{"x":[${'0,'.repeat(16_000_000)}0]}`],
    [
      '10 million empty events, after a byte order mark',
      () => `\uFEFF${jsonInOneSpan(`"events":[${'{},'.repeat(10_000_000)}{}]`)}`,
    ],
  ])('JSON, 30 MB of %s: 413', (_title, text) => {
    expect(outcome(() => decodeJsonRequest(Buffer.from(text())))).toMatchObject({
      ...tooManyValues,
      message: expect.stringMatching(realCap),
    });
  });

  it('protobuf: at exactly its count a body decodes, one under it is 413 (fullRequest, one span)', () => {
    const body = protobufRequest(fullRequest);
    const count = fieldsRead(body);
    expect(decodeProtobufRequest(body, count)).toHaveLength(1);
    expect(outcome(() => decodeProtobufRequest(body, count - 1))).toMatchObject(tooManyValues);
  });

  it('JSON: at exactly its count a body decodes, one under it is 413 (fullRequest, one span)', () => {
    const text = JSON.stringify(fullRequest, null, 2);
    const count = jsonValueCount(text);
    expect(count).toBe(containerItems(fullRequest));
    expect(decodeJsonRequest(Buffer.from(text), count)).toHaveLength(1);
    expect(outcome(() => decodeJsonRequest(Buffer.from(text), count - 1))).toMatchObject(tooManyValues);
  });

  // Three string attributes: 12 in both encodings (four per attribute).
  const resourceAttributes = ['service.name', 'host.name', 'k8s.pod.name'].map((key) => ({
    key,
    value: { stringValue: `${key} value` },
  }));
  const fiveSpans = {
    resourceSpans: [
      {
        resource: { attributes: resourceAttributes },
        scopeSpans: [{ spans: [jsonSpan(), jsonSpan()] }, { spans: [jsonSpan(), jsonSpan(), jsonSpan()] }],
      },
    ],
  };

  it('protobuf: a resource counts once, however many spans it describes', () => {
    const body = protobufRequest(fiveSpans);
    const count = fieldsRead(body);
    expect(decodeProtobufRequest(body, count)).toHaveLength(5);
    expect(outcome(() => decodeProtobufRequest(body, count - 1))).toMatchObject(tooManyValues);
  });

  it('JSON: the same', () => {
    const text = JSON.stringify(fiveSpans);
    expect(jsonValueCount(JSON.stringify(resourceAttributes))).toBe(12);
    const count = jsonValueCount(text);
    expect(decodeJsonRequest(Buffer.from(text), count)).toHaveLength(5);
    expect(outcome(() => decodeJsonRequest(Buffer.from(text), count - 1))).toMatchObject(tooManyValues);
  });

  it('the spans of a resource share one decoded attribute list, read once by the mapping: 400 attributes × 10,000 spans', () => {
    const attributes = Array.from({ length: 400 }, (_, i) => ({ key: `r${i}`, value: { stringValue: 'v' } }));
    const request = {
      resourceSpans: [
        { resource: { attributes }, scopeSpans: [{ spans: Array.from({ length: 10_000 }, () => jsonSpan()) }] },
      ],
    };
    for (const inputs of [decodeProtobufRequest(protobufRequest(request)), decodeJsonRequest(jsonBody(request))]) {
      expect(inputs).toHaveLength(10_000);
      expect(new Set(inputs.map((input) => input.resourceAttributes)).size).toBe(1);
      const view = resourceView(inputs[0].resourceAttributes);
      expect(resourceView(inputs[9_999].resourceAttributes)).toBe(view);
      expect(view.entries).toHaveLength(400);
      const first = mapOtlpSpan(inputs[0], now);
      const last = mapOtlpSpan(inputs[9_999], now);
      expect(first.ok && last.ok).toBe(true);
      // The metadata keeps 64 keys (3 of them the span's own), the rest is omitted.
      if (first.ok) expect(Object.keys(JSON.parse(first.span.metadataJson!))).toHaveLength(64);
      if (first.ok) expect(first.span.omitted).toContain('metadata');
    }
  });
});

describe('jsonValueCount', () => {
  it.each([
    ['{}', 1],
    ['[]', 1],
    ['[1,2,3]', 3],
    ['[{},{}]', 4],
    ['{"key":"k","value":{"stringValue":"v"}}', 3],
    ['"{[,]}"', 0],
    ['{"a":"x\\\\","b":"[,{\\"}"}', 2],
    [' [ 1 , [ ] , { "a" : [ 2 , 3 ] } ] ', 7],
    ['"unterminated [,{', 0],
  ])('%s → %i', (text, count) => {
    expect(jsonValueCount(text)).toBe(count);
  });

  it('counts what the parsed value holds: max(items, 1) per array or object, strings stepped over', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(undefined, 2), (value, indent) => {
        expect(jsonValueCount(JSON.stringify(value, null, indent) ?? '')).toBe(containerItems(value));
      }),
      { numRuns: 500 },
    );
  });

  it('stops counting once past the limit', () => {
    expect(jsonValueCount('[' + '0,'.repeat(1000) + '0]', 10)).toBe(11);
  });
});

describe('quoteLongIntegers', () => {
  it.each([
    ['{"a":1700000000000999999}', '{"a":"1700000000000999999"}'],
    ['[-9223372036854775808, 1]', '["-9223372036854775808", 1]'],
    ['{"a":"1700000000000999999"}', '{"a":"1700000000000999999"}'],
    ['{"a":"x\\",1700000000000999999"}', '{"a":"x\\",1700000000000999999"}'],
    ['{"a":1.7000000000009999e18}', '{"a":1.7000000000009999e18}'],
    ['{"a":1.23456789012345678901}', '{"a":1.23456789012345678901}'],
    ['{"a":12345678901234567E2}', '{"a":12345678901234567E2}'],
    ['{"a":123456789012345}', '{"a":123456789012345}'],
  ])('%s → %s', (text, expected) => {
    expect(quoteLongIntegers(text)).toBe(expected);
    expect(JSON.parse(quoteLongIntegers(text))).toBeDefined();
  });
});

describe('decoding what the official OpenTelemetry JS exporters send', () => {
  let server: Server;
  let url: string;
  const captured: { contentType: string; encoding?: string; body: Buffer }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        captured.push({
          contentType: req.headers['content-type'] ?? '',
          encoding: req.headers['content-encoding'],
          body: Buffer.concat(chunks),
        });
        res.writeHead(200, { 'content-type': req.headers['content-type'] ?? '' }).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it.each([
    ['protobuf', ProtobufExporter],
    ['JSON', JsonExporter],
  ])('%s: the same spans, ids, times and attributes the SDK recorded', async (_title, Exporter) => {
    const spans = sdkSpans();
    const exporter = new Exporter({ url, compression: 'gzip' as never });
    const result = await new Promise<{ code: number }>((resolve) => exporter.export(spans, resolve));
    await exporter.shutdown();
    expect(result.code).toBe(0);
    const request = captured.pop()!;
    expect(request.encoding).toBe('gzip');
    const body = await gunzipBounded(request.body, 32 * 1024 * 1024);
    const inputs =
      otlpEncodingOf(request.contentType) === 'protobuf' ? decodeProtobufRequest(body) : decodeJsonRequest(body);
    const decoded = inputs.map((input) => mapped(input));
    expect(decoded.map((span) => span.spanId)).toEqual(spans.map((span) => span.spanContext().spanId));
    for (const [i, span] of spans.entries()) {
      const startNanos = BigInt(span.startTime[0]) * 1_000_000_000n + BigInt(span.startTime[1]);
      expect(decoded[i]).toMatchObject({
        traceId: span.spanContext().traceId,
        name: span.name,
        service: 'otel-test-service',
        startedAt: Number(startNanos / 1_000_000n),
      });
    }
    const chat = decoded.find((span) => span.name === 'chat gpt-4o')!;
    expect(chat).toMatchObject({
      kind: 'model',
      status: 'error',
      provider: 'openai',
      model: 'gpt-4o-2024-08-06',
      inputTokens: 120,
      outputTokens: 42,
      parentSpanId: spans.find((span) => span.name.startsWith('invoke_agent'))!.spanContext().spanId,
    });
    expect(JSON.parse(chat.contentJson!).error).toMatchObject({ type: 'TimeoutError', message: 'upstream timed out' });
    expect(JSON.parse(chat.metadataJson!)).toMatchObject({
      'otel.scope.name': 'promptloop-tests',
      'otel.span.kind': 'CLIENT',
      'gen_ai.request.temperature': 0.2,
      'http.retries': [1, 2],
      'resource.deployment.environment.name': 'test',
    });
  });
});

describe('fuzzing the decoders', () => {
  const anyValue = fc.letrec<{ value: Record<string, unknown> }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.record({ stringValue: fc.string({ unit: 'binary' }) }),
      fc.record({ boolValue: fc.boolean() }),
      fc.record({ intValue: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String) }),
      fc
        .record({ doubleValue: fc.double() })
        .map((v) => (Number.isFinite(v.doubleValue) ? v : { doubleValue: String(v.doubleValue) })),
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
  const attributes = fc.array(fc.record({ key: fc.string({ unit: 'binary' }), value: anyValue }), { maxLength: 6 });

  // Either spans, or the decoder's own refusal (400, or 413 for too many spans); never anything else.
  const decodesOrRefuses = (decode: () => OtlpSpanInput[]) => {
    let inputs: OtlpSpanInput[];
    try {
      inputs = decode();
    } catch (error) {
      expect(isAppError(error) && [400, 413].includes(error.status), String(error)).toBe(true);
      return;
    }
    for (const input of inputs) mapOtlpSpan(input, now); // never throws either
  };

  it('arbitrary attribute values (lone surrogates, U+0000, extreme numbers) decode in both encodings and map or reject', () => {
    fc.assert(
      fc.property(attributes, attributes, fc.string({ unit: 'binary' }), (spanAttributes, resourceAttributes, name) => {
        const request = {
          resourceSpans: [
            {
              resource: { attributes: resourceAttributes },
              scopeSpans: [{ spans: [jsonSpan({ name, attributes: spanAttributes })] }],
            },
          ],
        };
        const fromJson = decodeJsonRequest(jsonBody(request));
        const fromProtobuf = decodeProtobufRequest(protobufRequest(request));
        expect(fromJson).toHaveLength(1);
        expect(fromProtobuf).toHaveLength(1);
        const json = mapOtlpSpan(fromJson[0], now);
        const protobuf = mapOtlpSpan(fromProtobuf[0], now);
        // Both encodings agree on whether the span is stored.
        expect(protobuf.ok).toBe(json.ok);
      }),
      { numRuns: 300 },
    );
  });

  it('random, truncated and bit-flipped protobuf bodies: spans or 400/413, nothing else', () => {
    const valid = protobufRequest(fullRequest);
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 512 }).map((bytes) => Buffer.from(bytes)),
          fc.nat({ max: valid.length }).map((end) => valid.subarray(0, end)),
          fc.tuple(fc.nat({ max: valid.length - 1 }), fc.integer({ min: 0, max: 255 })).map(([at, byte]) => {
            const copy = Buffer.from(valid);
            copy[at] ^= byte;
            return copy;
          }),
        ),
        (body) => decodesOrRefuses(() => decodeProtobufRequest(body)),
      ),
      { numRuns: 1000 },
    );
  });

  it('protobuf: the count before decoding is exactly the fields protobufjs then reads (one span, unknown fields too)', () => {
    fc.assert(
      fc.property(attributes, attributes, fc.nat({ max: 4 }), (spanAttributes, resourceAttributes, unknown) => {
        const request = {
          resourceSpans: [
            {
              resource: { attributes: resourceAttributes },
              scopeSpans: [{ spans: [jsonSpan({ attributes: spanAttributes })] }],
            },
          ],
        };
        // Unknown fields of the request (15, a varint) are read too, and skipped.
        const body = Buffer.concat([protobufRequest(request), repeated([0x78, 0x01], unknown)]);
        const count = fieldsRead(body);
        expect(decodeProtobufRequest(body, count)).toHaveLength(1);
        expect(outcome(() => decodeProtobufRequest(body, count - 1))).toMatchObject({ status: 413 });
      }),
      { numRuns: 300 },
    );
  });

  it('random JSON values and mangled JSON text: spans or 400/413, nothing else', () => {
    const valid = JSON.stringify(fullRequest);
    fc.assert(
      fc.property(
        fc.oneof(
          fc.jsonValue().map((value) => JSON.stringify(value)),
          fc.jsonValue().map((value) => JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [value] }] }] })),
          fc.nat({ max: valid.length }).map((end) => valid.slice(0, end)),
          fc
            .tuple(fc.nat({ max: valid.length - 1 }), fc.string({ maxLength: 3 }))
            .map(([at, text]) => valid.slice(0, at) + text + valid.slice(at + 1)),
        ),
        (text) => decodesOrRefuses(() => decodeJsonRequest(Buffer.from(text))),
      ),
      { numRuns: 1000 },
    );
  });
});

describe('answers', () => {
  const { response, status } = otlpSchema();

  it('200: empty when every span was stored, partialSuccess otherwise (int64 as a string in JSON)', () => {
    expect(exportAnswer('json', { rejectedSpans: 0 })).toEqual({
      contentType: 'application/json',
      body: Buffer.from('{}'),
    });
    expect(JSON.parse(exportAnswer('json', { rejectedSpans: 2, errorMessage: 'why' }).body.toString())).toEqual({
      partialSuccess: { rejectedSpans: '2', errorMessage: 'why' },
    });
    expect(exportAnswer('protobuf', { rejectedSpans: 0 }).body).toHaveLength(0);
    const answer = exportAnswer('protobuf', { rejectedSpans: 3, errorMessage: 'why' });
    expect(answer.contentType).toBe('application/x-protobuf');
    const decoded = response.toObject(response.decode(answer.body), { longs: String });
    expect(decoded).toEqual({ partialSuccess: { rejectedSpans: '3', errorMessage: 'why' } });
  });

  it('failures: google.rpc.Status with the gRPC code of the HTTP status', () => {
    expect(JSON.parse(statusAnswer('json', 401, 'no key').body.toString())).toEqual({ code: 16, message: 'no key' });
    const decoded = status.toObject(status.decode(statusAnswer('protobuf', 429, 'slow down').body));
    expect(decoded).toEqual({ code: 8, message: 'slow down' });
  });

  it.each([
    ['application/x-protobuf', 'protobuf'],
    ['Application/JSON; charset=utf-8', 'json'],
    [' application/json ', 'json'],
    ['application/protobuf', null],
    ['text/plain', null],
    [undefined, null],
  ])('Content-Type %s → %s', (type, encoding) => {
    expect(otlpEncodingOf(type)).toBe(encoding);
  });
});

describe('gunzipBounded', () => {
  // gzip of `mib` MiB of zeros, made in chunks: about 1 KiB of gzip per MiB.
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

  it('inflates gzip, several members too', async () => {
    expect((await gunzipBounded(Buffer.concat([gzipSync('ab'), gzipSync('cd')]), 100)).toString()).toBe('abcd');
  });

  it('stops a gzip bomb at the limit: 413, and no more than one chunk past the limit was ever inflated', async () => {
    const bomb = await gzipBomb(1024);
    expect(bomb.length).toBeLessThan(2 * 1024 * 1024);
    const limit = 32 * 1024 * 1024;
    const error = await gunzipBounded(bomb, limit).catch((e: unknown) => e);
    expect(isAppError(error) && error.status).toBe(413);
    const { inflatedBytes } = (error as { details: { inflatedBytes: number } }).details;
    expect(inflatedBytes).toBeGreaterThan(limit);
    expect(inflatedBytes).toBeLessThanOrEqual(limit + inflateChunkBytes);
  });

  it.each([
    ['not gzip', Buffer.from('plain text')],
    ['empty', Buffer.alloc(0)],
    ['truncated', gzipSync('hello world').subarray(0, 12)],
    ['trailing garbage', Buffer.concat([gzipSync('ab'), Buffer.from('junk')])],
  ])('%s is 400', async (_title, body) => {
    const error = await gunzipBounded(body, 1024).catch((e: unknown) => e);
    expect(isAppError(error) && error.status).toBe(400);
  });
});
