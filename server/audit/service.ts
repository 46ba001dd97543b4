import { and, desc, eq, lt } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { auditLog, users } from '@/db/schema';
import type { ServiceContext } from '../context';
import { newId } from '../ids';
import { toPage, type Page, type PageQuery } from '../paging';
import { idCursor } from '../id-cursor';
import { authorize } from '../access/permissions';

export type AuditEntry = {
  id: string;
  operation: string;
  targetType: string;
  targetId: string;
  userId: string;
  userEmail: string | null;
  /** The email of the member the entry is about, when its target is a user. */
  targetEmail: string | null;
  clientId: string;
  details: Record<string, unknown>;
  createdAt: string;
};

type NewAuditEntry = {
  organizationId: string | null;
  operation: string;
  targetType: string;
  targetId: string;
  details?: Record<string, unknown>;
};

// Called inside the same transaction as the write it describes.
export async function recordAudit(ctx: ServiceContext, entry: NewAuditEntry): Promise<void> {
  await recordAudits(ctx, [entry]);
}

// Several entries of one write in one statement (an import: one entry per imported prompt).
export async function recordAudits(ctx: ServiceContext, entries: NewAuditEntry[]): Promise<void> {
  if (!entries.length) return;
  await ctx.db.insert(auditLog).values(
    entries.map((entry) => ({
      id: newId('aud'),
      organizationId: entry.organizationId,
      userId: ctx.actor.userId,
      clientId: ctx.actor.clientId,
      operation: entry.operation,
      targetType: entry.targetType,
      targetId: entry.targetId,
      details: entry.details ?? {},
    })),
  );
}

export async function listAuditLog(
  ctx: ServiceContext,
  organizationId: string,
  page: PageQuery,
): Promise<Page<AuditEntry>> {
  await authorize(ctx, organizationId, 'audit.read');
  const conditions = [eq(auditLog.organizationId, organizationId)];
  if (page.cursor) conditions.push(lt(auditLog.id, idCursor(page.cursor, 'aud')));
  const targets = alias(users, 'target_user');
  const rows = await ctx.db
    .select({ entry: auditLog, email: users.email, targetEmail: targets.email })
    .from(auditLog)
    .leftJoin(users, eq(users.id, auditLog.userId))
    .leftJoin(targets, and(eq(auditLog.targetType, 'user'), eq(targets.id, auditLog.targetId)))
    .where(and(...conditions))
    .orderBy(desc(auditLog.id))
    .limit(page.limit + 1);
  return toPage(
    rows,
    page.limit,
    (r) => [r.entry.id],
    (r) => ({
      id: r.entry.id,
      operation: r.entry.operation,
      targetType: r.entry.targetType,
      targetId: r.entry.targetId,
      userId: r.entry.userId,
      userEmail: r.email,
      targetEmail: r.targetEmail,
      clientId: r.entry.clientId,
      details: r.entry.details as Record<string, unknown>,
      createdAt: r.entry.createdAt.toISOString(),
    }),
  );
}
