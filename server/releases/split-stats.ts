import { and, eq, sql } from 'drizzle-orm';
import { rowsOf } from '@/db/client';
import { promptLabels } from '@/db/schema';
import type { DbContext, ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { AppError, notFound } from '../errors';
import { roundScore } from '../numbers';
import { authorizePromptRead } from '../access/organization';
import { flushBeforeRead } from '../retrieval/activity';
import type { SplitStats, SplitVersionStats } from './schemas';

// GET …/labels/{label}/split-stats (API.md "Safe releases"): each version of the label's current
// split, side by side, from the finished model spans that carry its promptVersionId and from the
// retrieval counters, within [from, to] (Unix ms; default the split's life).

type OnlineScore = SplitVersionStats['onlineScore'];
type Window = { organizationId: string; versionIds: string[]; from: number; to: number };

const nothingScored: OnlineScore = { scored: 0, passed: 0, meanScore: null };

// Online evaluation's figures per version over the window (API.md "Online evaluation"): the spans
// scored by the judge among those that started in [from, to], one range of
// online_scores_version_started_idx (version, started_at) per version. The mean is taken over the
// scores as stored (real, cast through numeric so 0.8 stays 0.8).
async function onlineScores(ctx: DbContext, window: Window): Promise<Map<string, OnlineScore>> {
  if (window.versionIds.length === 0) return new Map();
  const rows = rowsOf<{ versionId: string; scored: number; passed: number; meanScore: number | null }>(
    await ctx.db.execute(sql`
      select o.version_id as "versionId", count(*)::int as scored, (count(*) filter (where o.passed))::int as passed,
        avg(o.score::numeric)::float8 as "meanScore"
      from online_scores o
      where o.version_id = any(${sql.param(window.versionIds)}::text[])
        and o.started_at >= ${window.from}::bigint and o.started_at <= ${window.to}::bigint
        and o.organization_id = ${window.organizationId} and o.status = 'scored'
      group by o.version_id`),
  );
  return new Map(
    rows.map((r) => [
      r.versionId,
      {
        scored: Number(r.scored),
        passed: Number(r.passed),
        meanScore: r.meanScore === null ? null : roundScore(Number(r.meanScore)),
      },
    ]),
  );
}

type Row = {
  versionId: string;
  version: number;
  weight: number;
  spans: number;
  errors: number;
  p50: number | null;
  p95: number | null;
  inputTokens: number;
  outputTokens: number;
  costUsdNanos: number;
  retrievals: number;
};

const minuteMs = 60_000;

// One statement for every version of the split, in the split's order. Per version, the spans come
// from one range scan of spans_org_version_started_idx (organization, version, started_at between
// from and to): never the organization's other spans. Counts of one (split, version) are a range
// of retrieval_split_counts' primary key, a version's number one primary-key lookup. Sums and percentiles come back as float8 so both drivers
// answer numbers (exact below 2^53).
async function readFigures(
  ctx: DbContext,
  {
    organizationId,
    splitId,
    from,
    to,
    since,
  }: { organizationId: string; splitId: string; from: number; to: number; since: number },
): Promise<Row[]> {
  // A minute of counts belongs to the window when it overlaps both the window and the split's life
  // (no retrieval of the split is older than the split: a window that ends before it began counts
  // none). The minutes are whole, so both bounds are whole minutes (whole seconds for to_timestamp,
  // exact in float8); an empty overlap makes the first minute come after the last.
  const countsFrom = Math.max(from, since);
  const lastMinute = Math.floor(to / minuteMs) * 60;
  const firstMinute = countsFrom > to ? lastMinute + 60 : Math.floor(countsFrom / minuteMs) * 60;
  const result = await ctx.db.execute(sql`
    select sv.version_id as "versionId", sv.weight as "weight",
      (select v.number from prompt_versions v where v.id = sv.version_id) as "version",
      st.spans as "spans", st.errors as "errors", st.p50 as "p50", st.p95 as "p95",
      st.input_tokens as "inputTokens", st.output_tokens as "outputTokens", st.cost as "costUsdNanos",
      rc.retrievals as "retrievals"
    from prompt_split_versions sv
    cross join lateral (
      select count(*)::int as spans,
        (count(*) filter (where s.status = 'error'))::int as errors,
        (percentile_disc(0.5) within group (order by s.ended_at - s.started_at))::float8 as p50,
        (percentile_disc(0.95) within group (order by s.ended_at - s.started_at))::float8 as p95,
        coalesce(sum(s.input_tokens), 0)::float8 as input_tokens,
        coalesce(sum(s.output_tokens), 0)::float8 as output_tokens,
        coalesce(sum(s.cost_usd_nanos), 0)::float8 as cost
      from spans s
      where s.organization_id = ${organizationId}
        and s.prompt_version_id = sv.version_id
        and s.started_at >= ${from}::bigint and s.started_at <= ${to}::bigint
        and s.kind = 'model' and s.status <> 'running'
    ) st
    cross join lateral (
      select coalesce(sum(r.count), 0)::float8 as retrievals
      from retrieval_split_counts r
      where r.split_id = sv.split_id and r.version_id = sv.version_id
        and r.organization_id = ${organizationId}
        and r.minute >= to_timestamp(${firstMinute}::float8)
        and r.minute <= to_timestamp(${lastMinute}::float8)
    ) rc
    where sv.split_id = ${splitId} and sv.organization_id = ${organizationId}
    order by sv.position
  `);
  return rowsOf<Row>(result);
}

export async function getSplitStats(
  ctx: ServiceContext,
  { organizationId, promptId, label, from, to }: OperationInput<'get_split_stats'>,
): Promise<SplitStats> {
  const { prompt } = await authorizePromptRead(ctx, organizationId, promptId);
  const [row] = await ctx.db
    .select({ splitId: promptLabels.splitId, splitSince: promptLabels.splitSince, updatedAt: promptLabels.updatedAt })
    .from(promptLabels)
    .where(
      and(
        eq(promptLabels.promptId, prompt.id),
        eq(promptLabels.organizationId, organizationId),
        eq(promptLabels.label, label),
      ),
    );
  if (!row) throw notFound('Label');
  if (!row.splitId)
    throw new AppError('invalid_state', `The label "${label}" points at one version: it has no traffic split.`, {
      state: 'no_split',
    });
  const since = row.splitSince ?? row.updatedAt;
  // A window that defaults into emptiness (to before the split began, from after now) has no figures.
  const window = { organizationId, from: from ?? since.getTime(), to: to ?? Date.now() };
  await flushBeforeRead('split-stats');
  const rows = await readFigures(ctx, { ...window, splitId: row.splitId, since: since.getTime() });
  const scores = await onlineScores(ctx, { ...window, versionIds: rows.map((r) => r.versionId) });
  return {
    splitId: row.splitId,
    since: since.toISOString(),
    versions: rows.map((r) => ({
      versionId: r.versionId,
      version: Number(r.version),
      weight: Number(r.weight),
      retrievals: Number(r.retrievals),
      spans: Number(r.spans),
      errorRate: r.spans > 0 ? Number(r.errors) / Number(r.spans) : 0,
      p50LatencyMs: r.p50 === null ? null : Number(r.p50),
      p95LatencyMs: r.p95 === null ? null : Number(r.p95),
      inputTokens: Number(r.inputTokens),
      outputTokens: Number(r.outputTokens),
      costUsdNanos: Number(r.costUsdNanos),
      onlineScore: scores.get(r.versionId) ?? nothingScored,
    })),
  };
}
