import { sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import type { DbContext } from '@/server/context';
import { runInTransaction } from '@/server/context';
import type { AppError } from '@/server/errors';
import type { DraftContent, ScoringPolicy } from '@/server/prompts/schemas';
import { evaluationEligibility } from '../eligibility';
import type { EvaluationScope } from '../schemas';
import { retryOnConflict, rowsOf } from './sql';

// Claiming and finishing one case (one eval_results row). A claim is a short transaction: the
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

/**
 * M7 debits one evaluation credit here: called in the claiming transaction, exactly once per case
 * ever (the first claim sets `charged`; a takeover or a retry of the same case does not call it).
 */
export async function chargeCase(_ctx: DbContext, _charge: { organizationId: string; runId: string; resultId: string }): Promise<void> {
  // No credits before M7.
}

// The run as the engine needs it, or null when its runs are not workable (finished, cancelled, paused).
export async function loadRun(db: Db, runId: string): Promise<RunInfo | null> {
  const rows = rowsOf<{ id: string; organizationId: string; promptId: string; content: DraftContent; scoring: ScoringPolicy; status: string; scope: EvaluationScope | null }>(
    await db.execute(sql`
      select run.id, run.organization_id as "organizationId", run.prompt_id as "promptId", run.content, run.scoring, run.status,
        (select e.scope from evaluations e where e.candidate_run_id = run.id or e.production_run_id = run.id order by e.created_at limit 1) as scope
      from eval_runs run where run.id = ${runId}`),
  );
  const row = rows[0];
  if (!row || (row.status !== 'pending' && row.status !== 'running')) return null;
  return { id: row.id, organizationId: row.organizationId, promptId: row.promptId, content: row.content, scoring: row.scoring, scope: row.scope ?? 'quick' };
}

const liveWorker = (staleMs: number) => sql`select 1 from eval_workers w where w.id = r.worker_id and w.heartbeat_at > now() - (${staleMs} * interval '1 millisecond')`;

// The evaluation and every unfinished run of it pause together; resume (operations) restarts them.
async function pauseForEligibility(tx: Db, runId: string, reason: AppError): Promise<void> {
  await tx.execute(sql`
    with paused as (
      update evaluations set status = 'paused', error = ${reason.message}, updated_at = now()
      where (candidate_run_id = ${runId} or production_run_id = ${runId}) and status in ('pending', 'running')
      returning candidate_run_id, production_run_id
    )
    update eval_runs set status = 'paused', updated_at = now()
    where status in ('pending', 'running')
      and (id = ${runId} or id in (select candidate_run_id from paused) or id in (select production_run_id from paused))`);
}

export async function claimNextCase(db: Db, run: RunInfo, settings: ClaimSettings): Promise<ClaimOutcome> {
  return retryOnConflict(() =>
    runInTransaction(db, async (tx, afterCommit) => {
      // Claims of one organization are serialized across processes, so the count below is exact.
      await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`eval-org:${run.organizationId}`}, 0))`);
      // Evaluation, then run: the same order as progress refreshes and the operations take them.
      const evaluations = rowsOf<{ status: string }>(
        await tx.execute(sql`select status from evaluations where candidate_run_id = ${run.id} or production_run_id = ${run.id} order by id for share`),
      );
      if (evaluations.some((e) => e.status === 'cancelled' || e.status === 'paused')) return { kind: 'none' } as const;
      const runs = rowsOf<{ status: string }>(await tx.execute(sql`select status from eval_runs where id = ${run.id} for share`));
      const runStatus = runs[0]?.status;
      if (runStatus !== 'pending' && runStatus !== 'running') return { kind: 'none' } as const;

      const [{ inFlight }] = rowsOf<{ inFlight: number }>(
        await tx.execute(sql`
          select count(*)::int as "inFlight" from eval_results r
          where r.organization_id = ${run.organizationId} and r.status = 'running' and exists (${liveWorker(settings.staleMs)})`),
      );
      if (inFlight >= settings.maxInFlightPerOrg) return { kind: 'busy' } as const;

      const candidates = rowsOf<Omit<ClaimedCase, 'firstOfRun' | 'runId'> & { charged: boolean; status: string }>(
        await tx.execute(sql`
          select r.id, r.case_id as "caseId", r.position, r.input, r.expected_output as "expectedOutput", r.input_format as "inputFormat",
            r.reference_format as "referenceFormat", r.attempts, r.charged, r.status
          from eval_results r
          where r.run_id = ${run.id}
            and (r.status = 'pending' or (r.status = 'running' and not exists (${liveWorker(settings.staleMs)})))
          order by r.position
          limit 1
          for update of r skip locked`),
      );
      const candidate = candidates[0];
      if (!candidate) return { kind: 'none' } as const;

      const eligibility = await evaluationEligibility({ db: tx }, { organizationId: run.organizationId, scope: run.scope, action: 'execute' });
      if (!eligibility.allowed) {
        await pauseForEligibility(tx, run.id, eligibility.reason);
        return { kind: 'refused', reason: eligibility.reason } as const;
      }

      // A case whose claims were all abandoned (its workers died each time) is not tried forever.
      if (candidate.status === 'running' && candidate.attempts >= settings.maxAttempts) {
        await tx.execute(sql`
          update eval_results set status = 'error', finished_at = now(),
            error = ${`The case was started ${candidate.attempts} times and never finished (its worker stopped each time).`}
          where id = ${candidate.id}`);
        return { kind: 'gave_up', resultId: candidate.id } as const;
      }

      await tx.execute(sql`
        update eval_results set status = 'running', worker_id = ${settings.workerId}, claimed_at = now(), attempts = attempts + 1, charged = true
        where id = ${candidate.id}`);
      if (!candidate.charged) await chargeCase({ db: tx, afterCommit }, { organizationId: run.organizationId, runId: run.id, resultId: candidate.id });
      const { charged: _charged, status: _status, ...rest } = candidate;
      return { kind: 'claimed', claimed: { ...rest, runId: run.id, firstOfRun: runStatus === 'pending' } } as const;
    }),
  );
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
export async function finishCase(db: Db, resultId: string, workerId: string, outcome: CaseOutcome): Promise<boolean> {
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
