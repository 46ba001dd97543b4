import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '@/db/client';
import { runInTransaction } from '../context';
import { samplePointSql } from './sampling';

/**
 * The online-evaluation scanner (API.md "Online evaluation"): one pass reads the spans received
 * since online_eval_scanner.scanned_until that name a prompt version (spans_version_received_idx),
 * keeps the finished model spans of a version whose prompt has an enabled configuration (paused or
 * not: a pause stops scoring, not sampling) that was enabled when the span was received, samples them by span id, and writes one
 * online_scores row per sampled span (`pending`, or `skipped_no_content` when its content lacks
 * input or output) with the day's counts in online_score_daily, in the same statement; then moves
 * scanned_until. It runs in the worker: ingestion never waits for it and is not changed by it.
 *
 * - One scanner at a time: the pass holds the scanner row (FOR UPDATE; SKIP LOCKED in the loop, so
 *   a second worker process skips its turn instead of queueing).
 * - Nothing committed late is missed: ingestion stamps received_at with the clock inside its call
 *   (after its transaction shows in pg_stat_activity), rounded up to the column's milliseconds, and
 *   may commit after a pass has looked. A pass reads only up to the start of the oldest transaction
 *   still open in this database (pg_stat_activity, younger than 10 minutes, so a session forgotten in
 *   a transaction cannot stop the scanner for good) and at least `lagMs` in the past. The cursor keeps
 *   microseconds: rounded up to a millisecond, it could pass the stamps of a transaction still open.
 * - Bounded: about `limit` spans per pass. The cut falls after the limit-th span's received_at and
 *   includes every span of that same instant (one ingestion call shares one received_at), so the
 *   cursor never splits spans of one instant; the next pass goes on from there.
 * - Idempotent: online_scores' primary key (organization, trace, span) with ON CONFLICT DO NOTHING, and the
 *   daily counts are added from the rows actually inserted: a retried batch, a re-upserted span (a
 *   newer revision moves received_at) or a span read twice adds nothing.
 * - Cheap when nothing is enabled: one probe of online_eval_configs, no lock, no write, no span read.
 *   A pass always starts after the earliest enabledAt, so a cursor left behind meanwhile costs nothing.
 */

export type ScanOptions = {
  /** Spans younger than this are left for the next pass (default 1 s). */
  lagMs?: number;
  /** About this many spans per pass (default 2,000). */
  limit?: number;
  /** Wait for a scanner running elsewhere instead of skipping this pass (tests). */
  wait?: boolean;
};
export type ScanResult = {
  /** False when another scanner held the row (this pass skipped its turn). */
  ran: boolean;
  sampled: number;
  skippedNoContent: number;
  /** False when the pass stopped at its limit: more spans are waiting. */
  caughtUp: boolean;
  /** The cursor after the pass (Postgres text, microseconds kept); null when nothing is enabled. */
  scannedUntil: string | null;
};

const defaultLagMs = 1000;
const defaultLimit = 2000;

// The span's content carries input and output: both keys present and not JSON null (OTLP spans
// store a missing or cut part as null). Ingestion stores only valid JSON text (native contentJson is
// validated, OTLP content is serialized by us), so the cast cannot fail; one parse per sampled span.
const contentStatus = sql`(select case
    when json_typeof(x.j) = 'object'
      and coalesce(json_typeof(x.j -> 'input'), 'null') <> 'null'
      and coalesce(json_typeof(x.j -> 'output'), 'null') <> 'null'
    then 'pending' else 'skipped_no_content' end
  from (select s.content_json::json as j) x)`;

/** Whether any prompt has online evaluation enabled (paused or not): one probe of online_eval_configs. */
export async function anyActiveConfiguration(db: Db): Promise<boolean> {
  const [row] = rowsOf<{ active: boolean }>(
    await db.execute(sql`select exists (select 1 from online_eval_configs where enabled) as active`),
  );
  return row?.active === true;
}

export async function scanOnlineSpans(db: Db, options: ScanOptions = {}): Promise<ScanResult> {
  const lagMs = Math.max(0, Math.floor(options.lagMs ?? defaultLagMs));
  const limit = Math.max(1, Math.floor(options.limit ?? defaultLimit));
  // Nothing enabled: no lock, no write. The cursor may stay behind: a pass starts after the earliest
  // enabledAt anyway, so enabling later never walks the spans received meanwhile.
  if (!(await anyActiveConfiguration(db)))
    return { ran: true, sampled: 0, skippedNoContent: 0, caughtUp: true, scannedUntil: null };
  return runInTransaction(db, async (tx) => {
    // Timestamps stay text in this process: microseconds survive the round trip (a JS Date would
    // cut them to milliseconds and could skip spans).
    const [state] = rowsOf<{ bound: string; lower: string | null }>(
      await tx.execute(sql`
        select
          greatest(sc.scanned_until, least(
            now() - ${lagMs}::int * interval '1 millisecond',
            coalesce((
              select min(a.xact_start) from pg_stat_activity a
              where a.datname = current_database() and a.pid <> pg_backend_pid()
                and a.backend_type = 'client backend' and a.xact_start > now() - interval '10 minutes'
            ), 'infinity'::timestamptz) - interval '1 microsecond'
          ))::text as bound,
          -- Spans from before the earliest enabledAt are nobody's: start after them.
          (select case when count(*) > 0 then greatest(sc.scanned_until, min(c.enabled_at) - interval '1 microsecond') end
            from online_eval_configs c where c.enabled)::text as lower
        from online_eval_scanner sc where sc.id = 1
        for update ${options.wait ? sql`` : sql`skip locked`}`),
    );
    if (!state) return { ran: false, sampled: 0, skippedNoContent: 0, caughtUp: false, scannedUntil: null };
    let upper = state.bound;
    let sampled = 0;
    let skippedNoContent = 0;
    let caughtUp = true;
    if (state.lower !== null) {
      const [cut] = rowsOf<{ at: string }>(
        await tx.execute(sql`
          select s.received_at::text as at from spans s
          where s.prompt_version_id is not null
            and s.received_at > ${state.lower}::timestamptz and s.received_at <= ${state.bound}::timestamptz
          order by s.received_at offset ${limit - 1} limit 1`),
      );
      if (cut) {
        upper = cut.at;
        caughtUp = false;
      }
      const [counts] = rowsOf<{ sampled: number; skipped: number }>(
        await tx.execute(sql`
          with candidates as (
            select s.organization_id, s.trace_id, s.span_id, s.started_at, s.prompt_version_id as version_id, v.prompt_id,
              to_char(to_timestamp(s.started_at / 1000.0) at time zone 'UTC', 'YYYY-MM-DD') as day,
              ${contentStatus} as status
            from spans s
            join prompt_versions v on v.id = s.prompt_version_id and v.organization_id = s.organization_id
            join online_eval_configs c on c.prompt_id = v.prompt_id
            join prompts p on p.id = c.prompt_id
            where s.prompt_version_id is not null
              and s.received_at > ${state.lower}::timestamptz and s.received_at <= ${upper}::timestamptz
              and s.kind = 'model' and s.status <> 'running'
              and c.enabled and s.received_at >= c.enabled_at
              and p.state <> 'archived'
              and ${samplePointSql(sql`s.span_id`)} < c.sample_rate
          ), inserted as (
            insert into online_scores (organization_id, trace_id, span_id, prompt_id, version_id, started_at, day, status)
            select organization_id, trace_id, span_id, prompt_id, version_id, started_at, day, status
            from candidates order by organization_id, trace_id, span_id
            on conflict do nothing
            returning organization_id, prompt_id, version_id, day, status
          ), daily as (
            insert into online_score_daily as d (organization_id, prompt_id, version_id, day, sampled, skipped_no_content)
            select organization_id, prompt_id, version_id, day, count(*)::int,
              (count(*) filter (where status = 'skipped_no_content'))::int
            from inserted group by organization_id, prompt_id, version_id, day
            order by prompt_id, version_id, day
            on conflict (prompt_id, version_id, day) do update
              set sampled = d.sampled + excluded.sampled, skipped_no_content = d.skipped_no_content + excluded.skipped_no_content
          )
          select count(*)::int as sampled, (count(*) filter (where status = 'skipped_no_content'))::int as skipped
          from inserted`),
      );
      sampled = Number(counts?.sampled ?? 0);
      skippedNoContent = Number(counts?.skipped ?? 0);
    }
    await tx.execute(sql`update online_eval_scanner set scanned_until = ${upper}::timestamptz where id = 1`);
    return { ran: true, sampled, skippedNoContent, caughtUp, scannedUntil: upper };
  });
}
