// A decoded OTLP span in a neutral shape: the OTLP/JSON and the protobuf decoders both produce it
// (API.md "OTLP trace ingestion"). Ids are hex strings (any case) or raw bytes; 64-bit integers
// arrive as bigint, decimal strings or numbers.

export type OtlpInt = bigint | string | number;

export type AnyValue = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: OtlpInt;
  doubleValue?: number;
  arrayValue?: { values?: AnyValue[] };
  kvlistValue?: { values?: KeyValue[] };
  bytesValue?: string | Uint8Array;
};

export type KeyValue = { key: string; value?: AnyValue };

export type OtlpEvent = { name?: string; timeUnixNano?: OtlpInt; attributes?: KeyValue[] };

export type OtlpId = string | Uint8Array;

type OtlpSpan = {
  traceId?: OtlpId;
  spanId?: OtlpId;
  parentSpanId?: OtlpId;
  name?: string;
  /** SPAN_KIND_UNSPECIFIED 0, INTERNAL 1, SERVER 2, CLIENT 3, PRODUCER 4, CONSUMER 5. */
  kind?: number;
  startTimeUnixNano?: OtlpInt;
  endTimeUnixNano?: OtlpInt;
  attributes?: KeyValue[];
  events?: OtlpEvent[];
  /** code: UNSET 0, OK 1, ERROR 2. */
  status?: { code?: number; message?: string };
};

export type OtlpSpanInput = { resourceAttributes?: KeyValue[]; scopeName?: string; span: OtlpSpan };

const maxValueDepth = 64;

function bytesToBase64(value: string | Uint8Array): string {
  return typeof value === 'string' ? value : Buffer.from(value).toString('base64');
}

/** An OTLP integer as a JS number when it is a safe integer, else as its decimal string. */
function otlpIntToJs(value: OtlpInt): number | string {
  if (typeof value === 'number') return value;
  const text = typeof value === 'bigint' ? value.toString() : value.trim();
  const number = Number(text);
  return /^-?\d+$/.test(text) && Number.isSafeInteger(number) ? number : text;
}

/**
 * An AnyValue as plain JSON-able JS: strings, booleans, numbers (intValue as a number when safe,
 * else its decimal string), arrays, objects for kvlists, bytes as base64. Empty or unknown → null.
 * Nesting deeper than 64 levels becomes null (iterative callers never see a deeper value).
 */
export function anyValueToJs(value: AnyValue | undefined, depth = 0): unknown {
  if (!value || typeof value !== 'object') return null;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return otlpIntToJs(value.intValue);
  if (value.doubleValue !== undefined) {
    const number = Number(value.doubleValue);
    return Number.isFinite(number) ? number : String(number);
  }
  if (value.bytesValue !== undefined) return bytesToBase64(value.bytesValue);
  if (depth >= maxValueDepth) return null;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map((v) => anyValueToJs(v, depth + 1));
  if (value.kvlistValue !== undefined) {
    const object: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const kv of value.kvlistValue.values ?? []) {
      if (kv && typeof kv.key === 'string' && !Object.hasOwn(object, kv.key))
        object[kv.key] = anyValueToJs(kv.value, depth + 1);
    }
    return object;
  }
  return null;
}
