import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns';
import { organizations } from './orgs';

export const prompts = pgTable(
  'prompts',
  {
    id: text().primaryKey(),
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    name: text().notNull(),
    state: text({ enum: ['setup', 'active', 'archived'] })
      .notNull()
      .default('setup'),
    versionCount: integer().notNull().default(0),
    createdBy: text().notNull(),
    createdAt: createdAt(),
    archivedAt: ts('archived_at'),
  },
  (t) => [index('prompts_org_idx').on(t.organizationId, t.id), index('prompts_org_name_idx').on(t.organizationId, sql`lower(${t.name})`)],
);

// Immutable saved versions, numbered from 1 per prompt.
export const promptVersions = pgTable(
  'prompt_versions',
  {
    id: text().primaryKey(),
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    promptId: text()
      .notNull()
      .references(() => prompts.id, { onDelete: 'cascade' }),
    number: integer().notNull(),
    content: jsonb().notNull(),
    createdBy: text().notNull(),
    createdByClient: text().notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('prompt_versions_number_idx').on(t.promptId, t.number)],
);

// Labels (production, staging, …) point at versions; moving one is a single-row update.
export const promptLabels = pgTable(
  'prompt_labels',
  {
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    promptId: text()
      .notNull()
      .references(() => prompts.id, { onDelete: 'cascade' }),
    label: text().notNull(),
    versionId: text()
      .notNull()
      .references(() => promptVersions.id),
    updatedBy: text().notNull(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.promptId, t.label] })],
);

// One personal draft per (prompt, user); writes are compare-and-swap on revision.
export const drafts = pgTable(
  'drafts',
  {
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    promptId: text()
      .notNull()
      .references(() => prompts.id, { onDelete: 'cascade' }),
    userId: text().notNull(),
    content: jsonb().notNull(),
    revision: integer().notNull().default(0),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.promptId, t.userId] })],
);
