import { sql } from 'drizzle-orm';
import { bigint, boolean, date, index, integer, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns';
import { organizations } from './orgs';

// plt_ keys: only the SHA-256 digest of the secret is stored and looked up.
export const ingestionKeys = pgTable(
  'ingestion_keys',
  {
    id: text().primaryKey(),
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    name: text().notNull(),
    application: text().notNull(),
    environment: text().notNull(),
    prefix: text().notNull(),
    secretDigest: text().notNull().unique(),
    createdBy: text().notNull(),
    createdAt: createdAt(),
    lastUsedAt: ts('last_used_at'),
    revokedAt: ts('revoked_at'),
  },
  (t) => [index('ingestion_keys_org_idx').on(t.organizationId, t.id)],
);

// How long a trace first seen under each plan is kept (TRACE_RETENTION_DAYS_FREE/PRO, written by
// every process at start: server/traces/retention.ts). The ingestion functions read it to set a new
// trace's keepUntil.
export const traceRetention = pgTable('trace_retention', {
  plan: text().primaryKey(),
  days: integer().notNull(),
});

// Retention (P2, docs/decisions.md "Partitioned trace store"): spans and traces are partitioned
// by RANGE (keep_until), one partition per week (spans_kYYYYMMDD, traces_kYYYYMMDD from that
// Monday), created ahead and detached and dropped by the worker once the week has passed
// (server/traces/retention.ts), never deleted row by row. keep_until is the trace's: the day it
// was first stored plus its organization's retention then; all spans of a trace share it, so a
// trace and its spans live and go together. The migration that partitions them is hand-written
// (0039); Drizzle sees plain tables with keep_until in every unique key, as Postgres requires.

// The latest accepted snapshot of every span. Times are Unix ms as the spec sends them.
export const spans = pgTable(
  'spans',
  {
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    traceId: text().notNull(),
    spanId: text().notNull(),
    rootSpanId: text().notNull(),
    parentSpanId: text(),
    revision: integer().notNull(),
    name: text().notNull(),
    service: text().notNull(),
    kind: text().notNull(),
    status: text().notNull(),
    startedAt: bigint({ mode: 'number' }).notNull(),
    endedAt: bigint({ mode: 'number' }),
    sessionId: text(),
    endUserId: text(),
    provider: text(),
    model: text(),
    promptVersionId: text(),
    pricingVersion: text(),
    inputTokens: bigint({ mode: 'number' }),
    outputTokens: bigint({ mode: 'number' }),
    costUsdNanos: bigint({ mode: 'number' }),
    costSource: text(),
    contentJson: text(),
    metadataJson: text(),
    omitted: text().array(),
    // Digest of the canonical snapshot: an identical retry is recognised without comparing every field.
    snapshotDigest: text().notNull(),
    ingestionKeyId: text().notNull(),
    application: text().notNull(),
    environment: text().notNull(),
    receivedAt: ts('received_at').notNull().defaultNow(),
    keepUntil: date({ mode: 'string' }).notNull(),
    // Stored through OTLP, whose spans carry no root: the trace's root is computed for them. A span of
    // the native API (false) declares its trace's root, which OTLP spans never move.
    fromOtlp: boolean().notNull().default(false),
  },
  (t) => [
    // A span is named by its trace and span ids (OpenTelemetry's rule): the same spanId under another
    // traceId is another span. All spans of a trace share its partition (keep_until).
    primaryKey({ columns: [t.organizationId, t.traceId, t.spanId, t.keepUntil] }),
    index('spans_org_started_idx').on(t.organizationId, t.startedAt),
    // Split stats and online scores per version (M10/M11): only spans that name a prompt version.
    index('spans_org_version_started_idx')
      .on(t.organizationId, t.promptVersionId, t.startedAt)
      .where(sql`${t.promptVersionId} is not null`),
    // The online-evaluation scanner reads spans that name a prompt version in the order they arrived.
    index('spans_version_received_idx')
      .on(t.receivedAt)
      .where(sql`${t.promptVersionId} is not null`),
  ],
);

// Bit of each span kind in traces.kinds, in the order of spanKinds (server/traces/schemas.ts);
// db/functions/span_kind_bit.sql maps the same order.
export const spanKindBits = { execution: 1, model: 2, attempt: 4, tool: 8, retrieval: 16, custom: 32 } as const;

// One summary per trace, kept equal to an aggregate over its spans by ingest_spans in the same
// call as the span upsert (db/functions/ingest_spans.sql), so the trace list never aggregates spans.
// Head values come from the root span once it has arrived, else from the earliest span by
// (startedAt, spanId).
export const traces = pgTable(
  'traces',
  {
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    traceId: text().notNull(),
    rootSpanId: text().notNull(),
    headSpanId: text().notNull(),
    headStartedAt: bigint({ mode: 'number' }).notNull(),
    name: text().notNull(),
    service: text().notNull(),
    status: text().notNull(),
    headSessionId: text(),
    headEndUserId: text(),
    // Lowest value over all spans: the trace's sessionId/endUserId when the head has none.
    minSessionId: text(),
    minEndUserId: text(),
    // coalesce(head value, lowest value): what the list shows and filters on.
    sessionId: text(),
    endUserId: text(),
    startedAt: bigint({ mode: 'number' }).notNull(),
    maxEndedAt: bigint({ mode: 'number' }),
    runningCount: integer().notNull(),
    spanCount: integer().notNull(),
    inputTokens: bigint({ mode: 'number' }),
    outputTokens: bigint({ mode: 'number' }),
    costUsdNanos: bigint({ mode: 'number' }),
    // OR of spanKindBits over the trace's spans.
    kinds: integer().notNull(),
    keepUntil: date({ mode: 'string' }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.traceId, t.keepUntil] }),
    // trace_id leads, so ingest_spans' lookup of a batch's traces (`trace_id = … AND
    // organization_id || '' = …`) can only take this index, whatever a cached generic plan estimated
    // (every other index leads with organization_id, which ties on a small table).
    uniqueIndex('traces_trace_org_idx').on(t.traceId, t.organizationId, t.keepUntil),
    // The list is newest first on (startedAt, traceId), read by scanning these backwards; each
    // equality filter has its own prefix. (DESC NULLS LAST columns would not match ORDER BY … DESC.)
    index('traces_org_started_idx').on(t.organizationId, t.startedAt, t.traceId),
    index('traces_org_service_started_idx').on(t.organizationId, t.service, t.startedAt, t.traceId),
    index('traces_org_status_started_idx').on(t.organizationId, t.status, t.startedAt, t.traceId),
    index('traces_org_session_started_idx')
      .on(t.organizationId, t.sessionId, t.startedAt, t.traceId)
      .where(sql`${t.sessionId} is not null`),
    index('traces_org_end_user_started_idx')
      .on(t.organizationId, t.endUserId, t.startedAt, t.traceId)
      .where(sql`${t.endUserId} is not null`),
  ],
);
