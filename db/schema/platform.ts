import { index, integer, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
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
    responseBody: jsonb(),
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
