import { sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { runInTransaction } from '@/server/context';
import type { AppError } from '@/server/errors';
import type { DraftContent, ScoringPolicy } from '@/server/prompts/schemas';
import { evaluationEligibility, usageExhausted, type Eligibility } from '../eligibility';
import { config } from '@/server/config';
import type { EvaluationScope } from '../schemas';
import { rowsOf } from '@/db/client';
import { preparedRows } from '@/db/prepared';
import { retryOnConflict } from '../../conflicts';
import { raiseWarnings } from '@/server/warnings/service';
import { boundedText, storableText } from '../../input-hygiene';

// Claiming and finishing one case (one eval_results row). A claim is one SQL function call: the
// result row is taken with FOR UPDATE SKIP LOCKED, marked running for this worker and charged at
// most once ever; finishing is a conditional write, so a case taken over by another worker or
// finished elsewhere is never written twice.

export type RunInfo = {
  id: string;
  organizationId: string;
  promptId: string;
  content: DraftContent;
  scoring: ScoringPolicy;
  scope: EvaluationScope;
};

export type ClaimedCase = {
  id: string;
  runId: string;
  caseId: string;
  position: number;
  input: string;
  expectedOutput: string;
  inputFormat: 'text' | 'json';
  referenceFormat: 'text' | 'json';
  attempts: number;
  // The run was still `pending` before this claim: progress moves it (and its evaluation) to running.
  firstOfRun: boolean;
};

export type ClaimSettings = { workerId: string; staleMs: number; maxInFlightPerOrg: number; maxAttempts: number };

export type ClaimOutcome =
  | { kind: 'claimed'; claimed: ClaimedCase }
  | { kind: 'none' } // nothing claimable in this run (finished, being worked elsewhere, cancelled or paused)
  | { kind: 'busy' } // the organization's bound is reached by live workers (this or other processes)
  | { kind: 'gave_up'; resultId: string } // abandoned by crashed workers too often: recorded as an error
  | { kind: 'refused'; reason: AppError }; // plan or usage eligibility refused: the evaluation is paused

// The run as the engine needs it, or null when its runs are not workable (finished, cancelled, paused).
export async function loadRun(db: Db, runId: string): Promise<RunInfo | null> {
  const rows = rowsOf<{
    id: string;
    organizationId: string;
    promptId: string;
    content: DraftContent;
    scoring: ScoringPolicy;
    status: string;
    scope: EvaluationScope | null;
  }>(
    await db.execute(sql`
      select run.id, run.organization_id as "organizationId", run.prompt_id as "promptId", run.content, run.scoring, run.status,
        (select e.scope from evaluations e where e.candidate_run_id = run.id or e.production_run_id = run.id order by e.created_at limit 1) as scope
      from eval_runs run where run.id = ${runId}`),
  );
  const row = rows[0];
  if (!row || (row.status !== 'pending' && row.status !== 'running')) return null;
  return {
    id: row.id,
    organizationId: row.organizationId,
    promptId: row.promptId,
    content: row.content,
    scoring: row.scoring,
    scope: row.scope ?? 'quick',
  };
}

// The evaluation and every unfinished run of it pause together; resume (operations) restarts them.
// The evaluation's evaluation_paused warning is raised in the same transaction.
async function pauseForEligibility(tx: Db, runId: string, reason: AppError): Promise<void> {
  const paused = rowsOf<{ id: string; organizationId: string; promptId: string }>(
    await tx.execute(sql`
    with paused as (
      update evaluations set status = 'paused', error = ${reason.message}, updated_at = now()
      where (candidate_run_id = ${runId} or production_run_id = ${runId}) and status in ('pending', 'running')
      returning id, organization_id, prompt_id, candidate_run_id, production_run_id
    ), runs as (
    update eval_runs set status = 'paused', updated_at = now()
    where status in ('pending', 'running')
      and (id = ${runId} or id in (select candidate_run_id from paused) or id in (select production_run_id from paused))
      returning id
    )
    select id, organization_id as "organizationId", prompt_id as "promptId" from paused`),
  );
  await raiseWarnings(
    tx,
    paused.map((e) => ({
      organizationId: e.organizationId,
      kind: 'evaluation_paused' as const,
      subjectId: e.id,
      promptId: e.promptId,
      message: `Evaluation paused: ${reason.message} Resume it once this is fixed, or cancel it.`,
      details: { evaluationId: e.id, reason: reason.code },
    })),
  );
}

type ClaimRow = {
  stored?: boolean;
  outcome: 'claimed' | 'none' | 'busy' | 'gave_up' | 'exhausted';
  id: string | null;
  caseId: string;
  position: number;
  input: string;
  expectedOutput: string;
  inputFormat: 'text' | 'json';
  referenceFormat: 'text' | 'json';
  attempts: number;
  runWasPending: boolean;
};

// Plan eligibility for `execute`, read at most once a second per run (a downgrade pauses the run
// within a second); credits are taken in the claim itself by charge_eval_case.
const eligibilityCache = new Map<string, { at: number; eligibility: Eligibility }>();
async function eligibilityFor(db: Db, run: RunInfo): Promise<Eligibility> {
  const cached = eligibilityCache.get(run.id);
  if (cached && Date.now() - cached.at < 1000) return cached.eligibility;
  const eligibility = await evaluationEligibility(
    { db },
    { organizationId: run.organizationId, scope: run.scope, action: 'execute' },
  );
  if (eligibilityCache.size > 1000) eligibilityCache.clear();
  eligibilityCache.set(run.id, { at: Date.now(), eligibility });
  return eligibility;
}

// A case executed by this worker whose outcome is not stored yet.
export type FinishedCase = { resultId: string; outcome: CaseOutcome };

function toOutcome(run: RunInfo, row: ClaimRow | undefined): ClaimOutcome {
  if (!row || row.outcome === 'none' || row.outcome === 'exhausted') return { kind: 'none' };
  if (row.outcome === 'busy') return { kind: 'busy' };
  if (row.outcome === 'gave_up') return { kind: 'gave_up', resultId: row.id! };
  return {
    kind: 'claimed',
    claimed: {
      id: row.id!,
      runId: run.id,
      caseId: row.caseId,
      position: row.position,
      input: row.input,
      expectedOutput: row.expectedOutput,
      inputFormat: row.inputFormat,
      referenceFormat: row.referenceFormat,
      attempts: row.attempts,
      firstOfRun: row.runWasPending,
    },
  };
}

const claimStatement = `select outcome, id, case_id as "caseId", position, input, expected_output as "expectedOutput", input_format as "inputFormat",
  reference_format as "referenceFormat", attempts, run_was_pending as "runWasPending", stored
  from claim_eval_case($1, $2, $3::int, $4::int, $5::int, $6, $7::jsonb, $8::int, $9::int)`;

// No credit left for the next case (claim_eval_case answered `exhausted`): the evaluation pauses
// with usage_exhausted and its evaluation_paused warning, unless nothing is waiting any more.
async function pauseForCredits(db: Db, run: RunInfo): Promise<ClaimOutcome> {
  const [organization] = rowsOf<{ plan: string }>(
    await db.execute(sql`select plan from organizations where id = ${run.organizationId}`),
  );
  return pauseWaiting(db, run, usageExhausted(organization?.plan ?? 'free'));
}

// Only work that is still waiting pauses; a run whose last cases are in flight just finishes.
async function pauseWaiting(db: Db, run: RunInfo, reason: AppError): Promise<ClaimOutcome> {
  // runInTransaction runs it again on a deadlock.
  const paused = await runInTransaction(db, async (tx) => {
    const waiting = rowsOf<{ id: string }>(
      await tx.execute(sql`select id from eval_results where run_id = ${run.id} and status = 'pending' limit 1`),
    );
    if (waiting.length === 0) return false;
    await pauseForEligibility(tx, run.id, reason);
    return true;
  });
  return paused ? { kind: 'refused', reason } : { kind: 'none' };
}

/**
 * Claims the next case of the run: one call of claim_eval_case (db/functions/claim_eval_case.sql),
 * which is its own transaction: run and evaluation state, the organization's bound across
 * processes, FOR UPDATE SKIP LOCKED, stale takeover, `charged` set and charge_eval_case called once
 * ever per case. Autocommit keeps the organization's claim lock for the function's own runtime only.
 *
 * With `finished`, the outcome of the case this worker executed before is stored in the same call
 * (one round trip per case instead of two); `stored` is false when that
 * case was taken over before it finished (its outcome is dropped). Should the combined call fail,
 * the outcome is stored on its own before the error is rethrown. No credit for the next case
 * (`exhausted`) pauses the evaluation; the stored outcome is kept.
 */
export async function claimNextCase(
  db: Db,
  run: RunInfo,
  settings: ClaimSettings,
  finished?: FinishedCase,
): Promise<{ outcome: ClaimOutcome; stored: boolean | null }> {
  const eligibility = await eligibilityFor(db, run);
  if (!eligibility.allowed) {
    const stored = finished ? await finishCase(db, finished.resultId, settings.workerId, finished.outcome) : null;
    return { outcome: await pauseWaiting(db, run, eligibility.reason), stored };
  }
  // Whatever a provider or judge sent, the outcome is stored: text Postgres cannot hold is replaced,
  // long text cut (finishCase does the same on its own).
  const o = finished && storableOutcome(finished.outcome);
  const store = o
    ? JSON.stringify({
        status: o.status,
        output: o.output,
        passed: o.passed,
        score: o.score,
        assertions: o.assertions,
        judge_reasoning: o.judgeReasoning,
        error: o.error,
        latency_ms: o.latencyMs,
        input_tokens: o.inputTokens,
        output_tokens: o.outputTokens,
        cost_usd_nanos: o.costUsdNanos,
      })
    : null;
  let row: ClaimRow | undefined;
  try {
    [row] = await retryOnConflict(() =>
      preparedRows<ClaimRow>(db, claimStatement, [
        run.id,
        settings.workerId,
        settings.staleMs,
        settings.maxInFlightPerOrg,
        settings.maxAttempts,
        finished?.resultId ?? null,
        store,
        config().evalCreditsFree,
        config().evalCreditsPro,
      ]),
    );
  } catch (error) {
    if (finished) await finishCase(db, finished.resultId, settings.workerId, finished.outcome).catch(() => false);
    throw error;
  }
  const outcome = row?.outcome === 'exhausted' ? await pauseForCredits(db, run) : toOutcome(run, row);
  if (!finished) return { outcome, stored: null };
  return { outcome, stored: row?.stored ?? false };
}

// What a case stores of an output, a judge's reasoning and an error (scored on the whole output
// before): bounded, so that a page of results stays bounded too.
const storedTextLimits = { output: 100_000, judgeReasoning: 10_000, error: 10_000 };

export function storableOutcome(outcome: CaseOutcome): CaseOutcome {
  const text = (value: string | null, max: number) => (value === null ? null : boundedText(storableText(value), max));
  // A count the columns cannot hold is unknown rather than a write that fails (and a case left running).
  const count = (value: number | null) => (value !== null && Number.isSafeInteger(value) && value >= 0 ? value : null);
  return {
    ...outcome,
    latencyMs: count(outcome.latencyMs) !== null && outcome.latencyMs! <= 2_147_483_647 ? outcome.latencyMs : null,
    inputTokens: count(outcome.inputTokens),
    outputTokens: count(outcome.outputTokens),
    costUsdNanos: count(outcome.costUsdNanos),
    output: text(outcome.output, storedTextLimits.output),
    error: text(outcome.error, storedTextLimits.error),
    judgeReasoning: text(outcome.judgeReasoning, storedTextLimits.judgeReasoning),
    assertions: outcome.assertions.map((a) => ({ ...a, name: storableText(a.name), message: storableText(a.message) })),
  };
}

export type CaseOutcome = {
  status: 'scored' | 'pending_review' | 'error';
  output: string | null;
  passed: boolean | null;
  score: number | null;
  assertions: { name: string; passed: boolean; message: string }[];
  judgeReasoning: string | null;
  error: string | null;
  latencyMs: number | null;
  inputTokens: number | null;
  outputTokens: number | null;
  costUsdNanos: number | null;
};

// Writes the outcome only if this worker still holds the case; false when it was taken over.
export async function finishCase(db: Db, resultId: string, workerId: string, given: CaseOutcome): Promise<boolean> {
  const outcome = storableOutcome(given);
  const rows = rowsOf<{ id: string }>(
    await db.execute(sql`
      update eval_results set status = ${outcome.status}, output = ${outcome.output}, passed = ${outcome.passed}, score = ${outcome.score},
        assertions = ${JSON.stringify(outcome.assertions)}::jsonb, judge_reasoning = ${outcome.judgeReasoning}, error = ${outcome.error},
        latency_ms = ${outcome.latencyMs}, input_tokens = ${outcome.inputTokens}, output_tokens = ${outcome.outputTokens},
        cost_usd_nanos = ${outcome.costUsdNanos}, finished_at = now()
      where id = ${resultId} and status = 'running' and worker_id = ${workerId}
      returning id`),
  );
  return rows.length === 1;
}
