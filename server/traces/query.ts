import { and, asc, desc, eq, gte, lte, sql, type SQL } from 'drizzle-orm';
import { onlineScores, prompts, promptVersions, spanKindBits, spans, traces } from '@/db/schema';
import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { invalidRequest, notFound } from '../errors';
import { decodeCursor, toPage, type Page } from '../paging';
import { authorize } from '../access/permissions';
import {
  traceIdPattern,
  traceSpanPageSize,
  type PromptVersionRef,
  type Span,
  type Trace,
  type TraceListItem,
} from './schemas';

type SpanRow = typeof spans.$inferSelect;

const toNumber = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

/**
 * One summary per trace, newest first, read from the trace summaries that ingestion keeps in the
 * same call as the spans (db/functions/ingest_spans.sql), so the cost of a page never depends on
 * how many spans the organization has. Aggregates cover every stored span of the trace; name,
 * service, status and ids come from the root span, or from the earliest span while the root has
 * not arrived. A trace has ended when none of its spans is running.
 */
export async function listTraces(
  ctx: ServiceContext,
  { organizationId, ...query }: OperationInput<'list_traces'>,
): Promise<Page<TraceListItem>> {
  await authorize(ctx, organizationId, 'traces.read');
  const t = traces;
  // Every filter is an equality or a range on one of the summary indexes (db/schema/traces.ts).
  const where: (SQL | undefined)[] = [eq(t.organizationId, organizationId)];
  // The bit is a literal from the enum, so the planner sees a constant.
  if (query.kind) where.push(sql`(${t.kinds} & ${sql.raw(String(spanKindBits[query.kind]))}) <> 0`);
  if (query.service) where.push(eq(t.service, query.service));
  if (query.status) where.push(eq(t.status, query.status));
  if (query.sessionId) where.push(eq(t.sessionId, query.sessionId));
  if (query.endUserId) where.push(eq(t.endUserId, query.endUserId));
  if (query.from !== undefined) where.push(gte(t.startedAt, query.from));
  if (query.to !== undefined) where.push(lte(t.startedAt, query.to));
  if (query.cursor) {
    const [cursorStart, cursorTrace] = decodeCursor(query.cursor, 2);
    if (!Number.isSafeInteger(cursorStart) || typeof cursorTrace !== 'string')
      throw invalidRequest('The cursor is not valid.', [{ path: 'cursor', message: 'Invalid cursor' }]);
    where.push(sql`(${t.startedAt}, ${t.traceId}) < (${cursorStart}, ${cursorTrace})`);
  }
  const rows = await ctx.db
    .select({
      traceId: t.traceId,
      rootSpanId: t.rootSpanId,
      name: t.name,
      service: t.service,
      status: t.status,
      startedAt: t.startedAt,
      maxEndedAt: t.maxEndedAt,
      runningCount: t.runningCount,
      spanCount: t.spanCount,
      inputTokens: t.inputTokens,
      outputTokens: t.outputTokens,
      costUsdNanos: t.costUsdNanos,
      sessionId: t.sessionId,
      endUserId: t.endUserId,
    })
    .from(t)
    .where(and(...where))
    .orderBy(desc(t.startedAt), desc(t.traceId))
    .limit(query.limit + 1);

  return toPage(
    rows,
    query.limit,
    (r) => [r.startedAt, r.traceId],
    (r): TraceListItem => {
      const ended = r.runningCount === 0 ? toNumber(r.maxEndedAt) : null;
      return {
        traceId: r.traceId,
        rootSpanId: r.rootSpanId,
        name: r.name,
        service: r.service,
        status: r.status as TraceListItem['status'],
        startedAt: r.startedAt,
        endedAt: ended,
        durationMs: ended === null ? null : ended - r.startedAt,
        spanCount: r.spanCount,
        inputTokens: toNumber(r.inputTokens),
        outputTokens: toNumber(r.outputTokens),
        costUsdNanos: toNumber(r.costUsdNanos),
        sessionId: r.sessionId,
        endUserId: r.endUserId,
      };
    },
  );
}

type OnlineScore = Span['onlineScore'];

function toSpan(row: SpanRow, onlineScore: OnlineScore = null): Span {
  return {
    traceId: row.traceId,
    spanId: row.spanId,
    rootSpanId: row.rootSpanId,
    parentSpanId: row.parentSpanId,
    revision: row.revision,
    name: row.name,
    service: row.service,
    kind: row.kind as Span['kind'],
    status: row.status as Span['status'],
    startedAt: row.startedAt,
    endedAt: row.endedAt,
    sessionId: row.sessionId,
    endUserId: row.endUserId,
    provider: row.provider,
    model: row.model,
    promptVersionId: row.promptVersionId,
    pricingVersion: row.pricingVersion,
    inputTokens: row.inputTokens,
    outputTokens: row.outputTokens,
    costUsdNanos: row.costUsdNanos,
    costSource: row.costSource as Span['costSource'],
    contentJson: row.contentJson,
    metadataJson: row.metadataJson,
    omitted: (row.omitted ?? []) as Span['omitted'],
    application: row.application,
    environment: row.environment,
    onlineScore,
  };
}

// The online evaluation verdicts of a page's spans: one lookup through online_scores' primary key
// (organization, trace, span), at most one row per span of the page; only scored spans have one.
async function onlineScoresOf(
  ctx: ServiceContext,
  organizationId: string,
  traceId: string,
  spanIds: string[],
): Promise<Map<string, OnlineScore>> {
  if (spanIds.length === 0) return new Map();
  const o = onlineScores;
  const rows = await ctx.db
    .select({
      spanId: o.spanId,
      passed: o.passed,
      score: o.score,
      reasoning: o.reasoning,
      judgeModelRouteId: o.judgeModelRouteId,
      scoredAt: o.scoredAt,
    })
    .from(o)
    .where(
      and(
        eq(o.organizationId, organizationId),
        eq(o.traceId, traceId),
        eq(o.status, 'scored'),
        sql`${o.spanId} = any(${sql.param(spanIds)}::text[])`,
      ),
    );
  return new Map(
    rows.map((r) => [
      r.spanId,
      {
        passed: r.passed,
        score: r.score,
        reasoning: r.reasoning,
        judgeModelRouteId: r.judgeModelRouteId,
        at: r.scoredAt?.toISOString() ?? null,
      },
    ]),
  );
}

// One page of a trace's spans in (startedAt, spanId) order, at most traceSpanPageSize; nextCursor
// continues after the last span of the page. The first page also says how many spans the trace has.
export async function getTrace(
  ctx: ServiceContext,
  { organizationId, traceId, cursor }: OperationInput<'get_trace'>,
): Promise<Trace> {
  await authorize(ctx, organizationId, 'traces.read');
  if (!traceIdPattern.test(traceId)) throw notFound('Trace');
  const [summary] = await ctx.db
    .select({ spanCount: traces.spanCount })
    .from(traces)
    .where(and(eq(traces.organizationId, organizationId), eq(traces.traceId, traceId)));
  if (!summary) throw notFound('Trace');
  const where = [eq(spans.organizationId, organizationId), eq(spans.traceId, traceId)];
  if (cursor) {
    const [cursorStart, cursorSpan] = decodeCursor(cursor, 2);
    if (!Number.isSafeInteger(cursorStart) || typeof cursorSpan !== 'string')
      throw invalidRequest('The cursor is not valid.', [{ path: 'cursor', message: 'Invalid cursor' }]);
    where.push(sql`(${spans.startedAt}, ${spans.spanId}) > (${cursorStart}, ${cursorSpan})`);
  }
  const rows = await ctx.db
    .select()
    .from(spans)
    .where(and(...where))
    .orderBy(asc(spans.startedAt), asc(spans.spanId))
    .limit(traceSpanPageSize + 1);
  const page = toPage(
    rows,
    traceSpanPageSize,
    (r) => [r.startedAt, r.spanId],
    (r) => r,
  );
  const scores = await onlineScoresOf(
    ctx,
    organizationId,
    traceId,
    page.items.map((r) => r.spanId),
  );
  return {
    traceId,
    spanCount: summary.spanCount,
    spans: page.items.map((r) => toSpan(r, scores.get(r.spanId) ?? null)),
    nextCursor: page.nextCursor,
  };
}

// A span's promptVersionId is whatever the application sent: it names a version of this organization's
// prompts, or nothing the dashboard can link to (null). Another organization's version is null too.
export async function findPromptVersion(
  ctx: ServiceContext,
  organizationId: string,
  versionId: string,
): Promise<PromptVersionRef | null> {
  await authorize(ctx, organizationId, 'prompts.read');
  const row = await versionOfOrganization(ctx.db, organizationId, versionId);
  return row && { promptId: row.promptId, promptName: row.promptName, version: row.version };
}

/** The organization's version with that id, with its prompt's name and its content; null for any other. */
export async function versionOfOrganization(db: ServiceContext['db'], organizationId: string, versionId: string) {
  const [row] = await db
    .select({
      promptId: prompts.id,
      promptName: prompts.name,
      version: promptVersions.number,
      content: promptVersions.content,
    })
    .from(promptVersions)
    .innerJoin(prompts, eq(prompts.id, promptVersions.promptId))
    .where(and(eq(promptVersions.id, versionId), eq(promptVersions.organizationId, organizationId)));
  return row ?? null;
}
