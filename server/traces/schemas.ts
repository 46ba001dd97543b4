import { z } from 'zod';
import { integerParam, integerParamWithDefault, maxUnixMs } from '../numbers';
import { spanOnlineScoreSchema } from '../online/schemas';

export const spanKinds = ['execution', 'model', 'attempt', 'tool', 'retrieval', 'custom'] as const;
export const spanStatuses = ['running', 'success', 'error', 'cancelled'] as const;
export const costSources = ['provider_reported', 'catalog_estimate', 'unavailable'] as const;
export const omittedParts = ['input', 'output', 'error', 'metadata'] as const;

export const traceIdPattern = /^[0-9a-f]{32}$/;

const unixMs = integerParam(0, maxUnixMs);

export const listTracesQuery = z
  .strictObject({
    cursor: z.string().min(1).max(500).optional().describe('The nextCursor of the previous page.'),
    limit: integerParamWithDefault(1, 100, 25).describe('Items per page, 1 to 100 (default 25).'),
    service: z.string().min(1).max(100).optional().describe('Only traces of this service (exact match).'),
    status: z.enum(spanStatuses).optional().describe('Only traces with this status.'),
    kind: z.enum(spanKinds).optional().describe('Only traces with at least one span of this kind.'),
    from: unixMs.optional().describe('Only traces that started at or after this Unix millisecond time.'),
    to: unixMs.optional().describe('Only traces that started at or before this Unix millisecond time.'),
    sessionId: z.string().min(1).max(200).optional().describe('Only traces with this sessionId (exact match).'),
    endUserId: z.string().min(1).max(200).optional().describe('Only traces with this endUserId (exact match).'),
  })
  .refine((q) => q.from === undefined || q.to === undefined || q.from <= q.to, {
    message: '`from` must not be after `to`.',
    path: ['from'],
  });
export type ListTracesQuery = z.infer<typeof listTracesQuery>;

export const traceListItemSchema = z.object({
  traceId: z.string(),
  rootSpanId: z.string(),
  name: z.string(),
  service: z.string(),
  status: z.enum(spanStatuses),
  startedAt: z.number().int().describe('Unix ms: the earliest span start.'),
  endedAt: z.number().int().nullable().describe('Unix ms: the latest span end, null while any span is running.'),
  durationMs: z.number().int().nullable(),
  spanCount: z.number().int(),
  inputTokens: z.number().int().nullable(),
  outputTokens: z.number().int().nullable(),
  costUsdNanos: z.number().int().nullable(),
  sessionId: z.string().nullable(),
  endUserId: z.string().nullable(),
});
export type TraceListItem = z.infer<typeof traceListItemSchema>;

const spanSchema = z.object({
  traceId: z.string(),
  spanId: z.string(),
  rootSpanId: z.string(),
  parentSpanId: z.string().nullable(),
  revision: z.number().int(),
  name: z.string(),
  service: z.string(),
  kind: z.enum(spanKinds),
  status: z.enum(spanStatuses),
  startedAt: z.number().int(),
  endedAt: z.number().int().nullable(),
  sessionId: z.string().nullable(),
  endUserId: z.string().nullable(),
  provider: z.string().nullable(),
  model: z.string().nullable(),
  promptVersionId: z.string().nullable(),
  pricingVersion: z.string().nullable(),
  inputTokens: z.number().int().nullable(),
  outputTokens: z.number().int().nullable(),
  costUsdNanos: z.number().int().nullable(),
  costSource: z.enum(costSources).nullable(),
  contentJson: z.string().nullable(),
  metadataJson: z.string().nullable(),
  omitted: z.array(z.enum(omittedParts)),
  application: z.string(),
  environment: z.string(),
  onlineScore: spanOnlineScoreSchema.describe(
    'The online evaluation judge’s verdict on this span (API.md "Online evaluation"); null when it was not scored.',
  ),
});
export type Span = z.infer<typeof spanSchema>;

// A trace is read in pages of at most this many spans (API.md: every document has a bound).
export const traceSpanPageSize = 1000;

export const getTraceQuery = z.strictObject({
  cursor: z.string().min(1).max(500).optional().describe('`nextCursor` of the previous page.'),
});

export const traceSchema = z.object({
  traceId: z.string(),
  spanCount: z.number().int().describe('Spans stored for the trace, over all pages.'),
  spans: z.array(spanSchema).describe(`At most ${traceSpanPageSize} spans, ordered by startedAt, then spanId.`),
  nextCursor: z.string().nullable().describe('Pass as `cursor` for the next spans; null on the last page.'),
});
export type Trace = z.infer<typeof traceSchema>;

// The prompt version a span names (promptVersionId), for the dashboard's link to it.
export type PromptVersionRef = { promptId: string; promptName: string; version: number };
