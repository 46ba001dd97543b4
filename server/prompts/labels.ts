import { and, asc, desc, eq, inArray, lt } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { promptLabelHistory, promptLabels, promptSplitVersions, promptVersions } from '@/db/schema';
import type { DbContext, ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { invalidRequest } from '../errors';
import { integerCursor, toPage, type Page } from '../paging';
import { authorizePromptRead } from '../access/organization';
import { emitEvent } from '../webhooks/outbox';
import { labelPattern, type LabelHistoryItem, type LabelItem, type LabelSplitItem, type SplitEntry } from './schemas';

// Labels: list, history, and the reads a move and a removal share (server/releases/move-label.ts and
// remove-label.ts write labels, since both go through the release policy).

// The label every retrieval without a selector resolves: it can be moved, never removed.
export const productionLabel = 'production';

export function assertLabelName(label: string): void {
  if (!labelPattern.test(label)) {
    throw invalidRequest('The label name is not valid.', [
      {
        path: 'label',
        message: 'Use 1 to 64 lowercase letters, digits or hyphens, starting and ending with a letter or digit.',
      },
    ]);
  }
}

const labelColumns = {
  label: promptLabels.label,
  versionId: promptLabels.versionId,
  version: promptVersions.number,
  updatedAt: promptLabels.updatedAt,
  updatedBy: promptLabels.updatedBy,
  splitId: promptLabels.splitId,
};

type LabelRow = {
  label: string;
  versionId: string;
  version: number;
  updatedAt: Date;
  updatedBy: string;
  splitId: string | null;
};

// The versions of the given splits, in the order given, with their numbers.
async function splitsOf(ctx: DbContext, splitIds: string[]): Promise<Map<string, LabelSplitItem[]>> {
  const bySplit = new Map<string, LabelSplitItem[]>();
  if (!splitIds.length) return bySplit;
  const rows = await ctx.db
    .select({
      splitId: promptSplitVersions.splitId,
      versionId: promptSplitVersions.versionId,
      version: promptVersions.number,
      weight: promptSplitVersions.weight,
    })
    .from(promptSplitVersions)
    .innerJoin(promptVersions, eq(promptVersions.id, promptSplitVersions.versionId))
    .where(inArray(promptSplitVersions.splitId, splitIds))
    .orderBy(asc(promptSplitVersions.splitId), asc(promptSplitVersions.position));
  for (const { splitId, ...entry } of rows) {
    const list = bySplit.get(splitId) ?? [];
    list.push(entry);
    bySplit.set(splitId, list);
  }
  return bySplit;
}

async function toLabels(ctx: DbContext, rows: LabelRow[]): Promise<LabelItem[]> {
  const splits = await splitsOf(
    ctx,
    rows.flatMap((r) => (r.splitId ? [r.splitId] : [])),
  );
  return rows.map((row) => ({
    label: row.label,
    versionId: row.versionId,
    version: row.version,
    updatedAt: row.updatedAt.toISOString(),
    updatedBy: row.updatedBy,
    splitId: row.splitId,
    split: row.splitId ? (splits.get(row.splitId) ?? null) : null,
  }));
}

// Every label of the prompt, in name order (a handful per prompt: not paged).
export async function listLabels(
  ctx: ServiceContext,
  { organizationId, promptId }: OperationInput<'list_labels'>,
): Promise<{ items: LabelItem[] }> {
  const { prompt } = await authorizePromptRead(ctx, organizationId, promptId);
  const rows = await ctx.db
    .select(labelColumns)
    .from(promptLabels)
    .innerJoin(promptVersions, eq(promptVersions.id, promptLabels.versionId))
    .where(and(eq(promptLabels.promptId, prompt.id), eq(promptLabels.organizationId, organizationId)))
    .orderBy(asc(promptLabels.label));
  return { items: await toLabels(ctx, rows) };
}

export type CurrentLabel = { versionId: string; splitId: string | null; split: SplitEntry[] | null };

// The label row, locked for this transaction, with its split; null when the label does not exist.
export async function lockLabel(ctx: ServiceContext, promptId: string, label: string): Promise<CurrentLabel | null> {
  const [row] = await ctx.db
    .select({ versionId: promptLabels.versionId, splitId: promptLabels.splitId })
    .from(promptLabels)
    .where(and(eq(promptLabels.promptId, promptId), eq(promptLabels.label, label)))
    .for('update');
  if (!row) return null;
  if (!row.splitId) return { ...row, split: null };
  const split = (await splitsOf(ctx, [row.splitId])).get(row.splitId) ?? [];
  return { ...row, split: split.map(({ versionId, weight }) => ({ versionId, weight })) };
}

export async function labelItem(ctx: ServiceContext, promptId: string, label: string): Promise<LabelItem> {
  const rows = await ctx.db
    .select(labelColumns)
    .from(promptLabels)
    .innerJoin(promptVersions, eq(promptVersions.id, promptLabels.versionId))
    .where(and(eq(promptLabels.promptId, promptId), eq(promptLabels.label, label)));
  return (await toLabels(ctx, rows))[0];
}

type HistoryRow = typeof promptLabelHistory.$inferSelect;

// The Label history item of a row: the one mapping of the history list and of prompt.label.moved.
export function toLabelHistoryItem(
  entry: HistoryRow,
  fromVersion: number | null,
  toVersion: number | null,
): LabelHistoryItem {
  return {
    promptId: entry.promptId,
    label: entry.label,
    fromVersionId: entry.fromVersionId,
    toVersionId: entry.toVersionId,
    fromVersion,
    toVersion,
    userId: entry.userId,
    clientId: entry.clientId,
    evaluationId: entry.evaluationId,
    at: entry.at.toISOString(),
    source: entry.source,
    toSplit: (entry.toSplit as SplitEntry[] | null) ?? null,
    fromSplit: (entry.fromSplit as SplitEntry[] | null) ?? null,
    override: entry.overrideReason === null ? null : { reason: entry.overrideReason },
  };
}

/**
 * Writes one history row (a move, rollback, split change or removal) and returns it as the history
 * list shows it. Its event is emitLabelMoved's, once the change's own rows are written.
 */
export async function insertLabelHistory(
  ctx: DbContext,
  values: typeof promptLabelHistory.$inferInsert,
): Promise<LabelHistoryItem> {
  const [entry] = await ctx.db.insert(promptLabelHistory).values(values).returning();
  const ids = [entry.fromVersionId, entry.toVersionId].filter((id): id is string => id !== null);
  const numbers = new Map(
    ids.length
      ? (
          await ctx.db
            .select({ id: promptVersions.id, number: promptVersions.number })
            .from(promptVersions)
            .where(inArray(promptVersions.id, ids))
        ).map((v) => [v.id, v.number])
      : [],
  );
  const numberOf = (id: string | null) => (id === null ? null : (numbers.get(id) ?? null));
  return toLabelHistoryItem(entry, numberOf(entry.fromVersionId), numberOf(entry.toVersionId));
}

// prompt.label.moved (API.md "Webhooks"): data is the Label history item.
export async function emitLabelMoved(ctx: DbContext, organizationId: string, item: LabelHistoryItem): Promise<void> {
  await emitEvent(ctx, { organizationId, type: 'prompt.label.moved', data: item });
}

const fromVersions = alias(promptVersions, 'from_versions');
const toVersions = alias(promptVersions, 'to_versions');

// Every move, rollback and removal, newest first; `label` narrows it to one label.
export async function listLabelHistory(
  ctx: ServiceContext,
  { organizationId, promptId, ...query }: OperationInput<'list_label_history'>,
): Promise<Page<LabelHistoryItem>> {
  const { prompt } = await authorizePromptRead(ctx, organizationId, promptId);
  const conditions = [
    eq(promptLabelHistory.promptId, prompt.id),
    eq(promptLabelHistory.organizationId, organizationId),
  ];
  if (query.label !== undefined) {
    assertLabelName(query.label);
    conditions.push(eq(promptLabelHistory.label, query.label));
  }
  if (query.cursor) conditions.push(lt(promptLabelHistory.id, integerCursor(query.cursor)));
  const rows = await ctx.db
    .select({ entry: promptLabelHistory, fromVersion: fromVersions.number, toVersion: toVersions.number })
    .from(promptLabelHistory)
    .leftJoin(fromVersions, eq(fromVersions.id, promptLabelHistory.fromVersionId))
    .leftJoin(toVersions, eq(toVersions.id, promptLabelHistory.toVersionId))
    .where(and(...conditions))
    .orderBy(desc(promptLabelHistory.id))
    .limit(query.limit + 1);
  return toPage(
    rows,
    query.limit,
    (r) => [r.entry.id],
    (r) => toLabelHistoryItem(r.entry, r.fromVersion, r.toVersion),
  );
}
