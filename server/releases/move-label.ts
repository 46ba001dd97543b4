import { and, eq, inArray, sql } from 'drizzle-orm';
import { promptLabels, promptSplitVersions, promptVersions } from '@/db/schema';
import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { AppError, notFound } from '../errors';
import { isId, newId } from '../ids';
import { recordAudit } from '../audit/service';
import { assertNotArchived, authorizeOrganizationWrite, loadPrompt, type PromptRow } from '../access/organization';
import type { EvaluationRow } from '../evals/serialize';
import {
  assertLabelName,
  emitLabelMoved,
  insertLabelHistory,
  labelItem,
  lockLabel,
  productionLabel,
  type CurrentLabel,
} from '../prompts/labels';
import { labelLimits, type LabelItem, type SplitEntry } from '../prompts/schemas';
import { changesRetrieval } from '../standby';
import { enforceGate, loadMoveEvaluation } from './gate';
import { loadReleasePolicy } from './policy';

// Moving a label (API.md "Versions and labels" and "Safe releases"): to one version or a traffic
// split, through the release policy's promotion gate. Lives with the releases area because the gate
// reads evaluations (prompts → evals would be a cycle: evals read prompts).

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

// Without the gate: the comparison that justifies a move is completed, with one of the versions
// the label would point at (the version, or one of the split's) as its candidate. `details.state`
// says which rule failed: the evaluation's own status, `not_comparison` or `candidate_mismatch`.
function assertJustifies(evaluation: EvaluationRow, versionIds: string[]): void {
  if (evaluation.kind !== 'comparison') {
    throw new AppError('invalid_state', 'Only a comparison evaluation can justify a label move.', {
      state: 'not_comparison',
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
  if (!evaluation.versionId || !versionIds.includes(evaluation.versionId)) {
    throw new AppError(
      'invalid_state',
      versionIds.length === 1
        ? 'The evaluation’s candidate is another version than the one the label would point at.'
        : 'The evaluation’s candidate is none of the versions of the split.',
      { state: 'candidate_mismatch', candidateVersionId: evaluation.versionId },
    );
  }
}

// Of the given versions, those the label pointed at before: its current ones and any in its history
// (as toVersionId or inside a toSplit). Moving back to them is a rollback, never blocked.
async function pointedAtBefore(
  ctx: ServiceContext,
  promptId: string,
  label: string,
  versionIds: string[],
  current: CurrentLabel | null,
): Promise<Set<string>> {
  const known = new Set(current ? [current.versionId, ...(current.split ?? []).map((e) => e.versionId)] : []);
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

// A new label needs room: a prompt holds at most labelLimits.perPrompt (its label list is never
// paged). New labels of one prompt are counted one transaction at a time (an advisory lock on the
// prompt), so concurrent creators cannot pass the limit together; moves of existing labels never wait.
async function assertRoomForLabel(ctx: ServiceContext, promptId: string, label: string): Promise<void> {
  await ctx.db.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`prompt-labels:${promptId}`}, 0))`);
  const [{ labels }] = await ctx.db
    .select({ labels: sql<number>`count(*)::int` })
    .from(promptLabels)
    .where(eq(promptLabels.promptId, promptId));
  if (labels >= labelLimits.perPrompt)
    throw new AppError(
      'invalid_state',
      `A prompt holds at most ${labelLimits.perPrompt} labels; remove one before adding "${label}".`,
      { state: 'label_limit', limit: labelLimits.perPrompt },
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
  // Only an admin may override the release policy (anyone else: 403 admin_required, right after
  // membership, before the organization's or the prompt's state is looked at).
  await authorizeOrganizationWrite(ctx, organizationId, override ? 'prompts.releasePolicy' : 'prompts.write');
  const prompt = await loadPrompt(ctx, organizationId, promptId, { lock: 'share' });
  assertNotArchived(prompt);
  changesRetrieval(ctx);
  const split = splitInput ?? null;
  const targets = await requireVersions(ctx, prompt, split ? split.map((e) => e.versionId) : [versionId!]);
  const targetIds = targets.map((t) => t.id);
  const targetVersionId = split ? primaryOf(split) : targets[0].id;
  const evaluation = evaluationId === undefined ? null : await loadMoveEvaluation(ctx, prompt, evaluationId);

  // The release policy's gate (or, without it, that a named evaluation fits the move), against what
  // the label points at now; a protected label that points at nothing is compared with production.
  const checkMove = async (current: CurrentLabel | null) => {
    if (override) return;
    const policy = await loadReleasePolicy(ctx, prompt);
    if (!policy.protectedLabels.includes(label) || !policy.requireEvaluation) {
      if (evaluation) assertJustifies(evaluation, targetIds);
      return;
    }
    const before = await pointedAtBefore(ctx, prompt.id, label, targetIds, current);
    let newVersions = targets.filter((t) => !before.has(t.id));
    if (!newVersions.length) return;
    const baseline = current ?? (label === productionLabel ? null : await lockLabel(ctx, prompt.id, productionLabel));
    const currentVersionIds = baseline ? [baseline.versionId, ...(baseline.split ?? []).map((e) => e.versionId)] : [];
    // A protected label that points at nothing yet, started on what production serves now, adds
    // nothing production does not already serve: only versions beyond those are gated.
    if (!current) newVersions = newVersions.filter((t) => !currentVersionIds.includes(t.id));
    if (!newVersions.length) return;
    await enforceGate(ctx, {
      policy,
      label,
      newVersions,
      currentVersionIds,
      baselineLabel: current ? label : productionLabel,
      evaluation,
    });
  };

  let now: Date;
  let current: CurrentLabel | null;
  for (;;) {
    current = await lockLabel(ctx, prompt.id, label);
    // Read once the lock is held: moves of one label are stamped in the order they commit.
    now = new Date();
    if (current) break;
    // A new label: the insert waits for a concurrent creator and then does nothing; the loop
    // then locks the row that one made. A protected label that points at nothing is gated too
    // (against production), else removing and re-creating it would bypass the policy.
    await checkMove(null);
    await assertRoomForLabel(ctx, prompt.id, label);
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
    await checkMove(current);
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
  }

  const fromVersionId = current?.versionId ?? null;
  const fromSplit = current?.split ?? null;
  const moved = await insertLabelHistory(ctx, {
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
  await emitLabelMoved(ctx, organizationId, moved);
  return labelItem(ctx, prompt.id, label);
}
