import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  doublePrecision,
  index,
  integer,
  pgTable,
  primaryKey,
  real,
  text,
  timestamp,
} from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns';
import { organizations } from './orgs';
import { prompts } from './prompts';

// Online evaluation (API.md "Online evaluation (production traces)"): a per-prompt configuration,
// one row per sampled span (never two: the primary key), and daily aggregates per version.

export const onlineEvalConfigs = pgTable('online_eval_configs', {
  promptId: text()
    .primaryKey()
    .references(() => prompts.id, { onDelete: 'cascade' }),
  organizationId: text()
    .notNull()
    .references(() => organizations.id, { onDelete: 'cascade' }),
  enabled: boolean().notNull(),
  sampleRate: doublePrecision().notNull(),
  judgeModelRouteId: text().notNull(),
  rubric: text().notNull(),
  // Spans received before this (while disabled) are never scored.
  enabledAt: ts('enabled_at'),
  // Set while scoring waits for credits (warning online_evaluation_paused); cleared on resume.
  pausedAt: ts('paused_at'),
  updatedBy: text().notNull(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

// One row per sampled span: `skipped_no_content` when it carries no input/output, else pending until
// the judge has scored it (`scored`) or gave up (`error`).
export const onlineScores = pgTable(
  'online_scores',
  {
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    traceId: text().notNull(),
    spanId: text().notNull(),
    promptId: text()
      .notNull()
      .references(() => prompts.id, { onDelete: 'cascade' }),
    versionId: text().notNull(),
    // The span's start (Unix ms) and its UTC day.
    startedAt: bigint({ mode: 'number' }).notNull(),
    day: text().notNull(), // YYYY-MM-DD
    status: text({ enum: ['pending', 'scored', 'error', 'skipped_no_content'] }).notNull(),
    passed: boolean(),
    score: real(),
    reasoning: text(),
    judgeModelRouteId: text(),
    error: text(),
    attempts: integer().notNull().default(0),
    // Lease of a worker scoring it (SKIP LOCKED claim); charged once.
    claimedUntil: ts('claimed_until'),
    charged: boolean().notNull().default(false),
    createdAt: createdAt(),
    scoredAt: ts('scored_at'),
  },
  (t) => [
    // A span is named by its trace and span ids; the key also serves the lookups of a trace's scores.
    primaryKey({ columns: [t.organizationId, t.traceId, t.spanId] }),
    index('online_scores_version_started_idx').on(t.versionId, t.startedAt),
    index('online_scores_pending_idx')
      .on(t.createdAt)
      .where(sql`status = 'pending'`),
  ],
);

// Daily aggregates per (prompt, version, UTC day), kept by the same statements that change online_scores.
export const onlineScoreDaily = pgTable(
  'online_score_daily',
  {
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    promptId: text()
      .notNull()
      .references(() => prompts.id, { onDelete: 'cascade' }),
    versionId: text().notNull(),
    day: text().notNull(),
    sampled: integer().notNull().default(0),
    scored: integer().notNull().default(0),
    passed: integer().notNull().default(0),
    scoreSum: doublePrecision().notNull().default(0),
    skippedNoContent: integer().notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.promptId, t.versionId, t.day] }),
    index('online_score_daily_prompt_day_idx').on(t.promptId, t.day),
  ],
);

// The scanner's position in the stream of ingested spans (one row): spans received after it that
// name a prompt version are the candidates for sampling. Microseconds, unlike other timestamps: a
// pass's bound comes from transaction starts, and a cursor rounded up past it would skip spans.
export const onlineEvalScanner = pgTable('online_eval_scanner', {
  id: integer().primaryKey(),
  scannedUntil: timestamp('scanned_until', { withTimezone: true, precision: 6 }).notNull(),
});
