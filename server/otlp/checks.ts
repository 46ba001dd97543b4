import { stringProblem } from '../input-hygiene';
import { maxUnixMs } from '../numbers';
import type { AnyValue, KeyValue, OtlpId, OtlpInt, OtlpSpanInput } from './types';

// The checks that reject one span (API.md "OTLP trace ingestion", per span): ids, times, strings.

const maxClockLeadMs = 5 * 60 * 1000;
const nanosPerMs = 1_000_000n;

/** Lowercase hex of an id, or a rejection reason. Raw bytes are hex-encoded first. */
export function hexId(id: OtlpId | undefined, bytes: 8 | 16, what: string): { id: string } | { reason: string } {
  const text = id instanceof Uint8Array ? Buffer.from(id).toString('hex') : typeof id === 'string' ? id : '';
  if (text.length !== bytes * 2) return { reason: `${what} must be ${bytes * 2} hexadecimal characters` };
  if (!/^[0-9a-fA-F]+$/.test(text)) return { reason: `${what} is not hexadecimal` };
  if (/^0+$/.test(text)) return { reason: `${what} is all zeros` };
  return { id: text.toLowerCase() };
}

/** The parent id: absent, empty or all zeros → no parent (API.md); otherwise checked like spanId. */
export function parentId(id: OtlpId | undefined): { id?: string } | { reason: string } {
  if (id === undefined || id.length === 0) return {};
  const text = id instanceof Uint8Array ? Buffer.from(id).toString('hex') : id;
  if (/^0+$/.test(text) && text.length === 16) return {};
  return hexId(id, 8, 'parentSpanId');
}

/** Nanoseconds as a bigint, or undefined when the value is not a non-negative integer. */
function nanos(value: OtlpInt | undefined): bigint | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'bigint') return value >= 0n ? value : undefined;
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? BigInt(value) : undefined;
  return /^\d{1,30}$/.test(value) ? BigInt(value) : undefined;
}

/** Start and end in Unix ms (floored), or a rejection reason. */
export function spanTimes(
  start: OtlpInt | undefined,
  end: OtlpInt | undefined,
  now: number,
): { startedAt: number; endedAt: number } | { reason: string } {
  const startNs = nanos(start);
  const endNs = nanos(end);
  if (startNs === undefined) return { reason: 'startTimeUnixNano is not a valid time' };
  // 0 is how protobuf sends an unset time (proto3); no span started at the Unix epoch.
  if (startNs === 0n) return { reason: 'startTimeUnixNano is missing' };
  if (endNs === undefined) return { reason: 'endTimeUnixNano is not a valid time' };
  if (endNs < startNs) return { reason: 'end time is before start time' };
  const startedAt = Number(startNs / nanosPerMs);
  const endedAt = Number(endNs / nanosPerMs);
  if (endedAt > maxUnixMs) return { reason: 'end time is out of range' };
  if (startedAt > now + maxClockLeadMs) return { reason: 'start time is more than five minutes ahead of server time' };
  return { startedAt, endedAt };
}

// The first problem among strings and the values under them, walked iteratively.
function firstProblem(strings: string[], values: AnyValue[]): string {
  const pushAttributes = (attributes: KeyValue[] | undefined) => {
    for (const kv of attributes ?? []) {
      if (typeof kv?.key === 'string') strings.push(kv.key);
      if (kv?.value) values.push(kv.value);
    }
  };
  for (;;) {
    const text = strings.pop();
    if (text !== undefined) {
      const problem = stringProblem(text);
      if (problem) return problem;
      continue;
    }
    const value = values.pop();
    if (value === undefined) return '';
    if (typeof value !== 'object' || value === null) continue;
    if (typeof value.stringValue === 'string') strings.push(value.stringValue);
    for (const item of value.arrayValue?.values ?? []) values.push(item);
    pushAttributes(value.kvlistValue?.values);
  }
}

/** The first string problem of a list of attributes (keys, values, nested values). */
export function attributesStringProblem(attributes: KeyValue[] | undefined): string {
  return firstProblem([], [{ kvlistValue: { values: attributes ?? [] } }]);
}

// Walks every string of the span itself (names, keys, values, events); the resource's strings are
// checked once per resource (resource.ts).
export function firstStringProblem(input: OtlpSpanInput): string {
  const { span } = input;
  const strings: string[] = [];
  if (typeof input.scopeName === 'string') strings.push(input.scopeName);
  if (typeof span.name === 'string') strings.push(span.name);
  if (typeof span.status?.message === 'string') strings.push(span.status.message);
  const values: AnyValue[] = [{ kvlistValue: { values: span.attributes ?? [] } }];
  for (const event of span.events ?? []) {
    if (typeof event?.name === 'string') strings.push(event.name);
    values.push({ kvlistValue: { values: event?.attributes ?? [] } });
  }
  return firstProblem(strings, values);
}
