import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  doublePrecision,
  index,
  integer,
  json,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
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
    // How many versions the prompt has, and the highest number among them (the next save gets
    // that plus one). They differ after an import with gaps in its numbers.
    versionCount: integer().notNull().default(0),
    lastVersionNumber: integer().notNull().default(0),
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
    // json, not jsonb: keys stay in the order written (a tool's JSON Schema orders what a model writes).
    content: json().notNull(),
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
// During a traffic split (M10) `versionId` is the split's largest weight (the first listed on a tie)
// and `splitId` names the split whose versions are in prompt_split_versions.
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
    // spl_…: a new id whenever the split changes; null when the label points at one version.
    splitId: text(),
    // When the current split began (split-stats' default `from`).
    splitSince: ts('split_since'),
  },
  (t) => [primaryKey({ columns: [t.promptId, t.label] })],
);

// The versions of a split, in the order given, each owning the buckets [lo, hi) of 0..99 (the
// cumulative weights): retrieval maps a subject's hash to a bucket and joins the one row holding it.
// Rows of a split that ended are deleted with the move that ended it.
export const promptSplitVersions = pgTable(
  'prompt_split_versions',
  {
    splitId: text().notNull(),
    position: integer().notNull(),
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
    weight: integer().notNull(),
    lo: integer().notNull(),
    hi: integer().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.splitId, t.position] }),
    index('prompt_split_versions_bucket_idx').on(t.splitId, t.lo, t.hi),
    index('prompt_split_versions_prompt_idx').on(t.promptId, t.label),
  ],
);

// Retrievals of a split label per (split, version, minute), flushed by the retrieval process with
// its other activity (server/retrieval/activity.ts): split-stats' `retrievals`.
export const retrievalSplitCounts = pgTable(
  'retrieval_split_counts',
  {
    splitId: text().notNull(),
    versionId: text().notNull(),
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    minute: ts('minute').notNull(),
    count: bigint({ mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.splitId, t.versionId, t.minute] })],
);

// The release policy of a prompt (API.md "Safe releases"); no row = the default policy.
export const promptReleasePolicies = pgTable('prompt_release_policies', {
  promptId: text()
    .primaryKey()
    .references(() => prompts.id, { onDelete: 'cascade' }),
  organizationId: text()
    .notNull()
    .references(() => organizations.id, { onDelete: 'cascade' }),
  protectedLabels: text().array().notNull(),
  requireEvaluation: boolean().notNull(),
  maxPassRateDrop: doublePrecision().notNull(),
  maxRegressions: integer().notNull(),
  updatedBy: text().notNull(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

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
    // Splits (M10): [{ versionId, weight }] the label pointed at after / before this entry; null when one version.
    toSplit: jsonb(),
    fromSplit: jsonb(),
    // An admin's override of the release policy: its reason.
    overrideReason: text(),
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
    // json, not jsonb: keys stay in the order written (a tool's JSON Schema orders what a model writes).
    content: json().notNull(),
    revision: integer().notNull().default(0),
    // The version the content started from: set when the draft is created or discarded (the latest
    // version, 0 when there is none) and when a version is saved or published from it. Null for
    // drafts written before it was kept.
    basedOnVersion: integer(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.promptId, t.userId] })],
);
