import { isUtf8 } from 'node:buffer';
import protobuf from 'protobufjs';
import { isAppError } from '../errors';
import { maxDecodedValues, maxSpansPerRequest, tooManySpans, tooManyValues, undecodable } from './limits';
import { otlpSchema } from './schema';
import type { AnyValue, KeyValue, OtlpEvent, OtlpSpanInput } from './types';

// OTLP/HTTP protobuf: an ExportTraceServiceRequest decoded by protobufjs with the official schema,
// straight from the body's Buffer, then reshaped into OtlpSpanInput in request order.

// What protobufjs's decoded messages hold (the fields read here). Unset scalars read as their
// proto3 default from the prototype; unset messages as null.
type PbLong = { low: number; high: number; unsigned: boolean } | number;
type PbAnyValue = {
  value?: string; // the name of the oneof member that is set
  stringValue: string;
  boolValue: boolean;
  intValue: PbLong;
  doubleValue: number;
  arrayValue: { values: PbAnyValue[] } | null;
  kvlistValue: { values: PbKeyValue[] } | null;
  bytesValue: Uint8Array;
};
type PbKeyValue = { key: string; value: PbAnyValue | null };
type PbEvent = { timeUnixNano: PbLong; name: string; attributes: PbKeyValue[] };
type PbSpan = {
  traceId: Uint8Array;
  spanId: Uint8Array;
  parentSpanId: Uint8Array;
  name: string;
  kind: number;
  startTimeUnixNano: PbLong;
  endTimeUnixNano: PbLong;
  attributes: PbKeyValue[];
  events: PbEvent[];
  status: { code: number; message: string } | null;
};
type PbRequest = {
  resourceSpans: {
    resource: { attributes: PbKeyValue[] } | null;
    scopeSpans: { scope: { name: string } | null; spans: PbSpan[] }[];
  }[];
};

// proto3 strings must be UTF-8, and protobufjs refuses the whole message otherwise. A string that is
// not (an SDK that encoded a lone surrogate, say) must cost only its span, as U+0000 and lone
// surrogates do (API.md): its replacement characters become lone surrogates, which the mapping
// rejects the span for. A valid string's U+FFFD is its own and stays.
class SpanTolerantReader extends protobuf.BufferReader {
  override stringVerify(): string {
    const length = this.uint32();
    const start = this.pos;
    const end = start + length;
    if (end > this.len) throw new RangeError(`index out of range: ${start} + ${length} > ${this.len}`);
    this.pos = end;
    const buffer = this.buf as Buffer;
    const text = buffer.toString('utf8', start, end);
    if (!text.includes('\uFFFD') || isUtf8(buffer.subarray(start, end))) return text;
    return text.replaceAll('\uFFFD', '\uDC80');
  }
}

function toBigInt(value: PbLong, signed: boolean): bigint {
  if (typeof value === 'number') return BigInt(value);
  // Below 2^32 (an unset time is 0): one allocation at most, not four.
  if (value.high === 0) return value.low === 0 ? 0n : BigInt(value.low >>> 0);
  const bits = (BigInt(value.high >>> 0) << 32n) | BigInt(value.low >>> 0);
  return signed ? BigInt.asIntN(64, bits) : bits;
}

function anyValue(value: PbAnyValue | null): AnyValue | undefined {
  switch (value?.value) {
    case 'stringValue':
      return { stringValue: value.stringValue };
    case 'boolValue':
      return { boolValue: value.boolValue };
    case 'intValue':
      return { intValue: toBigInt(value.intValue, true) };
    case 'doubleValue':
      return { doubleValue: value.doubleValue };
    case 'bytesValue':
      return { bytesValue: value.bytesValue };
    // Nesting is bounded by protobufjs's recursion limit (100 message levels) while decoding.
    case 'arrayValue':
      return { arrayValue: { values: value.arrayValue!.values.map((item) => anyValue(item) ?? {}) } };
    case 'kvlistValue':
      return { kvlistValue: { values: keyValues(value.kvlistValue!.values) } };
    default:
      return undefined;
  }
}

function keyValues(list: PbKeyValue[]): KeyValue[] {
  // An empty list is the decoded message's own (protobufjs makes a new one per message): one object
  // less for each of millions of empty events.
  if (list.length === 0) return list as [];
  return list.map((kv) => ({ key: kv.key, value: anyValue(kv.value) }));
}

function event(pb: PbEvent): OtlpEvent {
  return { name: pb.name, timeUnixNano: toBigInt(pb.timeUnixNano, false), attributes: keyValues(pb.attributes) };
}

// A message type as the count sees it: the fields that hold a message, by field number (what it
// descends into), and whether it is a span (counted apart, against the 10,000 limit).
type CountedType = { nested: (CountedType | undefined)[]; span: boolean };

let requestShape: CountedType | undefined;

function countedTypes(): CountedType {
  if (requestShape) return requestShape;
  const { request, types } = otlpSchema();
  const shapes = new Map<protobuf.Type, CountedType>();
  const shapeOf = (type: protobuf.Type): CountedType => {
    let shape = shapes.get(type);
    if (shape) return shape;
    shape = {
      nested: [],
      span: type === types.span,
    };
    shapes.set(type, shape);
    for (const field of type.fieldsArray) {
      const resolved = field.resolve().resolvedType;
      if (resolved instanceof protobuf.Type && !field.map) shape.nested[field.id] = shapeOf(resolved);
    }
    return shape;
  };
  requestShape = shapeOf(request);
  return requestShape;
}

/**
 * Counts what the request decodes into before decoding it, so a body of millions of tiny fields
 * (empty KeyValues, an array of empty AnyValues, empty events or spans, a repeated scalar) never
 * becomes millions of objects: every field (each read makes at most one object: a message, a
 * string, a Long) and spans. Throws 413 as soon as either passes its limit. Reads like
 * protobufjs's generated decoders, with protobufjs's reader and the schema's reflection: a field of
 * a message type sent length-delimited is descended into, anything else (scalars, unknown fields, a
 * wrong wire type) skipped. Throws what the reader throws on a malformed body.
 */
class DecodedValueCount {
  private values = 0;
  private spans = 0;
  private readonly reader: protobuf.Reader;

  constructor(
    body: Buffer,
    private readonly maxValues: number,
  ) {
    this.reader = protobuf.Reader.create(body);
  }

  request(): void {
    this.message(countedTypes(), this.reader.len, 0);
  }

  private tooMany(): never {
    throw tooManyValues(this.maxValues);
  }

  // The fields of one message ending at `end`, its nested messages' included.
  private message(type: CountedType, end: number, depth: number): number {
    if (depth > protobuf.Reader.recursionLimit) throw new Error('max depth exceeded');
    const { reader } = this;
    let fields = 0;
    while (reader.pos < end) {
      const tag = reader.tag();
      if (++this.values > this.maxValues) this.tooMany();
      fields++;
      const inner = type.nested[tag >>> 3];
      if (inner && (tag & 7) === 2) {
        const length = reader.uint32();
        if (reader.pos + length > end) throw new RangeError('length past the end of its message');
        if (length > 0) fields += this.message(inner, reader.pos + length, depth + 1);
        if (inner.span && ++this.spans > maxSpansPerRequest) throw tooManySpans();
      } else {
        reader.skipType(tag & 7, depth, tag >>> 3);
      }
    }
    if (reader.pos !== end) throw new RangeError('a field runs past the end of its message');
    return fields;
  }
}

/**
 * The spans of an OTLP/HTTP protobuf body in request order; 413 past 10,000 spans or `maxValues`
 * decoded values (counted first, nothing decoded), 400 when it is not an ExportTraceServiceRequest.
 */
export function decodeProtobufRequest(body: Buffer, maxValues: number = maxDecodedValues): OtlpSpanInput[] {
  let request: PbRequest;
  try {
    new DecodedValueCount(body, maxValues).request();
    request = otlpSchema().request.decode(new SpanTolerantReader(body)) as unknown as PbRequest;
  } catch (error) {
    if (isAppError(error)) throw error;
    // Anything protobufjs throws (truncated, wrong wire type, nesting past its limit, a stack
    // overflow) is about the body.
    throw undecodable(error instanceof Error ? error.message : 'malformed protobuf');
  }
  const inputs: OtlpSpanInput[] = [];
  for (const resourceSpans of request.resourceSpans) {
    const resourceAttributes = resourceSpans.resource ? keyValues(resourceSpans.resource.attributes) : undefined;
    for (const scopeSpans of resourceSpans.scopeSpans) {
      const scopeName = scopeSpans.scope?.name || undefined;
      for (const span of scopeSpans.spans) {
        inputs.push({
          resourceAttributes,
          scopeName,
          span: {
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId,
            name: span.name,
            kind: span.kind,
            startTimeUnixNano: toBigInt(span.startTimeUnixNano, false),
            endTimeUnixNano: toBigInt(span.endTimeUnixNano, false),
            attributes: keyValues(span.attributes),
            events: span.events.map(event),
            status: span.status ? { code: span.status.code, message: span.status.message } : undefined,
          },
        });
      }
    }
  }
  return inputs;
}
