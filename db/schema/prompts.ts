import { sql } from 'drizzle-orm';
import { bigserial, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
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
    // The scoring policy { method, judgeModelRouteId?, rubric? }: set by initialize, frozen into each evaluation.
    scoring: jsonb().notNull().default({ method: 'expected' }),
  },
  (t) => [
    index('prompts_org_idx').on(t.organizationId, t.id),
    index('prompts_org_name_idx').on(t.organizationId, sql`lower(${t.name})`),
  ],
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
    // The exact personal draft revision it was saved from: saving the same revision again returns it.
    draftUserId: text(),
    draftRevision: integer(),
    // Version 1: the baseline evaluation that published it.
    sourceEvaluationId: text(),
  },
  (t) => [
    uniqueIndex('prompt_versions_number_idx').on(t.promptId, t.number),
    uniqueIndex('prompt_versions_draft_idx').on(t.promptId, t.draftUserId, t.draftRevision),
  ],
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

// Append-only history of every label move, rollback and removal (toVersionId null = removed).
export const promptLabelHistory = pgTable(
  'prompt_label_history',
  {
    id: bigserial({ mode: 'number' }).primaryKey(),
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    promptId: text()
      .notNull()
      .references(() => prompts.id, { onDelete: 'cascade' }),
    label: text().notNull(),
    fromVersionId: text(),
    toVersionId: text(),
    userId: text().notNull(),
    clientId: text().notNull(),
    evaluationId: text(),
    at: ts('at').notNull().defaultNow(),
    // 'move' for moves, rollbacks and removals; 'import' for the one entry per label an import writes.
    source: text({ enum: ['move', 'import'] })
      .notNull()
      .default('move'),
  },
  (t) => [
    index('prompt_label_history_prompt_idx').on(t.promptId, t.id),
    index('prompt_label_history_label_idx').on(t.promptId, t.label, t.id),
  ],
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
