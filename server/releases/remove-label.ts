import { and, eq } from 'drizzle-orm';
import { promptLabels, promptSplitVersions } from '@/db/schema';
import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { AppError, notFound } from '../errors';
import { recordAudit } from '../audit/service';
import { authorizePromptWrite } from '../access/organization';
import { roleRefusal } from '../access/permissions';
import { can, permissions } from '../auth/schemas';
import { changesRetrieval } from '../standby';
import { assertLabelName, emitLabelMoved, insertLabelHistory, lockLabel, productionLabel } from '../prompts/labels';
import { loadReleasePolicy } from './policy';

// Removes a label (history row with toVersionId null), and its split. `production` cannot be removed.
// A label the release policy's gate protects (protected, with requireEvaluation) is removed by an
// admin only: a removal takes the label's traffic out of service as surely as a bad move, and no
// evaluation can justify it.
export async function removeLabel(
  ctx: ServiceContext,
  { organizationId, promptId, label }: OperationInput<'remove_label'>,
): Promise<void> {
  assertLabelName(label);
  const { db } = ctx;
  const { prompt, membership } = await authorizePromptWrite(ctx, organizationId, promptId);
  if (label === productionLabel) {
    throw new AppError('invalid_state', 'The production label cannot be removed; move it to another version instead.', {
      state: prompt.state,
      label,
    });
  }
  if (!can(membership.role, 'prompts.releasePolicy')) {
    const policy = await loadReleasePolicy(ctx, prompt);
    if (policy.requireEvaluation && policy.protectedLabels.includes(label))
      throw roleRefusal(membership.role, permissions['prompts.releasePolicy']);
  }
  const current = await lockLabel(ctx, prompt.id, label);
  if (!current) throw notFound('Label');
  changesRetrieval(ctx);
  await db.delete(promptLabels).where(and(eq(promptLabels.promptId, prompt.id), eq(promptLabels.label, label)));
  if (current.splitId) await db.delete(promptSplitVersions).where(eq(promptSplitVersions.splitId, current.splitId));
  const removal = await insertLabelHistory(ctx, {
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
  await emitLabelMoved(ctx, organizationId, removal);
}
