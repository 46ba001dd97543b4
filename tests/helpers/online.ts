import { eq, sql } from 'drizzle-orm';
import { getDb, rowsOf } from '@/db/client';
import { onlineScores } from '@/db/schema';
import { otlpFromRequest } from '@/server/api/otlp';
import { runOnlineEvaluationPass } from '@/server/online/worker';
import type { ScoreOptions } from '@/server/online/scorer';
import { call, type TestUser } from './api';
import { batch, span } from './ingestion';

// Online evaluation (API.md "Online evaluation (production traces)"): spans sent through the real
// ingestion endpoints, and the worker's passes run in-process until nothing is left to do.

export const onlinePath = (base: string) => `${base}/online-evaluation`;

export async function setOnline(user: TestUser, base: string, body: Record<string, unknown>) {
  const saved = await user.call('PUT', onlinePath(base), { body });
  if (saved.status !== 200)
    throw new Error(`online evaluation PUT failed: ${saved.status} ${JSON.stringify(saved.body)}`);
  return saved.body;
}

/** A finished model span of a call made with `versionId`; `content` is its contentJson (an object, or raw text). */
export function modelSpan(
  versionId: string | undefined,
  content: unknown,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  const startedAt = (overrides.startedAt as number | undefined) ?? Date.now() - 2000;
  return span({
    kind: 'model',
    status: 'success',
    startedAt,
    endedAt: startedAt + 500,
    promptVersionId: versionId,
    contentJson: content === undefined ? undefined : typeof content === 'string' ? content : JSON.stringify(content),
    ...overrides,
  });
}

/** Posts the events as native batches of at most 50 (the batch limit). */
export async function ingest(secret: string, events: Record<string, unknown>[]): Promise<void> {
  for (let i = 0; i < events.length; i += 50) {
    const sent = await call('POST', '/traces', { token: secret, body: batch(...events.slice(i, i + 50)) });
    if (sent.status !== 200) throw new Error(`ingestion failed: ${sent.status} ${JSON.stringify(sent.body)}`);
  }
}

/** Posts an OTLP/JSON request to POST /api/v1/otel/v1/traces in-process. */
export async function ingestOtlp(secret: string, request: unknown): Promise<{ status: number; body: any }> {
  const response = await otlpFromRequest(
    new Request('http://localhost:3999/api/v1/otel/v1/traces', {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify(request),
    }),
  );
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/**
 * Scanner and scorer passes (no lag) until the scanner has read everything committed before this
 * call and the scorer claims nothing more for these organizations. A pass never reads past a
 * transaction still open elsewhere (another test file's), so the cursor may need a few passes to
 * reach the target.
 */
export async function runOnline(organizationIds: string[], score: ScoreOptions = {}) {
  const db = await getDb();
  const [{ target }] = rowsOf<{ target: string }>(await db.execute(sql`select now()::text as target`));
  const reached = async (cursor: string | null) =>
    cursor === null ||
    rowsOf<{ ok: boolean }>(await db.execute(sql`select ${cursor}::timestamptz >= ${target}::timestamptz as ok`))[0]
      .ok === true;
  // Rows of these organizations only: a pass scans every organization's spans (other test files' too).
  const rowCount = async () =>
    rowsOf<{ n: number }>(
      await db.execute(
        sql`select count(*)::int as n from online_scores where organization_id = any(${sql.param(organizationIds)}::text[])`,
      ),
    )[0].n;
  const before = await rowCount();
  let totals = { sampled: 0, scored: 0, failed: 0, paused: 0, resumed: 0 };
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const { scan, score: scored } = await runOnlineEvaluationPass(db, {
      scan: { lagMs: 0, wait: true },
      score: { retryDelayMs: 0, ...score, organizationIds },
    });
    totals = {
      sampled: 0,
      scored: totals.scored + scored.scored,
      failed: totals.failed + scored.failed,
      paused: totals.paused + scored.paused,
      resumed: totals.resumed + scored.resumed,
    };
    if (!scan.caughtUp || scored.claimed > 0) continue;
    if (await reached(scan.scannedUntil)) return { ...totals, sampled: Number(await rowCount()) - Number(before) };
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('online evaluation passes did not settle');
}

export async function scoreRows(organizationId: string) {
  const db = await getDb();
  return db.select().from(onlineScores).where(eq(onlineScores.organizationId, organizationId));
}

export async function creditsUsed(organizationId: string): Promise<number> {
  const db = await getDb();
  const rows = rowsOf<{ used: number }>(
    await db.execute(sql`select coalesce(sum(used), 0)::int as used from credit_periods where organization_id = ${organizationId}
      and period_start <= now() and period_end > now()`),
  );
  return Number(rows[0]?.used ?? 0);
}
