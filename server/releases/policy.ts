import { eq } from 'drizzle-orm';
import { promptReleasePolicies } from '@/db/schema';
import type { DbContext, ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { AppError } from '../errors';
import { recordAudit } from '../audit/service';
import { assertNotArchived, authorizeOrganizationWrite, loadPrompt, authorizePromptRead } from '../access/organization';
import { defaultReleasePolicy, type ReleasePolicy, type ReleasePolicyView } from './schemas';

// The release policy of a prompt (API.md "Safe releases"): a row when one was saved, else the
// default. A prompt in setup always has the default (it has no versions to protect yet).

type PolicyRow = typeof promptReleasePolicies.$inferSelect;

function toView(row: PolicyRow | undefined): ReleasePolicyView {
  if (!row) return { ...defaultReleasePolicy, isDefault: true, updatedAt: null, updatedBy: null };
  return {
    protectedLabels: row.protectedLabels,
    requireEvaluation: row.requireEvaluation,
    maxPassRateDrop: row.maxPassRateDrop,
    maxRegressions: row.maxRegressions,
    isDefault: false,
    updatedAt: row.updatedAt.toISOString(),
    updatedBy: row.updatedBy,
  };
}

// The policy a label move is checked against (inside the move's transaction).
export async function loadReleasePolicy(ctx: DbContext, prompt: { id: string; state: string }): Promise<ReleasePolicy> {
  if (prompt.state === 'setup') return defaultReleasePolicy;
  const [row] = await ctx.db.select().from(promptReleasePolicies).where(eq(promptReleasePolicies.promptId, prompt.id));
  return row ?? defaultReleasePolicy;
}

export async function getReleasePolicy(
  ctx: ServiceContext,
  { organizationId, promptId }: OperationInput<'get_release_policy'>,
): Promise<ReleasePolicyView> {
  const { prompt } = await authorizePromptRead(ctx, organizationId, promptId);
  if (prompt.state === 'setup') return toView(undefined);
  const [row] = await ctx.db.select().from(promptReleasePolicies).where(eq(promptReleasePolicies.promptId, prompt.id));
  return toView(row);
}

// PUT replaces the whole policy (admins only); audited as `prompt.release_policy`.
export async function setReleasePolicy(
  ctx: ServiceContext,
  { organizationId, promptId, ...policy }: OperationInput<'set_release_policy'>,
): Promise<ReleasePolicyView> {
  await authorizeOrganizationWrite(ctx, organizationId, 'prompts.releasePolicy');
  const prompt = await loadPrompt(ctx, organizationId, promptId, { lock: true });
  assertNotArchived(prompt);
  if (prompt.state === 'setup')
    throw new AppError(
      'invalid_state',
      'A prompt in setup has the default release policy; set one once its baseline is published.',
      { state: 'setup' },
    );
  const values = {
    promptId: prompt.id,
    organizationId,
    protectedLabels: policy.protectedLabels,
    requireEvaluation: policy.requireEvaluation,
    maxPassRateDrop: policy.maxPassRateDrop,
    maxRegressions: policy.maxRegressions,
    updatedBy: ctx.actor.userId,
    updatedAt: new Date(),
  };
  const [row] = await ctx.db
    .insert(promptReleasePolicies)
    .values(values)
    .onConflictDoUpdate({ target: promptReleasePolicies.promptId, set: values })
    .returning();
  await recordAudit(ctx, {
    organizationId,
    operation: 'prompt.release_policy',
    targetType: 'prompt',
    targetId: prompt.id,
    details: { ...policy },
  });
  return toView(row);
}
