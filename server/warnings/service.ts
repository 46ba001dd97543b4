import { and, count, desc, eq, getTableColumns, isNotNull, isNull, sql, type SQL } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { warnings } from '@/db/schema';
import { withTransaction, type DbContext, type ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { notFound } from '../errors';
import { isId, newId } from '../ids';
import { timeCursor, toPage, type Page } from '../paging';
import { authorize } from '../access/permissions';
import { recordAudit } from '../audit/service';
import { authorizeOrganizationWrite } from '../access/organization';
import { emitEvent } from '../webhooks/outbox';
import type { OpenWarningCount, Warning, WarningKind } from './schemas';

// Operational warnings: one row per (organization, kind, subject), written by single upsert
// statements so that any number of processes can raise and resolve the same warning at once.

type WarningRow = typeof warnings.$inferSelect;

export type RaisedWarning = {
  organizationId: string;
  kind: WarningKind;
  subjectId: string;
  promptId?: string | null;
  keyId?: string | null;
  message: string;
  details?: Record<string, unknown>;
  // Occurrences this call stands for (a batch of archived retrievals); default 1.
  occurrences?: number;
  // The id of a distinct occurrence (a webhook event id): equal to the last one counted → no change at all.
  occurrenceId?: string;
  // When it was seen; default now. Tests and periodic checks pass their clock.
  at?: Date;
};

export type ResolvedWarning = { organizationId: string; kind: WarningKind; subjectId: string; at?: Date };

// `count` is an int4: a busy archived prompt (10k requests/s) would overflow it in days, so it saturates.
const maxCount = 2147483647;

function toWarning(row: WarningRow): Warning {
  return {
    id: row.id,
    kind: row.kind as WarningKind,
    message: row.message,
    subjectId: row.subjectId,
    promptId: row.promptId,
    keyId: row.keyId,
    details: (row.details ?? {}) as Record<string, unknown>,
    firstSeenAt: row.firstSeenAt.toISOString(),
    lastSeenAt: row.lastSeenAt.toISOString(),
    count: row.count,
    resolvedAt: row.resolvedAt?.toISOString() ?? null,
  };
}

function valuesOf(w: RaisedWarning, occurrences: number) {
  const at = w.at ?? new Date();
  return {
    id: newId('warn'),
    organizationId: w.organizationId,
    kind: w.kind,
    subjectId: w.subjectId,
    promptId: w.promptId ?? null,
    keyId: w.keyId ?? null,
    message: w.message,
    details: w.details ?? {},
    count: Math.min(maxCount, occurrences),
    lastOccurrenceId: w.occurrenceId ?? null,
    firstSeenAt: at,
    lastSeenAt: at,
    resolvedAt: null,
  };
}

function occurrencesOf(w: RaisedWarning): number {
  const n = Math.floor(w.occurrences ?? 1);
  return Number.isFinite(n) && n >= 1 ? n : 1;
}

// Raisers of one warning queue on an advisory lock per subject (the warnings' own key space), taken
// in one global order (the keys sorted) before any row: so a raiser reads whether a row is resolved
// and upserts it with no other raiser in between, and concurrent batches never wait on each other in
// a cycle. Held until the transaction ends, like the row locks.
const warningLockClass = 0x5741524e; // 'WARN'
async function lockSubjects(db: Db, subjects: RaisedWarning[]): Promise<void> {
  const keys = [...new Set(subjects.map((w) => JSON.stringify([w.organizationId, w.kind, w.subjectId])))].sort();
  await db.execute(
    sql`select pg_advisory_xact_lock(${warningLockClass}::int, hashtext(k)) from unnest(${sql.param(keys)}::text[]) with ordinality as t(k, n) order by n`,
  );
}

// One statement for many subjects. A new row starts open with its occurrences; an existing one adds
// them (saturating), moves lastSeenAt, takes the latest message, merges details and reopens if it
// was resolved; firstSeenAt is kept. A repeated occurrenceId leaves the row untouched.
// Returns the rows this statement opened: inserted (xmax = 0), or reopened. Whether a row was
// resolved is read just before, under the subjects' locks and FOR UPDATE (a resolve waits, or is seen).
async function upsert(db: Db, rows: ReturnType<typeof valuesOf>[]): Promise<WarningRow[]> {
  const previous = await db
    .select({ id: warnings.id, resolvedAt: warnings.resolvedAt })
    .from(warnings)
    .where(
      sql`(${warnings.organizationId}, ${warnings.kind}, ${warnings.subjectId}) in (${sql.join(
        rows.map((r) => sql`(${r.organizationId}, ${r.kind}, ${r.subjectId})`),
        sql`, `,
      )})`,
    )
    .for('update');
  const wasResolved = new Set(previous.filter((p) => p.resolvedAt !== null).map((p) => p.id));
  const written = await db
    .insert(warnings)
    .values(rows)
    .onConflictDoUpdate({
      target: [warnings.organizationId, warnings.kind, warnings.subjectId],
      set: {
        count: sql`least("warnings"."count"::bigint + excluded."count", ${maxCount})::int`,
        lastSeenAt: sql`greatest("warnings"."last_seen_at", excluded."last_seen_at")`,
        message: sql`excluded."message"`,
        details: sql`"warnings"."details" || excluded."details"`,
        promptId: sql`coalesce(excluded."prompt_id", "warnings"."prompt_id")`,
        keyId: sql`coalesce(excluded."key_id", "warnings"."key_id")`,
        lastOccurrenceId: sql`coalesce(excluded."last_occurrence_id", "warnings"."last_occurrence_id")`,
        resolvedAt: sql`null`,
      },
      setWhere: sql`excluded."last_occurrence_id" is null or excluded."last_occurrence_id" is distinct from "warnings"."last_occurrence_id"`,
    })
    .returning({ ...getTableColumns(warnings), inserted: sql<boolean>`"warnings"."xmax" = 0` });
  return written.flatMap(({ inserted, ...row }) => (inserted || wasResolved.has(row.id) ? [row] : []));
}

const subjectKey = (w: { organizationId: string; kind: string; subjectId: string }) =>
  `${w.organizationId}\u0000${w.kind}\u0000${w.subjectId}`;

/**
 * Raises (or counts again, or reopens) the warning of each (organization, kind, subject). Warnings
 * without an occurrenceId are merged per subject; those with one go in rounds of distinct subjects
 * (a subject's later occurrence is compared with the earlier one it follows). Each round is one
 * multi-row statement in a fixed order, after the subjects' locks (lockSubjects).
 * A warning that opens (new, or reopened after being resolved) writes its warning.opened event in
 * the same transaction (one is opened here on the root handle): `target` is a handle, or a context
 * whose afterCommit tells the delivery worker once it commits.
 */
export async function raiseWarnings(target: Db | DbContext, raised: RaisedWarning[]): Promise<void> {
  const merged = new Map<string, { w: RaisedWarning; occurrences: number }>();
  const rounds: Map<string, RaisedWarning>[] = [];
  for (const w of raised) {
    const key = subjectKey(w);
    if (w.occurrenceId !== undefined) {
      let round = rounds.find((r) => !r.has(key));
      if (!round) rounds.push((round = new Map()));
      round.set(key, w);
      continue;
    }
    const seen = merged.get(key);
    // The latest message and details win, as they would in two statements.
    merged.set(key, {
      w: seen ? { ...w, details: { ...seen.w.details, ...w.details } } : w,
      occurrences: (seen?.occurrences ?? 0) + occurrencesOf(w),
    });
  }
  const byKey = <T>(entries: [string, T][]) => entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const statements: ReturnType<typeof valuesOf>[][] = [];
  if (merged.size > 0)
    statements.push(byKey([...merged.entries()]).map(([, { w, occurrences }]) => valuesOf(w, occurrences)));
  for (const round of rounds)
    statements.push(byKey([...round.entries()]).map(([, w]) => valuesOf(w, occurrencesOf(w))));
  if (!statements.length) return;
  const ctx: DbContext = 'select' in target ? { db: target } : target;
  await withTransaction(ctx, async (tx) => {
    await lockSubjects(tx.db, raised);
    for (const rows of statements)
      for (const opened of await upsert(tx.db, rows))
        await emitEvent(tx, { organizationId: opened.organizationId, type: 'warning.opened', data: toWarning(opened) });
  });
}

export async function raiseWarning(target: Db | DbContext, w: RaisedWarning): Promise<void> {
  await raiseWarnings(target, [w]);
}

// Marks the warning resolved when it is open; nothing when there is none or it is resolved already.
export async function resolveWarning(db: Db, w: ResolvedWarning): Promise<void> {
  await db
    .update(warnings)
    .set({ resolvedAt: w.at ?? new Date() })
    .where(
      and(
        eq(warnings.organizationId, w.organizationId),
        eq(warnings.kind, w.kind),
        eq(warnings.subjectId, w.subjectId),
        isNull(warnings.resolvedAt),
      ),
    );
}

// Newest lastSeenAt first. lastSeenAt moves when a warning is raised again, so a page boundary can
// shift while someone pages; each page is exact at the time it is read.
export async function listWarnings(
  ctx: ServiceContext,
  { organizationId, ...query }: OperationInput<'list_warnings'>,
): Promise<Page<Warning>> {
  await authorize(ctx, organizationId, 'warnings.read');
  const where: SQL[] = [eq(warnings.organizationId, organizationId)];
  if (query.state === 'open') where.push(isNull(warnings.resolvedAt));
  if (query.state === 'resolved') where.push(isNotNull(warnings.resolvedAt));
  if (query.kind) where.push(eq(warnings.kind, query.kind));
  if (query.cursor) {
    const { at, id } = timeCursor(query.cursor);
    where.push(sql`(${warnings.lastSeenAt}, ${warnings.id}) < (${at.toISOString()}::timestamptz, ${id})`);
  }
  const rows = await ctx.db
    .select()
    .from(warnings)
    .where(and(...where))
    .orderBy(desc(warnings.lastSeenAt), desc(warnings.id))
    .limit(query.limit + 1);
  return toPage(rows, query.limit, (r) => [r.lastSeenAt.toISOString(), r.id], toWarning);
}

// The navigation badge: one count over the organization's open rows (one row per subject, so few).
export async function countOpenWarnings(ctx: ServiceContext, organizationId: string): Promise<OpenWarningCount> {
  await authorize(ctx, organizationId, 'warnings.read');
  const [row] = await ctx.db
    .select({ open: count() })
    .from(warnings)
    .where(and(eq(warnings.organizationId, organizationId), isNull(warnings.resolvedAt)));
  return { open: Number(row?.open ?? 0) };
}

/**
 * Dismisses a warning (editors and admins): it is resolved now and reopens on its next distinct
 * occurrence. For causes the service cannot see go away (an archived prompt still called by an
 * old deployment). Dismissing a resolved warning returns it unchanged.
 */
export async function dismissWarning(
  ctx: ServiceContext,
  { organizationId, warningId }: OperationInput<'resolve_warning'>,
): Promise<Warning> {
  await authorizeOrganizationWrite(ctx, organizationId, 'warnings.dismiss');
  if (!isId('warn', warningId)) throw notFound('Warning');
  const scope = and(eq(warnings.organizationId, organizationId), eq(warnings.id, warningId));
  const [dismissed] = await ctx.db
    .update(warnings)
    .set({ resolvedAt: new Date() })
    .where(and(scope, isNull(warnings.resolvedAt)))
    .returning();
  if (!dismissed) {
    const [row] = await ctx.db.select().from(warnings).where(scope);
    if (!row) throw notFound('Warning');
    return toWarning(row);
  }
  await recordAudit(ctx, {
    organizationId,
    operation: 'warning.dismiss',
    targetType: 'warning',
    targetId: warningId,
    details: { kind: dismissed.kind, subjectId: dismissed.subjectId, count: dismissed.count },
  });
  return toWarning(dismissed);
}
