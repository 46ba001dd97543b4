import { and, asc, desc, eq, gte, inArray, sql, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { spans } from '@/db/schema';
import type { ServiceContext } from '../context';
import { invalidRequest, notFound } from '../errors';
import { decodeCursor, toPage, type Page } from '../paging';
import { authorize } from '../auth/permissions';
import { traceIdPattern, type ListTracesQuery, type Span, type Trace, type TraceListItem } from './schemas';

type SpanRow = typeof spans.$inferSelect;

const toNumber = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

/**
 * One summary per trace, newest first. Aggregates cover every stored span of the trace; name,
 * service, status and ids come from the root span, or from the earliest span while the root has
 * not arrived. A trace has ended when none of its spans is running.
 */
export async function listTraces(ctx: ServiceContext, organizationId: string, query: ListTracesQuery): Promise<Page<TraceListItem>> {
  await authorize(ctx, organizationId, 'traces.read');
  const s = spans;
  const traceStart = sql<string>`min(${s.startedAt})`;
  // A value of the head span: the root when it has arrived, else the earliest span.
  const ofHead = (column: PgColumn) => sql`(array_agg(${column} order by (${s.spanId} = ${s.rootSpanId}) desc, ${s.startedAt}, ${s.spanId}))[1]`;
  const traceSessionId = sql<string | null>`coalesce(${ofHead(s.sessionId)}, min(${s.sessionId}))`;
  const traceEndUserId = sql<string | null>`coalesce(${ofHead(s.endUserId)}, min(${s.endUserId}))`;

  // Every filter is a HAVING clause on the per-trace aggregates, so the page is cut before the
  // join and only its head spans are read.
  const having: (SQL | undefined)[] = [];
  if (query.kind) having.push(sql`bool_or(${s.kind} = ${query.kind})`);
  if (query.service) having.push(sql`${ofHead(s.service)} = ${query.service}`);
  if (query.status) having.push(sql`${ofHead(s.status)} = ${query.status}`);
  if (query.sessionId) having.push(sql`${traceSessionId} = ${query.sessionId}`);
  if (query.endUserId) having.push(sql`${traceEndUserId} = ${query.endUserId}`);
  if (query.from !== undefined) having.push(sql`${traceStart} >= ${query.from}`);
  if (query.to !== undefined) having.push(sql`${traceStart} <= ${query.to}`);
  if (query.cursor) {
    const [cursorStart, cursorTrace] = decodeCursor(query.cursor, 2);
    if (!Number.isSafeInteger(cursorStart) || typeof cursorTrace !== 'string') throw invalidRequest('The cursor is not valid.', [{ path: 'cursor', message: 'Invalid cursor' }]);
    having.push(sql`(${traceStart}, ${s.traceId}) < (${cursorStart}, ${cursorTrace})`);
  }
  const where = [eq(s.organizationId, organizationId)];
  // Every span of a trace that started at or after `from` started then too: the index on
  // (organization, startedAt) narrows the traces to aggregate.
  if (query.from !== undefined) {
    const recent = ctx.db
      .select({ traceId: s.traceId })
      .from(s)
      .where(and(eq(s.organizationId, organizationId), gte(s.startedAt, query.from)));
    where.push(inArray(s.traceId, recent));
  }
  const perTrace = ctx.db
    .select({
      traceId: s.traceId,
      startedAt: traceStart.as('trace_started_at'),
      endedAt: sql<string | null>`case when bool_and(${s.endedAt} is not null) then max(${s.endedAt}) end`.as('trace_ended_at'),
      spanCount: sql<string>`count(*)`.as('span_count'),
      inputTokens: sql<string | null>`sum(${s.inputTokens})`.as('input_tokens_sum'),
      outputTokens: sql<string | null>`sum(${s.outputTokens})`.as('output_tokens_sum'),
      costUsdNanos: sql<string | null>`sum(${s.costUsdNanos})`.as('cost_usd_nanos_sum'),
      headSpanId: sql<string>`${ofHead(s.spanId)}`.as('head_span_id'),
      sessionId: traceSessionId.as('trace_session_id'),
      endUserId: traceEndUserId.as('trace_end_user_id'),
    })
    .from(s)
    .where(and(...where))
    .groupBy(s.traceId)
    .having(and(...having))
    .orderBy(desc(traceStart), desc(s.traceId))
    .limit(query.limit + 1)
    .as('trace_summary');

  const rows = await ctx.db
    .select({
      traceId: perTrace.traceId,
      startedAt: perTrace.startedAt,
      endedAt: perTrace.endedAt,
      spanCount: perTrace.spanCount,
      inputTokens: perTrace.inputTokens,
      outputTokens: perTrace.outputTokens,
      costUsdNanos: perTrace.costUsdNanos,
      rootSpanId: s.rootSpanId,
      name: s.name,
      service: s.service,
      status: s.status,
      sessionId: perTrace.sessionId,
      endUserId: perTrace.endUserId,
    })
    .from(perTrace)
    .innerJoin(s, and(eq(s.organizationId, organizationId), eq(s.traceId, perTrace.traceId), eq(s.spanId, perTrace.headSpanId)))
    .orderBy(desc(perTrace.startedAt), desc(perTrace.traceId))
    .limit(query.limit + 1);

  return toPage(
    rows,
    query.limit,
    (r) => [Number(r.startedAt), r.traceId],
    (r): TraceListItem => {
      const started = Number(r.startedAt);
      const ended = toNumber(r.endedAt);
      return {
        traceId: r.traceId,
        rootSpanId: r.rootSpanId,
        name: r.name,
        service: r.service,
        status: r.status as TraceListItem['status'],
        startedAt: started,
        endedAt: ended,
        durationMs: ended === null ? null : ended - started,
        spanCount: Number(r.spanCount),
        inputTokens: toNumber(r.inputTokens),
        outputTokens: toNumber(r.outputTokens),
        costUsdNanos: toNumber(r.costUsdNanos),
        sessionId: r.sessionId,
        endUserId: r.endUserId,
      };
    },
  );
}

function toSpan(row: SpanRow): Span {
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
  };
}

// Every stored span of one trace, in start order.
export async function getTrace(ctx: ServiceContext, organizationId: string, traceId: string): Promise<Trace> {
  await authorize(ctx, organizationId, 'traces.read');
  if (!traceIdPattern.test(traceId)) throw notFound('Trace');
  const rows = await ctx.db
    .select()
    .from(spans)
    .where(and(eq(spans.organizationId, organizationId), eq(spans.traceId, traceId)))
    .orderBy(asc(spans.startedAt), asc(spans.spanId));
  if (!rows.length) throw notFound('Trace');
  return { traceId, spans: rows.map(toSpan) };
}
