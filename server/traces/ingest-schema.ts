import { z } from 'zod';
import { AppError, invalidRequest, zodIssues, type Issue } from '../errors';
import { jsonTextProblem } from '../input-hygiene';
import { maxUnixMs } from '../numbers';
import { costSources, omittedParts, spanKinds, spanStatuses, traceIdPattern } from './schemas';

// The trace batch of the spec's "Trace ingestion" section. One zod schema validates every event
// and feeds the OpenAPI document; rules across fields run as checks on the parsed span.

export const maxEventsPerBatch = 50;
const maxRevision = 1_000_000;
const maxClockLeadMs = 5 * 60 * 1000;
const maxContentBytes = 256 * 1024;
const maxMetadataBytes = 16 * 1024;
const maxMetadataKeys = 64;
const maxJsonDepth = 32;

function hexId(length: number) {
  const pattern = new RegExp(`^[0-9a-f]{${length}}$`);
  const zeros = '0'.repeat(length);
  return z
    .string()
    .refine((value) => pattern.test(value), `Must be ${length} lowercase hexadecimal characters.`)
    .refine((value) => value !== zeros, 'Must not be all zeros.')
    .meta({ pattern: `^[0-9a-f]{${length}}$`, description: 'Not all zeros.' });
}

// Lengths count characters (Unicode code points), not UTF-16 units.
function characterCount(value: string): number {
  let count = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < value.length) i++;
    count++;
  }
  return count;
}

function text(max: number, min = 0) {
  return z
    .string()
    .refine(
      (value) => value.length >= min && (value.length <= max || characterCount(value) <= max),
      min ? `Must be 1 to ${max} characters.` : `Must be at most ${max} characters.`,
    )
    .meta(min ? { minLength: min, maxLength: max } : { maxLength: max });
}

const unixMs = z.int().min(0).max(maxUnixMs).describe('Unix milliseconds');
const count = z.int().min(0);

const spanSnapshotSchema = z.strictObject({
  traceId: hexId(32),
  spanId: hexId(16),
  rootSpanId: hexId(16),
  parentSpanId: hexId(16).optional(),
  revision: z.int().min(0).max(maxRevision),
  name: text(200, 1),
  service: text(100, 1),
  kind: z.enum(spanKinds),
  status: z.enum(spanStatuses),
  startedAt: unixMs.describe('Unix milliseconds; at most five minutes ahead of server time (409 otherwise)'),
  endedAt: unixMs
    .optional()
    .describe('Unix milliseconds; omitted while running, required once finished, not before startedAt'),
  sessionId: text(200).optional(),
  endUserId: text(200).optional(),
  provider: text(100).optional(),
  promptVersionId: text(100).optional(),
  pricingVersion: text(100).optional(),
  model: text(200).optional(),
  inputTokens: count.optional(),
  outputTokens: count.optional(),
  costUsdNanos: count
    .optional()
    .describe('Billionths of a US dollar; only with costSource provider_reported or catalog_estimate'),
  costSource: z.enum(costSources).optional(),
  contentJson: z.string().optional().describe('JSON text, at most 256 KiB (UTF-8) and 32 levels deep'),
  metadataJson: z
    .string()
    .optional()
    .describe('JSON object text, at most 16 KiB (UTF-8), 64 top-level keys and 32 levels deep'),
  omitted: z.array(z.enum(omittedParts)).max(4).optional().describe('Distinct entries'),
});

export const traceBatchSchema = z.strictObject({
  version: z.literal(1).describe('The batch format: 1.'),
  events: z
    .array(spanSnapshotSchema)
    .min(1)
    .max(maxEventsPerBatch)
    .describe(`Span snapshots, 1 to ${maxEventsPerBatch}; stored all together or not at all.`),
});

export type SpanSnapshot = z.infer<typeof spanSnapshotSchema>;
export type TraceBatch = z.infer<typeof traceBatchSchema>;

function checkJson(value: string, what: 'contentJson' | 'metadataJson', issues: Issue[], prefix: string): void {
  const path = `${prefix}${what}`;
  const limit = what === 'contentJson' ? maxContentBytes : maxMetadataBytes;
  // UTF-8 is at most 3 bytes per UTF-16 unit: short strings skip the byte count.
  if (value.length * 3 > limit && Buffer.byteLength(value, 'utf8') > limit) {
    issues.push({ path, message: `Must be at most ${limit / 1024} KiB (UTF-8).` });
    return;
  }
  // Depth (32 here) before parsing, and no U+0000 or lone surrogate escaped inside the JSON text.
  const result: { value?: unknown } = {};
  const problem = jsonTextProblem(value, maxJsonDepth, result);
  if (problem) {
    issues.push({ path, message: problem });
    return;
  }
  const parsed = result.value;
  if (what === 'metadataJson') {
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      issues.push({ path, message: 'Must be a JSON object.' });
      return;
    }
    if (Object.keys(parsed).length > maxMetadataKeys)
      issues.push({ path, message: `Must have at most ${maxMetadataKeys} top-level keys.` });
  }
}

// Rules across the fields of one span (spec rules 1, 2, 4 and the conditional fields).
function checkSpan(span: SpanSnapshot, index: number, issues: Issue[]): void {
  const prefix = `events.${index}.`;
  if (span.rootSpanId === span.spanId) {
    if (span.parentSpanId !== undefined)
      issues.push({
        path: `${prefix}parentSpanId`,
        message: 'A root span (rootSpanId equals spanId) has no parentSpanId.',
      });
  } else if (span.parentSpanId === undefined) {
    issues.push({
      path: `${prefix}parentSpanId`,
      message: 'A child span (rootSpanId differs from spanId) needs parentSpanId.',
    });
  } else if (span.parentSpanId === span.spanId) {
    issues.push({ path: `${prefix}parentSpanId`, message: 'A span is never its own parent.' });
  }
  if (span.status === 'running') {
    if (span.endedAt !== undefined)
      issues.push({ path: `${prefix}endedAt`, message: 'Omit endedAt while the span is running.' });
  } else if (span.endedAt === undefined) {
    issues.push({ path: `${prefix}endedAt`, message: 'A finished span needs endedAt.' });
  } else if (span.endedAt < span.startedAt) {
    issues.push({ path: `${prefix}endedAt`, message: 'endedAt must not be before startedAt.' });
  }
  if (
    span.costUsdNanos !== undefined &&
    span.costSource !== 'provider_reported' &&
    span.costSource !== 'catalog_estimate'
  ) {
    issues.push({
      path: `${prefix}costUsdNanos`,
      message: 'costUsdNanos needs costSource provider_reported or catalog_estimate.',
    });
  }
  if (span.omitted && new Set(span.omitted).size !== span.omitted.length) {
    issues.push({ path: `${prefix}omitted`, message: 'Entries must be distinct.' });
  }
  if (span.contentJson !== undefined) checkJson(span.contentJson, 'contentJson', issues, prefix);
  if (span.metadataJson !== undefined) checkJson(span.metadataJson, 'metadataJson', issues, prefix);
}

// The same structural rules as traceBatchSchema, as plain checks: every batch takes this path
// (several times faster than the schema); only a batch that fails it goes through the schema,
// which then names every issue. tests/unit/trace-validation.test.ts holds both to the same table.
const hexPatterns = { 16: /^[0-9a-f]{16}$/, 32: traceIdPattern };
const zeros = { 16: '0'.repeat(16), 32: '0'.repeat(32) };
const isHex = (length: 16 | 32) => (v: unknown) =>
  typeof v === 'string' && hexPatterns[length].test(v) && v !== zeros[length];
const isText =
  (max: number, min = 0) =>
  (v: unknown) =>
    typeof v === 'string' && v.length >= min && (v.length <= max || characterCount(v) <= max);
const isCount = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;
const isUnixMs = (v: unknown) => isCount(v) && (v as number) <= maxUnixMs;
const isOneOf = (values: readonly string[]) => (v: unknown) => typeof v === 'string' && values.includes(v);
const isString = (v: unknown) => typeof v === 'string';
const isOmittedPart = isOneOf(omittedParts);
const isOmitted = (v: unknown) => Array.isArray(v) && v.length <= 4 && v.every(isOmittedPart);

const requiredChecks: [string, (v: unknown) => boolean][] = [
  ['traceId', isHex(32)],
  ['spanId', isHex(16)],
  ['rootSpanId', isHex(16)],
  ['revision', (v) => isCount(v) && (v as number) <= maxRevision],
  ['name', isText(200, 1)],
  ['service', isText(100, 1)],
  ['kind', isOneOf(spanKinds)],
  ['status', isOneOf(spanStatuses)],
  ['startedAt', isUnixMs],
];
const fieldChecks = new Map<string, (v: unknown) => boolean>([
  ...requiredChecks,
  ['parentSpanId', isHex(16)],
  ['endedAt', isUnixMs],
  ['sessionId', isText(200)],
  ['endUserId', isText(200)],
  ['provider', isText(100)],
  ['promptVersionId', isText(100)],
  ['pricingVersion', isText(100)],
  ['model', isText(200)],
  ['inputTokens', isCount],
  ['outputTokens', isCount],
  ['costUsdNanos', isCount],
  ['costSource', isOneOf(costSources)],
  ['contentJson', isString],
  ['metadataJson', isString],
  ['omitted', isOmitted],
]);
const requiredCount = requiredChecks.length;
const requiredNames = new Set(requiredChecks.map(([name]) => name));

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hasSpanShape(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  let required = 0;
  for (const key in value) {
    const check = fieldChecks.get(key);
    if (!check || !check(value[key])) return false;
    if (requiredNames.has(key)) required++;
  }
  return required === requiredCount;
}

export function hasBatchShape(value: unknown): value is TraceBatch {
  if (!isPlainObject(value)) return false;
  let keys = 0;
  for (const _key in value) keys++;
  const events = value.events;
  return (
    keys === 2 &&
    value.version === 1 &&
    Array.isArray(events) &&
    events.length >= 1 &&
    events.length <= maxEventsPerBatch &&
    events.every(hasSpanShape)
  );
}

// The schema's issues, and the rules across fields of every event whose fields are valid on their
// own (a batch with an unknown field in one event still hears about another's endedAt), in event order.
function everyIssue(value: unknown, error: z.ZodError): Issue[] {
  const issues = zodIssues(error);
  const events = isPlainObject(value) && Array.isArray(value.events) ? value.events : [];
  events.slice(0, maxEventsPerBatch).forEach((event, index) => {
    const span = spanSnapshotSchema.safeParse(event);
    if (span.success) checkSpan(span.data, index, issues);
  });
  const eventOf = (issue: Issue) => Number(/^events\.(\d+)/.exec(issue.path)?.[1] ?? -1);
  // Array.prototype.sort is stable: within an event the schema's issues come first.
  return issues.sort((a, b) => eventOf(a) - eventOf(b));
}

// A parsed JSON body → a valid batch, or 400 invalid_request listing every issue with its path.
export function parseTraceBatch(value: unknown): TraceBatch {
  let batch: TraceBatch;
  if (hasBatchShape(value)) batch = value;
  else {
    const result = traceBatchSchema.safeParse(value);
    if (!result.success) throw invalidRequest('The trace batch is not valid.', everyIssue(value, result.error));
    batch = result.data;
  }
  const issues: Issue[] = [];
  batch.events.forEach((span, index) => checkSpan(span, index, issues));
  if (issues.length) throw invalidRequest('The trace batch is not valid.', issues);
  return batch;
}

// startedAt more than five minutes ahead of server time is a state conflict (409), not bad input.
export function assertClockLead(batch: TraceBatch, now = Date.now()): void {
  const index = batch.events.findIndex((span) => span.startedAt > now + maxClockLeadMs);
  if (index === -1) return;
  throw new AppError(
    'invalid_state',
    'startedAt is more than five minutes ahead of server time. Check the clock of the sending host.',
    {
      state: 'clock_ahead',
      path: `events.${index}.startedAt`,
      serverTime: now,
    },
  );
}
