import { bigint, index, integer, json, jsonb, pgSequence, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns';

// Idempotency-Key records: one atomic claim per (user, client, organization, operation, key).
export const idempotencyRecords = pgTable(
  'idempotency_records',
  {
    userId: text().notNull(),
    clientId: text().notNull(),
    organizationId: text().notNull(), // '' for operations outside an organization
    operation: text().notNull(),
    key: text().notNull(),
    requestDigest: text().notNull(),
    claimToken: text().notNull(),
    state: text({ enum: ['in_progress', 'completed'] }).notNull(),
    responseStatus: integer(),
    // json, not jsonb: keys stay in the order written (a tool's JSON Schema orders what a model writes).
    responseBody: json(),
    lockedUntil: ts('locked_until').notNull(),
    expiresAt: ts('expires_at').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.clientId, t.organizationId, t.operation, t.key] }),
    index('idempotency_records_expires_idx').on(t.expiresAt),
  ],
);

// Append-only record of every management write (API.md conventions).
export const auditLog = pgTable(
  'audit_log',
  {
    id: text().primaryKey(),
    organizationId: text(),
    userId: text().notNull(),
    clientId: text().notNull(),
    operation: text().notNull(),
    targetType: text().notNull(),
    targetId: text().notNull(),
    details: jsonb().notNull().default({}),
    createdAt: createdAt(),
  },
  (t) => [index('audit_log_org_idx').on(t.organizationId, t.id)],
);

// The retrieval processes that answer from memory (server/retrieval/answer-cache.ts), one row each
// while it runs: `leaseUntil` is how long it may answer without hearing of a change, `acked` the last
// change it has dropped its answers for. A write that changes what retrieval returns takes the next
// value of `retrieval_changes`, tells every process (NOTIFY), and answers once each live lease has
// acked it or run out (docs/decisions.md, "P2 retrieval answers kept until a change").
export const retrievalCaches = pgTable('retrieval_caches', {
  id: text().primaryKey(),
  leaseUntil: ts('lease_until').notNull(),
  acked: bigint({ mode: 'number' }).notNull().default(0),
  createdAt: createdAt(),
});

export const retrievalChanges = pgSequence('retrieval_changes');
