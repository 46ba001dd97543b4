import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, json, jsonb, pgTable, real, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns';
import { organizations } from './orgs';
import { prompts } from './prompts';

export const evaluationStatuses = ['pending', 'running', 'paused', 'completed', 'failed', 'cancelled'] as const;

// One comparison (candidate version against pinned production) or one baseline (the setup draft
// snapshot, published as version 1 when every case is scored). Everything it runs on is frozen.
export const evaluations = pgTable(
  'evaluations',
  {
    id: text().primaryKey(),
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    promptId: text()
      .notNull()
      .references(() => prompts.id, { onDelete: 'cascade' }),
    kind: text({ enum: ['comparison', 'baseline'] }).notNull(),
    status: text({ enum: evaluationStatuses }).notNull().default('pending'),
    scope: text({ enum: ['quick', 'comprehensive'] }).notNull(),
    // Candidate version (comparison); for a baseline, version 1 once it is published.
    versionId: text(),
    version: integer(),
    productionVersionId: text(), // pinned at request acceptance
    candidateRunId: text().notNull(),
    productionRunId: text(),
    scoring: jsonb().notNull(),
    datasetSize: integer().notNull(),
    totalCases: integer().notNull(),
    rerunBoth: boolean().notNull().default(false),
    // Baseline: the setup draft revision and the digest of what it froze (content, cases, scoring).
    draftRevision: integer(),
    snapshotDigest: text(),
    error: text(),
    createdBy: text().notNull(),
    createdByClient: text().notNull(),
    // False when an agent (MCP client) started it: the baseline it publishes is not a human's act.
    createdByHuman: boolean().notNull().default(true),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    completedAt: ts('completed_at'),
  },
  (t) => [
    index('evaluations_prompt_idx').on(t.organizationId, t.promptId, t.id),
    index('evaluations_status_idx').on(t.status),
    // The engine finds a run's evaluation from the run (claim checks, progress refresh).
    index('evaluations_candidate_run_idx').on(t.candidateRunId),
    index('evaluations_production_run_idx').on(t.productionRunId),
  ],
);

// One execution of frozen prompt content over frozen cases with a frozen scoring policy. A
// completed production run is evidence that later comparisons with the same reuse key may reuse.
export const evalRuns = pgTable(
  'eval_runs',
  {
    id: text().primaryKey(),
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    promptId: text()
      .notNull()
      .references(() => prompts.id, { onDelete: 'cascade' }),
    versionId: text(), // null for a baseline's draft snapshot
    // json, not jsonb: keys stay in the order written (a tool's JSON Schema orders what a model writes).
    content: json().notNull(),
    scoring: jsonb().notNull(),
    casesDigest: text().notNull(),
    reuseKey: text().notNull(), // digest of (versionId, casesDigest, scoring)
    status: text({ enum: evaluationStatuses }).notNull().default('pending'),
    totalCases: integer().notNull(),
    error: text(),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    completedAt: ts('completed_at'),
  },
  (t) => [
    index('eval_runs_reuse_idx').on(t.organizationId, t.reuseKey, t.status),
    index('eval_runs_status_idx').on(t.status),
  ],
);

// One frozen case of one run: the unit of work, claimed with SKIP LOCKED, executed and charged once.
export const evalResults = pgTable(
  'eval_results',
  {
    id: text().primaryKey(),
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    runId: text()
      .notNull()
      .references(() => evalRuns.id, { onDelete: 'cascade' }),
    caseId: text().notNull(),
    position: integer().notNull(),
    input: text().notNull(),
    expectedOutput: text().notNull(),
    inputFormat: text({ enum: ['text', 'json'] }).notNull(),
    referenceFormat: text({ enum: ['text', 'json'] }).notNull(),
    // pending → running (claimed by a worker) → scored | pending_review | error
    status: text({ enum: ['pending', 'running', 'scored', 'pending_review', 'error'] })
      .notNull()
      .default('pending'),
    output: text(),
    passed: boolean(),
    score: real(),
    assertions: jsonb().notNull().default([]),
    judgeReasoning: text(),
    error: text(),
    review: jsonb(),
    latencyMs: integer(),
    inputTokens: bigint({ mode: 'number' }),
    outputTokens: bigint({ mode: 'number' }),
    costUsdNanos: bigint({ mode: 'number' }),
    attempts: integer().notNull().default(0),
    charged: boolean().notNull().default(false),
    workerId: text(),
    claimedAt: ts('claimed_at'),
    finishedAt: ts('finished_at'),
  },
  (t) => [
    uniqueIndex('eval_results_case_idx').on(t.runId, t.caseId),
    index('eval_results_run_idx').on(t.runId, t.position),
    index('eval_results_work_idx').on(t.status, t.runId),
    // Claimable work of a run in position order, without walking past its finished cases.
    index('eval_results_open_idx')
      .on(t.runId, t.position)
      .where(sql`status in ('pending', 'running')`),
    // Running results per organization: the cross-process concurrency bound counts them at each claim.
    index('eval_results_running_org_idx')
      .on(t.organizationId)
      .where(sql`status = 'running'`),
  ],
);

// Live evaluation workers: a claim held by a worker whose heartbeat stopped is taken over.
export const evalWorkers = pgTable('eval_workers', {
  id: text().primaryKey(),
  startedAt: createdAt(),
  heartbeatAt: ts('heartbeat_at').notNull().defaultNow(),
});
