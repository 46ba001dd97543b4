import { and, asc, desc, eq, inArray, lt, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { promptLabelHistory, promptLabels, promptSplitVersions, promptVersions } from '@/db/schema';
import type { DbContext, ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { AppError, invalidRequest, notFound } from '../errors';
import { isId, newId } from '../ids';
import { integerCursor, toPage, type Page } from '../paging';
import { recordAudit } from '../audit/service';
import { authorizePromptRead, authorizePromptWrite, type PromptRow } from '../access/organization';
import { can } from '../auth/schemas';
import type { EvaluationRow } from '../evals/serialize';
import { enforceGate, loadMoveEvaluation } from '../releases/gate';
import { loadReleasePolicy } from '../releases/policy';
import { labelPattern, type LabelHistoryItem, type LabelItem, type LabelSplitItem, type SplitEntry } from './schemas';

// The label every retrieval without a selector resolves: it can be moved, never removed.
const productionLabel = 'production';

function assertLabelName(label: string): void {
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

type VersionRef = { id: string; number: number };

// The versions a move names, each of this prompt (else 404; a prompt in setup has none), in the order given.
async function requireVersions(ctx: ServiceContext, prompt: PromptRow, versionIds: string[]): Promise<VersionRef[]> {
  if (!versionIds.every((id) => isId('ver', id))) throw notFound('Version');
  const rows = await ctx.db
    .select({ id: promptVersions.id, number: promptVersions.number })
    .from(promptVersions)
    .where(
      and(
        inArray(promptVersions.id, versionIds),
        eq(promptVersions.promptId, prompt.id),
        eq(promptVersions.organizationId, prompt.organizationId),
      ),
    );
  const byId = new Map(rows.map((r) => [r.id, r]));
  return versionIds.map((id) => {
    const row = byId.get(id);
    if (!row) throw notFound('Version');
    return row;
  });
}

// Without the gate: the comparison that justifies a move is completed, with this version as its candidate.
function assertJustifies(evaluation: EvaluationRow, versionId: string): void {
  if (evaluation.kind !== 'comparison') {
    throw new AppError('invalid_state', 'Only a comparison evaluation can justify a label move.', {
      state: evaluation.status,
      kind: evaluation.kind,
    });
  }
  if (evaluation.status !== 'completed') {
    throw new AppError(
      'invalid_state',
      `The evaluation is ${evaluation.status}; only a completed comparison can justify a label move.`,
      { state: evaluation.status },
    );
  }
  if (evaluation.versionId !== versionId) {
    throw new AppError(
      'invalid_state',
      'The evaluation’s candidate is another version than the one the label would point at.',
      { state: evaluation.status, candidateVersionId: evaluation.versionId },
    );
  }
}

type CurrentLabel = { versionId: string; splitId: string | null; split: SplitEntry[] | null };

// The label row, locked for this transaction, with its split; null when the label does not exist.
async function lockLabel(ctx: ServiceContext, promptId: string, label: string): Promise<CurrentLabel | null> {
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

async function labelItem(ctx: ServiceContext, promptId: string, label: string): Promise<LabelItem> {
  const rows = await ctx.db
    .select(labelColumns)
    .from(promptLabels)
    .innerJoin(promptVersions, eq(promptVersions.id, promptLabels.versionId))
    .where(and(eq(promptLabels.promptId, promptId), eq(promptLabels.label, label)));
  return (await toLabels(ctx, rows))[0];
}

// Of the given versions, those the label pointed at before: its current ones and any in its history
// (as toVersionId or inside a toSplit). Moving back to them is a rollback, never blocked.
async function pointedAtBefore(
  ctx: ServiceContext,
  promptId: string,
  label: string,
  versionIds: string[],
  current: CurrentLabel,
): Promise<Set<string>> {
  const known = new Set([current.versionId, ...(current.split ?? []).map((e) => e.versionId)]);
  const unknown = versionIds.filter((id) => !known.has(id));
  if (!unknown.length) return known;
  const rows = await ctx.db
    .select({ id: promptVersions.id })
    .from(promptVersions)
    .where(
      and(
        inArray(promptVersions.id, unknown),
        sql`exists (select 1 from prompt_label_history h
          where h.prompt_id = ${promptId} and h.label = ${label}
            and (h.to_version_id = ${promptVersions.id}
              or h.to_split @> jsonb_build_array(jsonb_build_object('versionId', ${promptVersions.id}::text))))`,
      ),
    );
  for (const row of rows) known.add(row.id);
  return known;
}

const sameSplit = (a: SplitEntry[] | null, b: SplitEntry[]): boolean =>
  a !== null && a.length === b.length && a.every((e, i) => e.versionId === b[i].versionId && e.weight === b[i].weight);

// The version a split's label names: the largest weight, the first listed on a tie.
const primaryOf = (split: SplitEntry[]): string =>
  split.reduce((best, entry) => (entry.weight > best.weight ? entry : best)).versionId;

// Writes a split's versions with their buckets [lo, hi) of 0..99 (the cumulative weights).
async function insertSplit(
  ctx: ServiceContext,
  prompt: PromptRow,
  label: string,
  splitId: string,
  split: SplitEntry[],
): Promise<void> {
  let lo = 0;
  await ctx.db.insert(promptSplitVersions).values(
    split.map((entry, position) => {
      const row = {
        splitId,
        position,
        organizationId: prompt.organizationId,
        promptId: prompt.id,
        label,
        versionId: entry.versionId,
        weight: entry.weight,
        lo,
        hi: lo + entry.weight,
      };
      lo += entry.weight;
      return row;
    }),
  );
}

/**
 * Points a label at one version of this prompt, or splits its traffic between 2–4 versions (a move,
 * or a rollback when it goes back), creating the label on first use. Concurrent moves of one label
 * serialize on its row, so the history chains (each row's `from` is the previous row's `to`) and the
 * release policy's gate is checked against what the label points at when the move commits.
 * Re-sending what the label already points at changes nothing and writes no history. A setup
 * prompt has no versions, so every version id is 404 there.
 */
export async function moveLabel(
  ctx: ServiceContext,
  {
    organizationId,
    promptId,
    label,
    versionId,
    split: splitInput,
    evaluationId,
    override,
  }: OperationInput<'move_label'>,
): Promise<LabelItem> {
  assertLabelName(label);
  const { db } = ctx;
  const { prompt, membership } = await authorizePromptWrite(ctx, organizationId, promptId);
  if (override && !can(membership.role, 'prompts.releasePolicy'))
    throw new AppError('admin_required', 'Only an admin can override the release policy.', {
      requiredRole: 'admin',
      role: membership.role,
    });
  const split = splitInput ?? null;
  const targets = await requireVersions(ctx, prompt, split ? split.map((e) => e.versionId) : [versionId!]);
  const targetVersionId = split ? primaryOf(split) : targets[0].id;
  const evaluation = evaluationId === undefined ? null : await loadMoveEvaluation(ctx, prompt, evaluationId);

  const now = new Date();
  let current: CurrentLabel | null;
  for (;;) {
    current = await lockLabel(ctx, prompt.id, label);
    if (current) break;
    // A new label: the insert waits for a concurrent creator and then does nothing; the loop
    // then locks the row that one made. (A label that points at nothing has nothing to protect.)
    const [created] = await db
      .insert(promptLabels)
      .values({
        organizationId,
        promptId: prompt.id,
        label,
        versionId: targetVersionId,
        updatedBy: ctx.actor.userId,
        updatedAt: now,
        splitId: split ? newId('spl', now.getTime()) : null,
        splitSince: split ? now : null,
      })
      .onConflictDoNothing({ target: [promptLabels.promptId, promptLabels.label] })
      .returning({ splitId: promptLabels.splitId });
    if (created) {
      if (split && created.splitId) await insertSplit(ctx, prompt, label, created.splitId, split);
      break;
    }
  }

  if (current) {
    const unchanged = split
      ? sameSplit(current.split, split)
      : current.split === null && current.versionId === targetVersionId;
    if (unchanged) return labelItem(ctx, prompt.id, label);
    if (!override) {
      const policy = await loadReleasePolicy(ctx, prompt);
      if (policy.protectedLabels.includes(label) && policy.requireEvaluation) {
        const before = await pointedAtBefore(
          ctx,
          prompt.id,
          label,
          targets.map((t) => t.id),
          current,
        );
        const newVersions = targets.filter((t) => !before.has(t.id));
        if (newVersions.length)
          await enforceGate(ctx, {
            policy,
            label,
            newVersions,
            currentVersionIds: [current.versionId, ...(current.split ?? []).map((e) => e.versionId)],
            evaluation,
          });
      } else if (evaluation && !split) assertJustifies(evaluation, targetVersionId);
    }
    const splitId = split ? newId('spl', now.getTime()) : null;
    if (current.splitId) await db.delete(promptSplitVersions).where(eq(promptSplitVersions.splitId, current.splitId));
    await db
      .update(promptLabels)
      .set({
        versionId: targetVersionId,
        updatedBy: ctx.actor.userId,
        updatedAt: now,
        splitId,
        splitSince: split ? now : null,
      })
      .where(and(eq(promptLabels.promptId, prompt.id), eq(promptLabels.label, label)));
    if (split && splitId) await insertSplit(ctx, prompt, label, splitId, split);
  } else if (evaluation && !override && !split) assertJustifies(evaluation, targetVersionId);

  const fromVersionId = current?.versionId ?? null;
  const fromSplit = current?.split ?? null;
  await db.insert(promptLabelHistory).values({
    organizationId,
    promptId: prompt.id,
    label,
    fromVersionId,
    toVersionId: targetVersionId,
    userId: ctx.actor.userId,
    clientId: ctx.actor.clientId,
    evaluationId: evaluationId ?? null,
    at: now,
    toSplit: split,
    fromSplit,
    overrideReason: override?.reason ?? null,
  });
  await recordAudit(ctx, {
    organizationId,
    operation: 'label.move',
    targetType: 'prompt',
    targetId: prompt.id,
    details: {
      label,
      fromVersionId,
      toVersionId: targetVersionId,
      evaluationId: evaluationId ?? null,
      ...(fromSplit ? { fromSplit } : {}),
      ...(split ? { toSplit: split } : {}),
      ...(override ? { override: { reason: override.reason } } : {}),
    },
  });
  return labelItem(ctx, prompt.id, label);
}

// Removes a label (history row with toVersionId null), and its split. `production` cannot be removed.
export async function removeLabel(
  ctx: ServiceContext,
  { organizationId, promptId, label }: OperationInput<'remove_label'>,
): Promise<void> {
  assertLabelName(label);
  const { db } = ctx;
  const { prompt } = await authorizePromptWrite(ctx, organizationId, promptId);
  if (label === productionLabel) {
    throw new AppError('invalid_state', 'The production label cannot be removed; move it to another version instead.', {
      state: prompt.state,
      label,
    });
  }
  const current = await lockLabel(ctx, prompt.id, label);
  if (!current) throw notFound('Label');
  await db.delete(promptLabels).where(and(eq(promptLabels.promptId, prompt.id), eq(promptLabels.label, label)));
  if (current.splitId) await db.delete(promptSplitVersions).where(eq(promptSplitVersions.splitId, current.splitId));
  await db.insert(promptLabelHistory).values({
    organizationId,
    promptId: prompt.id,
    label,
    fromVersionId: current.versionId,
    toVersionId: null,
    userId: ctx.actor.userId,
    clientId: ctx.actor.clientId,
    evaluationId: null,
    fromSplit: current.split,
  });
  await recordAudit(ctx, {
    organizationId,
    operation: 'label.remove',
    targetType: 'prompt',
    targetId: prompt.id,
    details: { label, fromVersionId: current.versionId, ...(current.split ? { fromSplit: current.split } : {}) },
  });
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
    (r) => ({
      label: r.entry.label,
      fromVersionId: r.entry.fromVersionId,
      toVersionId: r.entry.toVersionId,
      fromVersion: r.fromVersion,
      toVersion: r.toVersion,
      userId: r.entry.userId,
      clientId: r.entry.clientId,
      evaluationId: r.entry.evaluationId,
      at: r.entry.at.toISOString(),
      source: r.entry.source,
      toSplit: (r.entry.toSplit as SplitEntry[] | null) ?? null,
      fromSplit: (r.entry.fromSplit as SplitEntry[] | null) ?? null,
      override: r.entry.overrideReason === null ? null : { reason: r.entry.overrideReason },
    }),
  );
}
