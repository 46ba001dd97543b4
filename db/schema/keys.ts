import { index, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns';
import { organizations } from './orgs';
import { prompts } from './prompts';

// plr_ keys: organization-owned, read-only, scoped to one prompt; only the SHA-256 digest of the
// secret is stored and looked up. No automatic expiry; revocation is explicit.
export const retrievalKeys = pgTable(
  'retrieval_keys',
  {
    id: text().primaryKey(),
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    promptId: text()
      .notNull()
      .references(() => prompts.id, { onDelete: 'cascade' }),
    name: text().notNull(),
    prefix: text().notNull(),
    secretDigest: text().notNull(),
    createdBy: text().notNull(),
    createdByClient: text().notNull(),
    createdAt: createdAt(),
    lastUsedAt: ts('last_used_at'),
    revokedAt: ts('revoked_at'),
  },
  (t) => [
    uniqueIndex('retrieval_keys_digest_idx').on(t.secretDigest),
    index('retrieval_keys_prompt_idx').on(t.organizationId, t.promptId, t.id),
  ],
);

// Operational warnings: one row per (organization, kind, subject), deduplicated; `count` is the number
// of distinct occurrences; resolved when the cause goes away (and reopened if it comes back).
export const warnings = pgTable(
  'warnings',
  {
    id: text().primaryKey(),
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    kind: text().notNull(),
    subjectId: text().notNull(), // the prompt, key, evaluation, subscription or dataset it is about
    promptId: text(),
    keyId: text(),
    message: text().notNull(),
    details: jsonb().notNull().default({}),
    count: integer().notNull().default(1),
    // The last distinct occurrence counted (e.g. a webhook event id), so a redelivery is not counted twice.
    lastOccurrenceId: text(),
    firstSeenAt: ts('first_seen_at').notNull().defaultNow(),
    lastSeenAt: ts('last_seen_at').notNull().defaultNow(),
    resolvedAt: ts('resolved_at'),
  },
  (t) => [
    uniqueIndex('warnings_subject_idx').on(t.organizationId, t.kind, t.subjectId),
    index('warnings_org_idx').on(t.organizationId, t.lastSeenAt, t.id),
  ],
);
