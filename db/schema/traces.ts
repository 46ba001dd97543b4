import { bigint, index, integer, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns';
import { organizations } from './orgs';

// plt_ keys: only the SHA-256 digest of the secret is stored and looked up.
export const ingestionKeys = pgTable(
  'ingestion_keys',
  {
    id: text().primaryKey(),
    organizationId: text().notNull().references(() => organizations.id, { onDelete: 'cascade' }),
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

// The latest accepted snapshot of every span. Times are Unix ms as the spec sends them.
export const spans = pgTable(
  'spans',
  {
    organizationId: text().notNull().references(() => organizations.id, { onDelete: 'cascade' }),
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
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.traceId, t.spanId] }),
    index('spans_org_started_idx').on(t.organizationId, t.startedAt),
    // A spanId names one span in its organization: the same id under another traceId is an identity change (409).
    // span_id leads, so lookups of a trace's spans (organization_id, trace_id) always take the primary key.
    uniqueIndex('spans_span_org_idx').on(t.spanId, t.organizationId),
  ],
);
