import { and, desc, eq, inArray, lt, sql } from 'drizzle-orm';
import { union } from 'drizzle-orm/pg-core';
import { drafts, promptLabels, promptSplitVersions, prompts, promptVersions } from '@/db/schema';
import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { AppError, notFound } from '../errors';
import { newId } from '../ids';
import { integerCursor, toPage, type Page } from '../paging';
import { maxStoredInt } from '../numbers';
import { recordAudit } from '../audit/service';
import { authorizePromptRead, authorizePromptWrite } from '../access/organization';
import { emitEvent } from '../webhooks/outbox';
import { changesRetrieval } from '../standby';
import { latestVersionContent } from './service';
import { emitLabelMoved, insertLabelHistory } from './labels';
import type { DraftContent, LabelHistoryItem, Version } from './schemas';

type VersionRow = typeof promptVersions.$inferSelect;

export function toVersion(row: VersionRow, labels: string[]): Version {
  return {
    id: row.id,
    promptId: row.promptId,
    number: row.number,
    content: row.content as DraftContent,
    createdAt: row.createdAt.toISOString(),
    createdBy: row.createdBy,
    labels,
  };
}

// The labels pointing at each of the given versions, in name order.
// The labels that serve each version: the ones pointing at it, and the splits it has a share of.
async function labelsByVersion(
  ctx: ServiceContext,
  promptId: string,
  versionIds: string[],
): Promise<Map<string, string[]>> {
  const byVersion = new Map<string, string[]>(versionIds.map((id) => [id, []]));
  if (!versionIds.length) return byVersion;
  const pointing = ctx.db
    .select({ versionId: promptLabels.versionId, label: promptLabels.label })
    .from(promptLabels)
    .where(and(eq(promptLabels.promptId, promptId), inArray(promptLabels.versionId, versionIds)));
  const splits = ctx.db
    .select({ versionId: promptSplitVersions.versionId, label: promptSplitVersions.label })
    .from(promptSplitVersions)
    .where(and(eq(promptSplitVersions.promptId, promptId), inArray(promptSplitVersions.versionId, versionIds)));
  const rows = await union(pointing, splits);
  for (const row of rows.sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0)))
    byVersion.get(row.versionId)?.push(row.label);
  return byVersion;
}

async function withLabels(ctx: ServiceContext, row: VersionRow): Promise<Version> {
  return toVersion(row, (await labelsByVersion(ctx, row.promptId, [row.id])).get(row.id) ?? []);
}

// prompt.version.created (API.md "Webhooks"): data is the Version as GET …/versions/{n} returns it.
async function emitVersionCreated(ctx: ServiceContext, organizationId: string, version: Version): Promise<void> {
  await emitEvent(ctx, { organizationId, type: 'prompt.version.created', data: version });
}

async function versionFromDraft(
  ctx: ServiceContext,
  promptId: string,
  userId: string,
  draftRevision: number,
): Promise<VersionRow | undefined> {
  const [row] = await ctx.db
    .select()
    .from(promptVersions)
    .where(
      and(
        eq(promptVersions.promptId, promptId),
        eq(promptVersions.draftUserId, userId),
        eq(promptVersions.draftRevision, draftRevision),
      ),
    );
  return row;
}

/**
 * Saves the caller's personal draft, exactly as it is at `draftRevision`, as the next immutable
 * version. A revision that is not the draft's current one is `409 draft_conflict`, also when a
 * version was saved from it (only an Idempotency-Key replay returns that answer again); saving the
 * current revision again returns the version it made instead of a copy. Never touches labels.
 * Saves of one prompt serialize on the prompt row, which allocates the number.
 */

/**
 * The number the next saved version gets. A prompt imported with version 2147483647 (the largest a
 * version can have) has no next number: 409 invalid_state rather than a failed insert.
 */
// The draft a version was saved (or published) from is based on that version from then on.
async function rebaseDraft(ctx: ServiceContext, promptId: string, userId: string, number: number) {
  await ctx.db
    .update(drafts)
    .set({ basedOnVersion: number })
    .where(and(eq(drafts.promptId, promptId), eq(drafts.userId, userId)));
}

function nextVersionNumber(prompt: { lastVersionNumber: number }): number {
  if (prompt.lastVersionNumber >= maxStoredInt)
    throw new AppError(
      'invalid_state',
      `This prompt's versions have reached the largest version number (${maxStoredInt}): no further version can be saved. Export it and import it as a new prompt with lower numbers.`,
      { state: 'version_numbers_exhausted' },
    );
  return prompt.lastVersionNumber + 1;
}

export async function saveVersion(
  ctx: ServiceContext,
  { organizationId, promptId, draftRevision }: OperationInput<'save_version'>,
): Promise<Version> {
  const { db } = ctx;
  const userId = ctx.actor.userId;
  // Role, writable organization and a non-archived prompt first; the prompt row is locked.
  const { prompt } = await authorizePromptWrite(ctx, organizationId, promptId, { lock: true });
  // Retrieval by number sees the new version; a replayed save waits too (its first answer may have been 503).
  changesRetrieval(ctx);
  if (prompt.state !== 'active') {
    throw new AppError(
      'invalid_state',
      'Save a version once the prompt’s baseline is initialized (version 1 is published by initialize).',
      {
        state: prompt.state,
      },
    );
  }

  const [draft] = await db
    .select({ content: drafts.content, revision: drafts.revision })
    .from(drafts)
    .where(and(eq(drafts.promptId, prompt.id), eq(drafts.userId, userId)));
  // A draft never written is revision 0 and holds the latest version's content.
  const currentRevision = draft?.revision ?? 0;
  if (draftRevision !== currentRevision) {
    throw new AppError(
      'draft_conflict',
      `Your draft is at revision ${currentRevision}, not ${draftRevision}. Reload it and save again.`,
      {
        currentRevision,
      },
    );
  }
  // The draft has not moved since a version was saved from it: that version, not a copy.
  const existing = await versionFromDraft(ctx, prompt.id, userId, draftRevision);
  if (existing) return withLabels(ctx, existing);
  const content = draft?.content ?? (await latestVersionContent(ctx, prompt.id));

  const number = nextVersionNumber(prompt);
  const [inserted] = await db
    .insert(promptVersions)
    .values({
      id: newId('ver'),
      organizationId,
      promptId: prompt.id,
      number,
      content,
      createdBy: userId,
      createdByClient: ctx.actor.clientId,
      draftUserId: userId,
      draftRevision: draftRevision,
    })
    .onConflictDoNothing({
      target: [promptVersions.promptId, promptVersions.draftUserId, promptVersions.draftRevision],
    })
    .returning();
  // Only reachable without the prompt lock (never today): another save of this revision won.
  if (!inserted) return withLabels(ctx, (await versionFromDraft(ctx, prompt.id, userId, draftRevision))!);

  await db
    .update(prompts)
    .set({ versionCount: sql`${prompts.versionCount} + 1`, lastVersionNumber: number })
    .where(eq(prompts.id, prompt.id));
  await rebaseDraft(ctx, prompt.id, userId, number);
  await recordAudit(ctx, {
    organizationId,
    operation: 'version.save',
    targetType: 'prompt',
    targetId: prompt.id,
    details: { versionId: inserted.id, number, draftRevision: draftRevision },
  });
  // A new version has no labels (saving never moves one).
  const version = toVersion(inserted, []);
  await emitVersionCreated(ctx, organizationId, version);
  return version;
}

// Newest first.
export async function listVersions(
  ctx: ServiceContext,
  { organizationId, promptId, ...query }: OperationInput<'list_versions'>,
): Promise<Page<Version>> {
  const { prompt } = await authorizePromptRead(ctx, organizationId, promptId);
  const conditions = [eq(promptVersions.promptId, prompt.id), eq(promptVersions.organizationId, organizationId)];
  if (query.cursor) conditions.push(lt(promptVersions.number, integerCursor(query.cursor, maxStoredInt)));
  const rows = await ctx.db
    .select()
    .from(promptVersions)
    .where(and(...conditions))
    .orderBy(desc(promptVersions.number))
    .limit(query.limit + 1);
  const labels = await labelsByVersion(
    ctx,
    prompt.id,
    rows.slice(0, query.limit).map((r) => r.id),
  );
  return toPage(
    rows,
    query.limit,
    (r) => [r.number],
    (r) => toVersion(r, labels.get(r.id) ?? []),
  );
}

export async function getVersion(
  ctx: ServiceContext,
  { organizationId, promptId, number }: OperationInput<'get_version'>,
): Promise<Version> {
  const { prompt } = await authorizePromptRead(ctx, organizationId, promptId);
  const [row] = await ctx.db
    .select()
    .from(promptVersions)
    .where(
      and(
        eq(promptVersions.promptId, prompt.id),
        eq(promptVersions.organizationId, organizationId),
        eq(promptVersions.number, number),
      ),
    );
  if (!row) throw notFound('Version');
  return withLabels(ctx, row);
}

export type PublishBaselineInput = {
  organizationId: string;
  promptId: string;
  content: unknown;
  draftUserId: string;
  draftRevision: number;
  evaluationId: string;
};

/**
 * Publishes a baseline's frozen setup draft as the next immutable version (version 1, or the one
 * after the highest of an imported setup prompt's versions), points `staging` and `production` at
 * it (history rows carry the evaluation) and makes the prompt active, all in the caller's
 * transaction. Called again for the same evaluation it returns that version; any other non-setup
 * prompt is invalid_state (a retried setup cannot publish a different snapshot).
 */
export async function publishBaselineVersion(
  ctx: ServiceContext,
  input: PublishBaselineInput,
): Promise<{ id: string; number: number }> {
  const { db } = ctx;
  const [prompt] = await db
    .select()
    .from(prompts)
    .where(and(eq(prompts.id, input.promptId), eq(prompts.organizationId, input.organizationId)))
    .for('update');
  if (!prompt) throw notFound('Prompt');
  // Labels move and version 1 appears: retrieval's readers (standby, kept answers) are waited for.
  changesRetrieval(ctx);
  if (prompt.state !== 'setup') {
    if (prompt.state === 'active') {
      const [published] = await db
        .select({ id: promptVersions.id, number: promptVersions.number })
        .from(promptVersions)
        .where(and(eq(promptVersions.promptId, prompt.id), eq(promptVersions.sourceEvaluationId, input.evaluationId)));
      if (published) return published;
    }
    throw new AppError(
      'invalid_state',
      'This prompt’s baseline is already published; a retried setup cannot publish another snapshot.',
      {
        state: prompt.state,
      },
    );
  }

  const id = newId('ver');
  const number = nextVersionNumber(prompt);
  const [inserted] = await db
    .insert(promptVersions)
    .values({
      id,
      organizationId: input.organizationId,
      promptId: prompt.id,
      number,
      content: input.content,
      createdBy: ctx.actor.userId,
      createdByClient: ctx.actor.clientId,
      draftUserId: input.draftUserId,
      draftRevision: input.draftRevision,
      sourceEvaluationId: input.evaluationId,
    })
    .returning();
  const now = new Date();
  const moves: LabelHistoryItem[] = [];
  for (const label of ['staging', 'production']) {
    // An imported setup prompt may already have `staging` (never `production`: that makes it active).
    const [previous] = await db
      .select({ versionId: promptLabels.versionId })
      .from(promptLabels)
      .where(and(eq(promptLabels.promptId, prompt.id), eq(promptLabels.label, label)))
      .for('update');
    await db
      .insert(promptLabels)
      .values({
        organizationId: input.organizationId,
        promptId: prompt.id,
        label,
        versionId: id,
        updatedBy: ctx.actor.userId,
        updatedAt: now,
      })
      .onConflictDoUpdate({
        target: [promptLabels.promptId, promptLabels.label],
        set: { versionId: id, updatedBy: ctx.actor.userId, updatedAt: now },
      });
    moves.push(
      await insertLabelHistory(ctx, {
        organizationId: input.organizationId,
        promptId: prompt.id,
        label,
        fromVersionId: previous?.versionId ?? null,
        toVersionId: id,
        userId: ctx.actor.userId,
        clientId: ctx.actor.clientId,
        evaluationId: input.evaluationId,
        at: now,
      }),
    );
  }
  await db
    .update(prompts)
    .set({ state: 'active', versionCount: sql`${prompts.versionCount} + 1`, lastVersionNumber: number })
    .where(eq(prompts.id, prompt.id));
  await rebaseDraft(ctx, prompt.id, input.draftUserId, number);
  await recordAudit(ctx, {
    organizationId: input.organizationId,
    operation: 'version.publish_baseline',
    targetType: 'prompt',
    targetId: prompt.id,
    details: { versionId: id, number, evaluationId: input.evaluationId, draftRevision: input.draftRevision },
  });
  // The version as it reads now (with staging and production), then the two label moves.
  await emitVersionCreated(ctx, input.organizationId, await withLabels(ctx, inserted));
  for (const move of moves) await emitLabelMoved(ctx, input.organizationId, move);
  return { id, number };
}
