import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '@/db/client';
import type { RunInfo } from './claim';
import { preModelCheck, unusableRoute, type PreparedRun } from './execute';

/**
 * Cases that would fail before any model call (the run's model route or its judge's is not configured
 * here or has no credentials, an input the prompt's input type cannot take, a missing variable) are recorded as
 * errors before any lane claims them, so they never take a credit: claim_eval_case charges every case
 * it claims, and these are never claimed. Only pending cases are settled (a claimed one was charged when it was
 * claimed). Safe against concurrent claims: the update waits for a claim's row lock and then skips
 * the row, no longer pending; a row it holds is skipped by the claim's SKIP LOCKED, and is no
 * longer pending afterwards. Returns how many cases it settled.
 */
export async function settlePreModelFailures(db: Db, run: RunInfo, prepared: PreparedRun): Promise<number> {
  // A user_message prompt on usable routes runs every (non-empty) input: nothing to read.
  if (unusableRoute(run, prepared) === null && run.content.inputType === 'user_message') return 0;
  const pending = rowsOf<{ id: string; input: string; inputFormat: 'text' | 'json' }>(
    await db.execute(
      sql`select id, input, input_format as "inputFormat" from eval_results where run_id = ${run.id} and status = 'pending'`,
    ),
  );
  const failures: { id: string; error: string }[] = [];
  for (const item of pending) {
    const check = preModelCheck(run, item, prepared);
    if ('error' in check) failures.push({ id: item.id, error: check.error });
  }
  if (!failures.length) return 0;
  const settled = rowsOf<{ id: string }>(
    await db.execute(sql`
      update eval_results r set status = 'error', error = f.error, output = null, passed = null, score = null, assertions = '[]'::jsonb,
        judge_reasoning = null, latency_ms = null, input_tokens = null, output_tokens = null, cost_usd_nanos = null, finished_at = now()
      from jsonb_to_recordset(${JSON.stringify(failures)}::jsonb) as f(id text, error text)
      where r.id = f.id and r.run_id = ${run.id} and r.status = 'pending'
      returning r.id`),
  );
  return settled.length;
}
