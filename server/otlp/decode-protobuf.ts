import { isUtf8 } from 'node:buffer';
import protobuf from 'protobufjs';
import { isAppError } from '../errors';
import { maxSpansPerRequest, tooManySpans, undecodable } from './limits';
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
  return list.map((kv) => ({ key: kv.key, value: anyValue(kv.value) }));
}

function event(pb: PbEvent): OtlpEvent {
  return { name: pb.name, timeUnixNano: toBigInt(pb.timeUnixNano, false), attributes: keyValues(pb.attributes) };
}

/**
 * The spans of the request, counted first without decoding them (413 past 10,000), so a body of
 * millions of empty spans never becomes millions of objects. Walks three levels of the wire format
 * with protobufjs's reader and the schema's field numbers; throws what the reader throws.
 */
function countSpans(body: Buffer): number {
  const { fieldIds } = otlpSchema();
  const reader = protobuf.Reader.create(body);
  let count = 0;
  const each = (end: number, fieldId: number, visit?: (end: number) => void) => {
    while (reader.pos < end) {
      const tag = reader.tag();
      if (tag >>> 3 === fieldId && (tag & 7) === 2) {
        const stop = reader.uint32() + reader.pos;
        if (stop > end) throw new RangeError('length past the end of its message');
        if (visit) visit(stop);
        else if (++count > maxSpansPerRequest) throw tooManySpans();
        reader.pos = stop;
      } else {
        reader.skipType(tag & 7, 0, tag >>> 3);
      }
    }
    if (reader.pos !== end) throw new RangeError('a field runs past the end of its message');
  };
  each(body.length, fieldIds.resourceSpans, (end) =>
    each(end, fieldIds.scopeSpans, (stop) => each(stop, fieldIds.spans)),
  );
  return count;
}

export function decodeProtobufRequest(body: Buffer): OtlpSpanInput[] {
  let request: PbRequest;
  try {
    countSpans(body);
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
