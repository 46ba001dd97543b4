import { and, asc, desc, eq, lt } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { evaluations, promptLabelHistory, promptLabels, promptVersions } from '@/db/schema';
import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { AppError, invalidRequest, notFound } from '../errors';
import { isId } from '../ids';
import { integerCursor, toPage, type Page } from '../paging';
import { recordAudit } from '../audit/service';
import { authorizePromptRead, authorizePromptWrite, type PromptRow } from '../access/organization';
import { labelPattern, type LabelHistoryItem, type LabelItem } from './schemas';

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
};

function toLabel(row: {
  label: string;
  versionId: string;
  version: number;
  updatedAt: Date;
  updatedBy: string;
}): LabelItem {
  return {
    label: row.label,
    versionId: row.versionId,
    version: row.version,
    updatedAt: row.updatedAt.toISOString(),
    updatedBy: row.updatedBy,
  };
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
  return { items: rows.map(toLabel) };
}

async function requireVersion(
  ctx: ServiceContext,
  prompt: PromptRow,
  versionId: string,
): Promise<{ id: string; number: number }> {
  if (!isId('ver', versionId)) throw notFound('Version');
  const [row] = await ctx.db
    .select({ id: promptVersions.id, number: promptVersions.number })
    .from(promptVersions)
    .where(
      and(
        eq(promptVersions.id, versionId),
        eq(promptVersions.promptId, prompt.id),
        eq(promptVersions.organizationId, prompt.organizationId),
      ),
    );
  if (!row) throw notFound('Version');
  return row;
}

// The comparison that justifies a move: completed, of this prompt, with this version as its candidate.
async function requireJustifyingEvaluation(
  ctx: ServiceContext,
  prompt: PromptRow,
  evaluationId: string,
  versionId: string,
): Promise<void> {
  if (!isId('eval', evaluationId)) throw notFound('Evaluation');
  const [evaluation] = await ctx.db
    .select({ kind: evaluations.kind, status: evaluations.status, versionId: evaluations.versionId })
    .from(evaluations)
    .where(
      and(
        eq(evaluations.id, evaluationId),
        eq(evaluations.promptId, prompt.id),
        eq(evaluations.organizationId, prompt.organizationId),
      ),
    );
  if (!evaluation) throw notFound('Evaluation');
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
      {
        state: evaluation.status,
      },
    );
  }
  if (evaluation.versionId !== versionId) {
    throw new AppError(
      'invalid_state',
      'The evaluation’s candidate is another version than the one the label would point at.',
      {
        state: evaluation.status,
        candidateVersionId: evaluation.versionId,
      },
    );
  }
}

// The label row, locked for this transaction; null when the label does not exist.
async function lockLabel(ctx: ServiceContext, promptId: string, label: string): Promise<{ versionId: string } | null> {
  const [row] = await ctx.db
    .select({ versionId: promptLabels.versionId })
    .from(promptLabels)
    .where(and(eq(promptLabels.promptId, promptId), eq(promptLabels.label, label)))
    .for('update');
  return row ?? null;
}

async function labelItem(ctx: ServiceContext, promptId: string, label: string): Promise<LabelItem> {
  const [row] = await ctx.db
    .select(labelColumns)
    .from(promptLabels)
    .innerJoin(promptVersions, eq(promptVersions.id, promptLabels.versionId))
    .where(and(eq(promptLabels.promptId, promptId), eq(promptLabels.label, label)));
  return toLabel(row);
}

/**
 * Points a label at a version of this prompt (a move, or a rollback when it is an older one),
 * creating the label on first use. Concurrent moves of one label serialize on its row, so the
 * history chains: each row's `from` is the previous row's `to`. Moving a label to the version it
 * already names changes nothing and writes no history. A setup prompt has no versions, so every
 * version id is 404 there.
 */
export async function moveLabel(
  ctx: ServiceContext,
  { organizationId, promptId, label, versionId, evaluationId }: OperationInput<'move_label'>,
): Promise<LabelItem> {
  assertLabelName(label);
  const { db } = ctx;
  const { prompt } = await authorizePromptWrite(ctx, organizationId, promptId);
  const version = await requireVersion(ctx, prompt, versionId);
  if (evaluationId !== undefined) await requireJustifyingEvaluation(ctx, prompt, evaluationId, version.id);

  const now = new Date();
  let fromVersionId: string | null;
  for (;;) {
    const current = await lockLabel(ctx, prompt.id, label);
    if (current) {
      if (current.versionId === version.id) return labelItem(ctx, prompt.id, label);
      fromVersionId = current.versionId;
      await db
        .update(promptLabels)
        .set({ versionId: version.id, updatedBy: ctx.actor.userId, updatedAt: now })
        .where(and(eq(promptLabels.promptId, prompt.id), eq(promptLabels.label, label)));
      break;
    }
    // A new label: the insert waits for a concurrent creator and then does nothing; the loop
    // then locks the row that one made.
    const [created] = await db
      .insert(promptLabels)
      .values({
        organizationId,
        promptId: prompt.id,
        label,
        versionId: version.id,
        updatedBy: ctx.actor.userId,
        updatedAt: now,
      })
      .onConflictDoNothing({ target: [promptLabels.promptId, promptLabels.label] })
      .returning({ label: promptLabels.label });
    if (created) {
      fromVersionId = null;
      break;
    }
  }

  await db.insert(promptLabelHistory).values({
    organizationId,
    promptId: prompt.id,
    label,
    fromVersionId,
    toVersionId: version.id,
    userId: ctx.actor.userId,
    clientId: ctx.actor.clientId,
    evaluationId: evaluationId ?? null,
    at: now,
  });
  await recordAudit(ctx, {
    organizationId,
    operation: 'label.move',
    targetType: 'prompt',
    targetId: prompt.id,
    details: { label, fromVersionId, toVersionId: version.id, evaluationId: evaluationId ?? null },
  });
  return labelItem(ctx, prompt.id, label);
}

// Removes a label (history row with toVersionId null). `production` cannot be removed.
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
  await db.insert(promptLabelHistory).values({
    organizationId,
    promptId: prompt.id,
    label,
    fromVersionId: current.versionId,
    toVersionId: null,
    userId: ctx.actor.userId,
    clientId: ctx.actor.clientId,
    evaluationId: null,
  });
  await recordAudit(ctx, {
    organizationId,
    operation: 'label.remove',
    targetType: 'prompt',
    targetId: prompt.id,
    details: { label, fromVersionId: current.versionId },
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
    }),
  );
}
