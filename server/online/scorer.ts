import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '@/db/client';
import { runInTransaction } from '../context';
import { AppError } from '../errors';
import { config } from '../config';
import { creditBalance } from '../billing/state';
import { complete } from '../models/provider';
import { findRoute } from '../models/routes';
import { judgeMessages, parseVerdict } from '../evals/engine/scoring';
import { raiseWarnings, resolveWarning } from '../warnings/service';
import { anyActiveConfiguration } from './scanner';

/**
 * The online-evaluation scorer: claims pending online_scores rows (FOR UPDATE SKIP LOCKED, then a
 * lease in claimed_until, so any number of worker processes share the work), takes one evaluation
 * credit per span the first time it is claimed (charge_eval_case, the same period row as
 * evaluations: never below zero, `charged` makes it once ever), asks the configured judge route to
 * grade the span's output for its input against the rubric (the evaluation engine's judge messages
 * and verdict parser; the built-in local/judge needs no provider), and stores the verdict with the
 * day's figures in online_score_daily in one statement. A failed judge call is tried again after
 * `retryDelayMs`, at most `maxAttempts` times, then the row is `error`.
 *
 * Credits: a prompt whose span cannot be charged pauses (online_eval_configs.paused_at, warning
 * online_evaluation_paused with the prompt as subject) and nothing is charged; while paused, the
 * scanner still samples its spans (the configuration is enabled: only scoring pauses) and every
 * pending row waits. Every pass first resumes the paused configurations of organizations that have
 * credits again (a new period, an upgrade) and resolves their warnings; the waiting rows are then
 * scored, oldest first, as far as the credits go (and it pauses again when they run out).
 */

export type ScoreOptions = {
  /** Rows claimed per pass (default 16). */
  limit?: number;
  /** Judge calls in flight at once (default 4). */
  concurrency?: number;
  /** How long a claim is held before another worker may take the row over (default 5 min). */
  leaseMs?: number;
  /** Judge calls per span before it is recorded as an error (default 3). */
  maxAttempts?: number;
  /** Wait before a failed span is tried again (default 30 s). */
  retryDelayMs?: number;
  /** Only these organizations' rows (tests sharing one database). */
  organizationIds?: readonly string[];
};

export type ScoreResult = { claimed: number; scored: number; failed: number; paused: number; resumed: number };

type Claimed = {
  organizationId: string;
  traceId: string;
  spanId: string;
  promptId: string;
  charged: boolean;
  attempts: number;
  judgeModelRouteId: string;
  rubric: string;
  contentJson: string | null;
};

type Judged = { input: string; output: string };

type Outcome =
  | { kind: 'scored'; passed: boolean; score: number; reasoning: string }
  | { kind: 'failed'; error: string; final: boolean };

const defaults = { limit: 16, concurrency: 4, leaseMs: 5 * 60_000, maxAttempts: 3, retryDelayMs: 30_000 };

const pausedMessage =
  'Online evaluation paused: no evaluation credits are left in this billing period. It resumes by itself when credits are available again (the next period, or an upgrade).';

function scopeOf(organizationIds: readonly string[] | undefined) {
  return organizationIds ? sql`and o.organization_id = any(${sql.param([...organizationIds])}::text[])` : sql``;
}

// A part of the content as the judge reads it: text as is, any other JSON as JSON text.
const asText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

// The span's input and output, or null when its content no longer carries both (a newer revision).
function judgedPart(contentJson: string | null): Judged | null {
  if (contentJson === null) return null;
  let content: unknown;
  try {
    content = JSON.parse(contentJson);
  } catch {
    return null;
  }
  if (!content || typeof content !== 'object' || Array.isArray(content)) return null;
  const { input, output } = content as { input?: unknown; output?: unknown };
  if (input === undefined || input === null || output === undefined || output === null) return null;
  return { input: asText(input), output: asText(output) };
}

/** Resumes the paused configurations of organizations with credits again; the number resumed. */
async function resumePaused(db: Db, organizationIds: readonly string[] | undefined): Promise<number> {
  const scope = organizationIds ? sql`and organization_id = any(${sql.param([...organizationIds])}::text[])` : sql``;
  const organizations = rowsOf<{ organizationId: string }>(
    await db.execute(
      sql`select distinct organization_id as "organizationId" from online_eval_configs where paused_at is not null ${scope}`,
    ),
  );
  let resumed = 0;
  for (const { organizationId } of organizations) {
    if ((await creditBalance(db, organizationId)).remaining <= 0) continue;
    resumed += await runInTransaction(db, async (tx) => {
      const prompts = rowsOf<{ promptId: string }>(
        await tx.execute(sql`
          update online_eval_configs set paused_at = null
          where organization_id = ${organizationId} and paused_at is not null
          returning prompt_id as "promptId"`),
      );
      for (const { promptId } of prompts)
        await resolveWarning(tx, { organizationId, kind: 'online_evaluation_paused', subjectId: promptId });
      return prompts.length;
    });
  }
  return resumed;
}

/**
 * Claims up to `limit` pending rows of enabled, unpaused configurations and charges each one not
 * charged before, in one transaction: a row whose span no longer carries input and output is
 * recorded as an error uncharged; a row that cannot be charged is left pending and pauses its prompt.
 */
async function claim(
  db: Db,
  settings: typeof defaults & ScoreOptions,
): Promise<{ claimed: (Claimed & Judged)[]; paused: number }> {
  return runInTransaction(db, async (tx) => {
    const rows = rowsOf<Claimed>(
      await tx.execute(sql`
        select o.organization_id as "organizationId", o.trace_id as "traceId", o.span_id as "spanId", o.prompt_id as "promptId",
          o.charged, o.attempts, c.judge_model_route_id as "judgeModelRouteId", c.rubric,
          (select s.content_json from spans s
            where s.organization_id = o.organization_id and s.trace_id = o.trace_id and s.span_id = o.span_id limit 1) as "contentJson"
        from online_scores o
        join online_eval_configs c on c.prompt_id = o.prompt_id
        where o.status = 'pending' and (o.claimed_until is null or o.claimed_until < now())
          and c.enabled and c.paused_at is null ${scopeOf(settings.organizationIds)}
        order by o.created_at
        limit ${settings.limit}
        for update of o skip locked`),
    );
    const { evalCreditsFree, evalCreditsPro } = config();
    const claimed: (Claimed & Judged)[] = [];
    const unusable: Claimed[] = [];
    const exhausted = new Set<string>();
    const toPause = new Map<string, string>(); // prompt → organization
    for (const row of rows) {
      const judged = judgedPart(row.contentJson);
      if (!judged) {
        unusable.push(row);
        continue;
      }
      if (!row.charged) {
        const ok =
          !exhausted.has(row.organizationId) &&
          rowsOf<{ ok: boolean }>(
            await tx.execute(
              sql`select charge_eval_case(${row.organizationId}, null::text, null::text, ${evalCreditsFree}::int, ${evalCreditsPro}::int) as ok`,
            ),
          )[0]?.ok === true;
        if (!ok) {
          exhausted.add(row.organizationId);
          toPause.set(row.promptId, row.organizationId);
          continue;
        }
      }
      claimed.push({ ...row, ...judged });
    }
    const keys = (list: Claimed[]) =>
      JSON.stringify(list.map((r) => ({ o: r.organizationId, t: r.traceId, s: r.spanId })));
    if (claimed.length)
      await tx.execute(sql`
        update online_scores set claimed_until = now() + ${settings.leaseMs}::int * interval '1 millisecond',
          attempts = attempts + 1, charged = true
        where (organization_id, trace_id, span_id) in
          (select x.o, x.t, x.s from json_to_recordset(${keys(claimed)}::json) as x(o text, t text, s text))`);
    if (unusable.length)
      await tx.execute(sql`
        update online_scores set status = 'error', error = 'The span no longer carries input and output.', claimed_until = null
        where (organization_id, trace_id, span_id) in
          (select x.o, x.t, x.s from json_to_recordset(${keys(unusable)}::json) as x(o text, t text, s text))`);
    let paused = 0;
    if (toPause.size) {
      const pausedRows = rowsOf<{ promptId: string; organizationId: string }>(
        await tx.execute(sql`
          update online_eval_configs set paused_at = now()
          where prompt_id = any(${sql.param([...toPause.keys()])}::text[]) and paused_at is null
          returning prompt_id as "promptId", organization_id as "organizationId"`),
      );
      paused = pausedRows.length;
      await raiseWarnings(
        tx,
        pausedRows.map((p) => ({
          organizationId: p.organizationId,
          kind: 'online_evaluation_paused' as const,
          subjectId: p.promptId,
          promptId: p.promptId,
          message: pausedMessage,
          details: { promptId: p.promptId, reason: 'usage_exhausted' },
        })),
      );
    }
    return { claimed, paused };
  });
}

function failure(error: unknown): string {
  if (error instanceof AppError) return error.message;
  return error instanceof Error ? `Unexpected failure: ${error.message}` : 'Unexpected failure.';
}

async function judge(row: Claimed & Judged): Promise<Outcome> {
  const route = findRoute(row.judgeModelRouteId);
  if (!route)
    return {
      kind: 'failed',
      final: true,
      error: `The judge model route "${row.judgeModelRouteId}" is not configured on this server.`,
    };
  let answer: string;
  try {
    const completion = await complete(route, {
      messages: judgeMessages({ rubric: row.rubric, input: row.input, expectedOutput: null, output: row.output }),
      temperature: 0,
    });
    answer = completion.output;
  } catch (error) {
    return { kind: 'failed', final: false, error: `The judge failed: ${failure(error)}` };
  }
  const verdict = parseVerdict(answer);
  if (!verdict) {
    const excerpt = answer.length > 200 ? `${answer.slice(0, 200)}…` : answer;
    return {
      kind: 'failed',
      final: false,
      error: `The judge's answer is not a verdict {"pass", "score", "reasoning"}: ${JSON.stringify(excerpt)}`,
    };
  }
  return { kind: 'scored', passed: verdict.pass, score: verdict.score, reasoning: verdict.reasoning };
}

// The verdict and the day's figures in one statement; a row no longer pending (taken over after its
// lease and stored by the other worker) changes nothing.
async function store(db: Db, row: Claimed, outcome: Outcome, settings: typeof defaults & ScoreOptions): Promise<void> {
  const key = sql`organization_id = ${row.organizationId} and trace_id = ${row.traceId} and span_id = ${row.spanId}
    and status = 'pending'`;
  if (outcome.kind === 'scored') {
    await db.execute(sql`
      with done as (
        update online_scores set status = 'scored', passed = ${outcome.passed}, score = ${outcome.score},
          reasoning = ${outcome.reasoning}, judge_model_route_id = ${row.judgeModelRouteId}, scored_at = now(),
          claimed_until = null, error = null
        where ${key}
        returning organization_id, prompt_id, version_id, day
      )
      insert into online_score_daily as d (organization_id, prompt_id, version_id, day, scored, passed, score_sum)
      select organization_id, prompt_id, version_id, day, 1, ${outcome.passed ? 1 : 0}::int, ${outcome.score}::float8 from done
      on conflict (prompt_id, version_id, day) do update
        set scored = d.scored + 1, passed = d.passed + excluded.passed, score_sum = d.score_sum + excluded.score_sum`);
    // The judge answers again: a failing warning of this prompt is over.
    await resolveWarning(db, {
      organizationId: row.organizationId,
      kind: 'online_evaluation_failing',
      subjectId: row.promptId,
    });
    return;
  }
  // attempts already counts this call (the claim added it). A span that ends in error was never
  // scored: its credit goes back (API.md: one credit per scored span), to the period running now,
  // in the same statement (every claimed row was charged by its claim).
  // A span left unscored for good opens (or counts again) online_evaluation_failing on its prompt, in the
  // same transaction: a judge that cannot answer would otherwise lose spans without a word.
  const last = outcome.final ? sql`true` : sql`attempts >= ${settings.maxAttempts}::int`;
  await runInTransaction(db, async (tx) => {
    const [failed] = rowsOf<{ status: string; attempts: number }>(
      await tx.execute(sql`
        with failed as (
          update online_scores set error = ${outcome.error},
            status = case when ${last} then 'error' else 'pending' end,
            charged = case when ${last} then false else charged end,
            claimed_until = case when ${last} then null else now() + ${settings.retryDelayMs}::int * interval '1 millisecond' end
          where ${key}
          returning status, attempts
        ), refund as (
          update credit_periods set used = used - 1
          where organization_id = ${row.organizationId} and period_start <= now() and now() < period_end and used > 0
            and exists (select 1 from failed where status = 'error')
        )
        select status, attempts from failed`),
    );
    if (failed?.status !== 'error') return;
    await raiseWarnings(tx, [
      {
        organizationId: row.organizationId,
        kind: 'online_evaluation_failing',
        subjectId: row.promptId,
        promptId: row.promptId,
        message: `A sampled span could not be scored (${failed.attempts} ${failed.attempts === 1 ? 'try' : 'tries'}): ${outcome.error}`,
        details: {
          promptId: row.promptId,
          judgeModelRouteId: row.judgeModelRouteId,
          traceId: row.traceId,
          spanId: row.spanId,
          error: outcome.error,
        },
        occurrenceId: `${row.traceId}:${row.spanId}`,
      },
    ]);
  });
}

async function eachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
}

/** One pass: resume what has credits again, claim, judge and store one batch. */
export async function scoreOnlineSpans(db: Db, options: ScoreOptions = {}): Promise<ScoreResult> {
  const settings = { ...defaults, ...options };
  const resumed = await resumePaused(db, settings.organizationIds);
  if (!(await anyActiveConfiguration(db))) return { claimed: 0, scored: 0, failed: 0, paused: 0, resumed };
  const { claimed, paused } = await claim(db, settings);
  let scored = 0;
  let failed = 0;
  await eachLimited(claimed, settings.concurrency, async (row) => {
    const outcome = await judge(row);
    await store(db, row, outcome, settings);
    if (outcome.kind === 'scored') scored++;
    else failed++;
  });
  return { claimed: claimed.length, scored, failed, paused, resumed };
}
