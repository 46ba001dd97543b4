// The server's rules for one span snapshot, checked before the exporter queues it (exporter.ts):
// the server refuses a whole batch (400) for one bad span, so a span it would refuse is refused
// here alone. A copy of server/traces/ingest-schema.ts (spanSnapshotSchema and fieldChecks: the
// fields, their types and limits, no others; checkSpan and checkJson: the rules across fields and
// the JSON text fields) and of the input hygiene every request body passes (server/input-hygiene.ts:
// no U+0000 or unpaired surrogate in any string). The SDK cannot import the server: change both
// together. tests/unit/sdk.span-rules.test.ts holds generated spans to the server's parseTraceBatch.
import { utf8Length } from './span-queue.js';

/** The first rule a span snapshot breaks: the field (null when the span is not an object) and why. */
export type SpanIssue = { field: string | null; message: string };

const maxRevision = 1_000_000;
const maxUnixMs = 8.64e15;
const maxContentBytes = 256 * 1024;
const maxMetadataBytes = 16 * 1024;
const maxMetadataKeys = 64;
const maxJsonDepth = 32;
const kinds = ['execution', 'model', 'attempt', 'tool', 'retrieval', 'custom'];
const statuses = ['running', 'success', 'error', 'cancelled'];
const costSources = ['provider_reported', 'catalog_estimate', 'unavailable'];
const omittedParts = ['input', 'output', 'error', 'metadata'];

// Lengths count characters (Unicode code points), not UTF-16 units, as the server does.
function characterCount(value: string): number {
  let count = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < value.length) i++;
    count++;
  }
  return count;
}

// '' when Postgres can store the string, else why not (String.prototype.isWellFormed is newer than ES2022).
function stringProblem(value: string): string {
  if (value.includes('\u0000')) return 'must not contain the character U+0000';
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0xd800 || code > 0xdfff) continue;
    if (code <= 0xdbff && (value.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++;
    else return 'must not contain an unpaired surrogate (invalid Unicode)';
  }
  return '';
}

type Rule = { check: (v: unknown) => boolean; must: string };
const hex = (length: number): Rule => {
  const pattern = new RegExp(`^(?!0+$)[0-9a-f]{${length}}$`);
  return {
    check: (v) => typeof v === 'string' && pattern.test(v),
    must: `be ${length} lowercase hexadecimal characters, not all zeros`,
  };
};
const text = (max: number, min = 0): Rule => ({
  check: (v) => typeof v === 'string' && v.length >= min && (v.length <= max || characterCount(v) <= max),
  must: min ? `be a string of ${min} to ${max} characters` : `be a string of at most ${max} characters`,
});
const isCount = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;
const count: Rule = { check: isCount, must: 'be an integer of at least 0' };
const unixMs: Rule = {
  check: (v) => isCount(v) && (v as number) <= maxUnixMs,
  must: 'be Unix milliseconds (an integer from 0 to 8640000000000000)',
};
const oneOf = (values: string[]): Rule => ({
  check: (v) => typeof v === 'string' && values.includes(v),
  must: `be one of ${values.join(', ')}`,
});
const string: Rule = { check: (v) => typeof v === 'string', must: 'be a string (JSON text)' };

// Every field of a snapshot (the server's fieldChecks), required ones first.
const required = 9;
const fields: [string, Rule][] = [
  ['traceId', hex(32)],
  ['spanId', hex(16)],
  ['rootSpanId', hex(16)],
  ['revision', { check: (v) => isCount(v) && (v as number) <= maxRevision, must: 'be an integer from 0 to 1000000' }],
  ['name', text(200, 1)],
  ['service', text(100, 1)],
  ['kind', oneOf(kinds)],
  ['status', oneOf(statuses)],
  ['startedAt', unixMs],
  ['parentSpanId', hex(16)],
  ['endedAt', unixMs],
  ['sessionId', text(200)],
  ['endUserId', text(200)],
  ['provider', text(100)],
  ['promptVersionId', text(100)],
  ['pricingVersion', text(100)],
  ['model', text(200)],
  ['inputTokens', count],
  ['outputTokens', count],
  ['costUsdNanos', count],
  ['costSource', oneOf(costSources)],
  ['contentJson', string],
  ['metadataJson', string],
  [
    'omitted',
    {
      check: (v) => Array.isArray(v) && v.length <= 4 && v.every((part) => omittedParts.includes(part as string)),
      must: `be an array of at most 4 of ${omittedParts.join(', ')}`,
    },
  ],
];
const rules = new Map(fields);

// Whether a parsed JSON value nests deeper than `limit` ("{}" is 1), and the first unstorable
// string (keys included) inside it; both iterative, like the server's.
function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth > limit) return true;
    for (const item of Object.values(current)) stack.push([item, depth + 1]);
  }
  return false;
}
function innerStringProblem(value: unknown): string {
  const stack = [value];
  while (stack.length) {
    const current = stack.pop();
    if (typeof current === 'string') {
      const problem = stringProblem(current);
      if (problem) return `a string inside the JSON ${problem}`;
    } else if (current !== null && typeof current === 'object') {
      for (const key of Object.keys(current)) {
        const problem = stringProblem(key);
        if (problem) return `a field name inside the JSON ${problem}`;
        stack.push((current as Record<string, unknown>)[key]);
      }
    }
  }
  return '';
}

// contentJson and metadataJson: the server's checkJson.
function jsonProblem(value: string, field: 'contentJson' | 'metadataJson'): string {
  const limit = field === 'contentJson' ? maxContentBytes : maxMetadataBytes;
  if (value.length * 3 > limit && utf8Length(value) > limit) return `must be at most ${limit / 1024} KiB (UTF-8)`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return 'must be valid JSON text';
  }
  // Each level takes two characters: shorter text cannot nest too deep.
  if (value.length >= 2 * (maxJsonDepth + 1) && nestsDeeperThan(parsed, maxJsonDepth))
    return `must not nest more than ${maxJsonDepth} levels`;
  // Without a \u escape, JSON text of a storable string holds only storable strings.
  if (value.includes('\\u')) {
    const problem = innerStringProblem(parsed);
    if (problem) return problem;
  }
  if (field === 'metadataJson') {
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return 'must be a JSON object';
    if (Object.keys(parsed).length > maxMetadataKeys) return `must have at most ${maxMetadataKeys} top-level keys`;
  }
  return '';
}

const issue = (field: string, message: string): SpanIssue => ({ field, message: `${field}: ${message}.` });

/**
 * The first rule of the server's that the snapshot breaks, or null when the server accepts it.
 * Fields holding `undefined` count as absent (JSON.stringify leaves them out).
 */
export function spanIssue(span: unknown): SpanIssue | null {
  if (typeof span !== 'object' || span === null || Array.isArray(span))
    return { field: null, message: 'A span snapshot is an object.' };
  // Own enumerable fields only, as JSON.stringify sends them.
  const s: Record<string, unknown> = {};
  for (const key of Object.keys(span)) {
    const value = (span as Record<string, unknown>)[key];
    if (value === undefined) continue;
    const rule = rules.get(key);
    if (!rule) return issue(key, 'not a field of a span snapshot (unknown fields are refused)');
    if (!rule.check(value)) return issue(key, `must ${rule.must}`);
    const problem = typeof value === 'string' ? stringProblem(value) : '';
    if (problem) return issue(key, problem);
    s[key] = value;
  }
  for (let i = 0; i < required; i++) {
    const [field] = fields[i];
    if (s[field] === undefined) return issue(field, 'required');
  }

  // Rules across fields: the server's checkSpan.
  if (s.rootSpanId === s.spanId) {
    if (s.parentSpanId !== undefined)
      return issue('parentSpanId', 'a root span (rootSpanId equals spanId) has no parentSpanId');
  } else if (s.parentSpanId === undefined) {
    return issue('parentSpanId', 'a child span (rootSpanId differs from spanId) needs parentSpanId');
  } else if (s.parentSpanId === s.spanId) {
    return issue('parentSpanId', 'a span is never its own parent');
  }
  if (s.status === 'running') {
    if (s.endedAt !== undefined) return issue('endedAt', 'omit endedAt while the span is running');
  } else if (s.endedAt === undefined) {
    return issue('endedAt', `a finished span (status ${String(s.status)}) needs endedAt`);
  } else if ((s.endedAt as number) < (s.startedAt as number)) {
    return issue('endedAt', 'must not be before startedAt');
  }
  if (s.costUsdNanos !== undefined && s.costSource !== 'provider_reported' && s.costSource !== 'catalog_estimate')
    return issue('costUsdNanos', 'needs costSource provider_reported or catalog_estimate');
  const omitted = s.omitted as string[] | undefined;
  if (omitted && new Set(omitted).size !== omitted.length) return issue('omitted', 'entries must be distinct');
  for (const field of ['contentJson', 'metadataJson'] as const) {
    const problem = s[field] === undefined ? '' : jsonProblem(s[field] as string, field);
    if (problem) return issue(field, problem);
  }
  return null;
}
