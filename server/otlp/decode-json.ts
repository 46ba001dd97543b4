import { isUtf8 } from 'node:buffer';
import { jsonStringEnd, jsonTextDepth, maxBodyDepth } from '../input-hygiene';
import {
  maxDecodedValues,
  maxSpansPerRequest,
  maxValueDepth,
  tooManySpans,
  tooManyValues,
  undecodable,
} from './limits';
import type { AnyValue, KeyValue, OtlpEvent, OtlpInt, OtlpSpanInput } from './types';

// OTLP/JSON (the proto3 JSON mapping with OTLP's exceptions): lowerCamelCase field names, trace and
// span ids as hex, enums as integers (their names are taken too), 64-bit integers as decimal strings
// or numbers. Unknown fields are ignored and never walked; null is an unset field. A known field of
// the wrong JSON type makes the body undecodable (400), as in any proto3 JSON parser.

type JsonObject = Record<string, unknown>;

const spanKindNames = [
  'SPAN_KIND_UNSPECIFIED',
  'SPAN_KIND_INTERNAL',
  'SPAN_KIND_SERVER',
  'SPAN_KIND_CLIENT',
  'SPAN_KIND_PRODUCER',
  'SPAN_KIND_CONSUMER',
];
const statusCodeNames = ['STATUS_CODE_UNSET', 'STATUS_CODE_OK', 'STATUS_CODE_ERROR'];

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function wrongType(path: string, expected: string): never {
  throw undecodable(`${path} must be ${expected}`);
}

function object(value: unknown, path: string): JsonObject | undefined {
  if (value === undefined || value === null) return undefined;
  return isObject(value) ? value : wrongType(path, 'an object');
}

function list(value: unknown, path: string): unknown[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : wrongType(path, 'an array');
}

function text(value: unknown, path: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : wrongType(path, 'a string');
}

function int64(value: unknown, path: string): OtlpInt | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return value;
  return wrongType(path, 'an integer (a number or a decimal string)');
}

function enumValue(value: unknown, path: string, names: string[]): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  const index = typeof value === 'string' ? names.indexOf(value) : -1;
  return index >= 0 ? index : wrongType(path, `an integer enum value (${names.join(', ')})`);
}

const specialDoubles = new Set(['NaN', 'Infinity', '-Infinity']);
function double(value: unknown, path: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number') return value;
  if (
    typeof value === 'string' &&
    (specialDoubles.has(value) || (value.trim() !== '' && Number.isFinite(Number(value))))
  )
    return Number(value);
  return wrongType(path, 'a number');
}

function anyValue(value: unknown, path: string, depth: number): AnyValue | undefined {
  const json = object(value, path);
  if (!json) return undefined;
  if (depth > maxValueDepth) throw undecodable(`${path} nests more than ${maxValueDepth} levels of values`);
  if (json.stringValue != null) return { stringValue: text(json.stringValue, `${path}.stringValue`) };
  if (json.boolValue != null) {
    return typeof json.boolValue === 'boolean'
      ? { boolValue: json.boolValue }
      : wrongType(`${path}.boolValue`, 'a boolean');
  }
  if (json.intValue != null) return { intValue: int64(json.intValue, `${path}.intValue`) };
  if (json.doubleValue != null) return { doubleValue: double(json.doubleValue, `${path}.doubleValue`) };
  if (json.bytesValue != null) return { bytesValue: text(json.bytesValue, `${path}.bytesValue`) };
  if (json.arrayValue != null) {
    const values = list(object(json.arrayValue, `${path}.arrayValue`)?.values, `${path}.arrayValue.values`);
    return {
      arrayValue: {
        values: values.map((item, i) => anyValue(item, `${path}.arrayValue.values[${i}]`, depth + 1) ?? {}),
      },
    };
  }
  if (json.kvlistValue != null) {
    const values = object(json.kvlistValue, `${path}.kvlistValue`)?.values;
    return { kvlistValue: { values: keyValues(values, `${path}.kvlistValue.values`, depth + 1) } };
  }
  return undefined;
}

function keyValues(value: unknown, path: string, depth = 1): KeyValue[] {
  return list(value, path).map((item, i) => {
    const kv = object(item, `${path}[${i}]`) ?? {};
    return {
      key: text(kv.key, `${path}[${i}].key`) ?? '',
      value: anyValue(kv.value, `${path}[${i}].value`, depth),
    };
  });
}

function event(value: unknown, path: string): OtlpEvent {
  const json = object(value, path) ?? {};
  return {
    name: text(json.name, `${path}.name`),
    timeUnixNano: int64(json.timeUnixNano, `${path}.timeUnixNano`),
    attributes: keyValues(json.attributes, `${path}.attributes`),
  };
}

function span(value: unknown, path: string): OtlpSpanInput['span'] {
  const json = object(value, path) ?? {};
  const status = object(json.status, `${path}.status`);
  return {
    traceId: text(json.traceId, `${path}.traceId`),
    spanId: text(json.spanId, `${path}.spanId`),
    parentSpanId: text(json.parentSpanId, `${path}.parentSpanId`),
    name: text(json.name, `${path}.name`),
    kind: enumValue(json.kind, `${path}.kind`, spanKindNames),
    startTimeUnixNano: int64(json.startTimeUnixNano, `${path}.startTimeUnixNano`),
    endTimeUnixNano: int64(json.endTimeUnixNano, `${path}.endTimeUnixNano`),
    attributes: keyValues(json.attributes, `${path}.attributes`),
    events: list(json.events, `${path}.events`).map((item, i) => event(item, `${path}.events[${i}]`)),
    status: status && {
      code: enumValue(status.code, `${path}.status.code`, statusCodeNames),
      message: text(status.message, `${path}.status.message`),
    },
  };
}

// A JSON body must be UTF-8. Bytes that are not become lone surrogates: inside a string they
// reject that string's span (like a lone surrogate sent as \uD800), anywhere else JSON.parse fails.
function bodyText(body: Buffer): string {
  let decoded = body.toString('utf8');
  if (decoded.includes('\uFFFD') && !isUtf8(body)) decoded = decoded.replaceAll('\uFFFD', '\uDC80');
  return decoded.charCodeAt(0) === 0xfeff ? decoded.slice(1) : decoded;
}

const isDigit = (code: number) => code >= 0x30 && code <= 0x39;

// An integer literal of 16 digits or more, after a colon, bracket or comma: maybe past 2^53.
const longIntegerLiteral = /[:[,]\s*-?\d{16}/;

/**
 * JSON numbers past 2^53 lose digits in JSON.parse, so integer literals of 16 digits or more are
 * turned into strings first (a nanosecond time such as 1700000000000999999 stays exact). Strings are
 * stepped over; numbers with a fraction or an exponent are left alone. Costs one regular expression
 * test when no such literal exists (the OpenTelemetry exporters send 64-bit integers as strings).
 */
export function quoteLongIntegers(json: string): string {
  if (!longIntegerLiteral.test(json)) return json;
  let out = '';
  let copied = 0;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 0x22) {
      i = jsonStringEnd(json, i);
      if (i === -1) break; // unterminated: JSON.parse reports it
      continue;
    }
    if (c !== 0x2d && !isDigit(c)) continue;
    const start = i;
    let end = c === 0x2d ? i + 1 : i;
    while (isDigit(json.charCodeAt(end))) end++;
    const digits = end - start - (c === 0x2d ? 1 : 0);
    let literalEnd = end;
    if (json.charCodeAt(literalEnd) === 0x2e) for (literalEnd++; isDigit(json.charCodeAt(literalEnd));) literalEnd++;
    if ((json.charCodeAt(literalEnd) | 0x20) === 0x65) {
      literalEnd++;
      if (json.charCodeAt(literalEnd) === 0x2b || json.charCodeAt(literalEnd) === 0x2d) literalEnd++;
      while (isDigit(json.charCodeAt(literalEnd))) literalEnd++;
    }
    if (literalEnd === end && digits >= 16) {
      out += `${json.slice(copied, start)}"${json.slice(start, end)}"`;
      copied = end;
    }
    i = literalEnd - 1;
  }
  return copied === 0 ? json : out + json.slice(copied);
}

/**
 * The values and members of JSON text, counted without parsing it: each `{`, `[` and `,` outside
 * strings (a container's first item goes with its bracket, every further one with its comma), so
 * `[{},{}]` is 4 and an attribute `{"key":"k","value":{"stringValue":"v"}},` is 4. Strings are
 * stepped over, escapes included; stops counting once past `limit`.
 */
export function jsonValueCount(text: string, limit = Infinity): number {
  let count = 0;
  for (let i = 0; i < text.length && count <= limit; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = jsonStringEnd(text, i);
      if (i === -1) break; // unterminated: JSON.parse reports it
    } else if (c === 0x7b || c === 0x5b || c === 0x2c) {
      count++;
    }
  }
  return count;
}

/**
 * The spans of an OTLP/JSON body in request order; 413 past 10,000 spans or `maxValues` values and
 * members (counted on the text before it is parsed),
 * 400 when it is not an ExportTraceServiceRequest.
 */
export function decodeJsonRequest(body: Buffer, maxValues: number = maxDecodedValues): OtlpSpanInput[] {
  const source = bodyText(body);
  let values = jsonValueCount(source, maxValues);
  if (values > maxValues) throw tooManyValues(maxValues);
  // Input hygiene (API.md): no JSON body nests deeper than 64 levels, checked before parsing.
  if (jsonTextDepth(source, maxBodyDepth) > maxBodyDepth)
    throw undecodable(`the body nests more than ${maxBodyDepth} levels`);
  let request: unknown;
  try {
    // V8's JSON.parse is iterative: any nesting parses; only the fields read below are walked.
    request = JSON.parse(quoteLongIntegers(source));
  } catch {
    throw undecodable('the body is not valid JSON');
  }
  if (!isObject(request)) throw undecodable('the body is not a JSON object');

  const resourceSpans = list(request.resourceSpans, 'resourceSpans').map((item, r) => {
    const path = `resourceSpans[${r}]`;
    const json = object(item, path) ?? {};
    const scopeSpans = list(json.scopeSpans, `${path}.scopeSpans`).map((scoped, s) => {
      const scopePath = `${path}.scopeSpans[${s}]`;
      const scopeJson = object(scoped, scopePath) ?? {};
      return { json: scopeJson, path: scopePath, spans: list(scopeJson.spans, `${scopePath}.spans`) };
    });
    return { json, path, scopeSpans };
  });
  let count = 0;
  for (const { scopeSpans } of resourceSpans) for (const { spans } of scopeSpans) count += spans.length;
  if (count > maxSpansPerRequest) throw tooManySpans();

  const inputs: OtlpSpanInput[] = [];
  for (const { json, path, scopeSpans } of resourceSpans) {
    const resource = object(json.resource, `${path}.resource`);
    const resourceAttributes = resource ? keyValues(resource.attributes, `${path}.resource.attributes`) : undefined;
    for (const scoped of scopeSpans) {
      const scope = object(scoped.json.scope, `${scoped.path}.scope`);
      const scopeName = text(scope?.name, `${scoped.path}.scope.name`) || undefined;
      scoped.spans.forEach((item, i) => {
        inputs.push({ resourceAttributes, scopeName, span: span(item, `${scoped.path}.spans[${i}]`) });
      });
    }
  }
  return inputs;
}
