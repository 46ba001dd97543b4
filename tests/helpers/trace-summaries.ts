import { eq } from 'drizzle-orm';
import { expect } from 'vitest';
import { getDb } from '@/db/client';
import { spanKindBits, spans, traces } from '@/db/schema';

// The trace summaries (traces) that the ingestion functions keep by differences must always equal
// an aggregate computed from scratch over the stored spans (tests/integration/traces.summary.test.ts,
// ingest.group-commit.test.ts).

type SpanRow = typeof spans.$inferSelect;
type Summary = typeof traces.$inferSelect;

// The definition of a summary, written independently of the SQL: head = root when stored, else the
// earliest span by (startedAt, spanId).
function expectedSummaries(rows: SpanRow[]): Summary[] {
  const byTrace = new Map<string, SpanRow[]>();
  for (const row of rows) byTrace.set(row.traceId, [...(byTrace.get(row.traceId) ?? []), row]);
  const minOf = (values: (string | null)[]) => values.filter((v): v is string => v !== null).sort()[0] ?? null;
  const sumOf = (values: (number | null)[]) =>
    values.some((v) => v !== null) ? values.reduce<number>((a, v) => a + (v ?? 0), 0) : null;
  return [...byTrace.entries()]
    .map(([traceId, group]): Summary => {
      const ordered = [...group].sort((a, b) => a.startedAt - b.startedAt || (a.spanId < b.spanId ? -1 : 1));
      const head = group.find((s) => s.spanId === s.rootSpanId) ?? ordered[0];
      const minSession = minOf(group.map((s) => s.sessionId));
      const minEndUser = minOf(group.map((s) => s.endUserId));
      const ended = group.map((s) => s.endedAt).filter((v): v is number => v !== null);
      return {
        organizationId: head.organizationId,
        traceId,
        rootSpanId: head.rootSpanId,
        headSpanId: head.spanId,
        headStartedAt: head.startedAt,
        name: head.name,
        service: head.service,
        status: head.status,
        headSessionId: head.sessionId,
        headEndUserId: head.endUserId,
        minSessionId: minSession,
        minEndUserId: minEndUser,
        sessionId: head.sessionId ?? minSession,
        endUserId: head.endUserId ?? minEndUser,
        startedAt: ordered[0].startedAt,
        maxEndedAt: ended.length ? Math.max(...ended) : null,
        runningCount: group.filter((s) => s.status === 'running').length,
        spanCount: group.length,
        inputTokens: sumOf(group.map((s) => s.inputTokens)),
        outputTokens: sumOf(group.map((s) => s.outputTokens)),
        costUsdNanos: sumOf(group.map((s) => s.costUsdNanos)),
        kinds: group.reduce((bits, s) => bits | spanKindBits[s.kind as keyof typeof spanKindBits], 0),
        // Every span of a trace lives in the trace's partition.
        keepUntil: group.every((s) => s.keepUntil === head.keepUntil) ? head.keepUntil : 'spans in several partitions',
      };
    })
    .sort((a, b) => (a.traceId < b.traceId ? -1 : 1));
}

export async function expectSummariesMatch(organizationId: string) {
  const db = await getDb();
  const rows = await db.select().from(spans).where(eq(spans.organizationId, organizationId));
  const stored = await db
    .select()
    .from(traces)
    .where(eq(traces.organizationId, organizationId))
    .orderBy(traces.traceId);
  expect(stored.map((s) => ({ ...s, inputTokens: s.inputTokens === null ? null : Number(s.inputTokens) }))).toEqual(
    expectedSummaries(rows),
  );
}
