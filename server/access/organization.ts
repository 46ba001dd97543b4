import { and, eq } from 'drizzle-orm';
import { prompts } from '@/db/schema';
import type { ServiceContext } from '../context';
import { AppError, notFound } from '../errors';
import { isId } from '../ids';
import { authorize, type Membership, type Permission } from './permissions';

// The one home of organization write checks (role, a writable organization, a prompt that is not
// archived), in the order every write runs them, so the same refusal wins everywhere.

export type PromptRow = typeof prompts.$inferSelect;

// Keys and service accounts answer a read-only organization with their own wording and details
// (API.md); every other write with the default one.
const readOnlyRefusals = {
  default: () => new AppError('read_only', 'This organization is read-only while its deletion is scheduled.'),
  credentials: () =>
    new AppError('read_only', 'This organization is scheduled for deletion and is read-only.', { state: 'read_only' }),
};
export type ReadOnlyRefusal = keyof typeof readOnlyRefusals;

export function assertWritableOrganization(membership: Membership, refusal: ReadOnlyRefusal = 'default'): void {
  if (membership.organization.readOnly) throw readOnlyRefusals[refusal]();
}

// Membership with the permission's role, then a writable organization.
export async function authorizeOrganizationWrite(
  ctx: ServiceContext,
  organizationId: string,
  permission: Permission,
  refusal: ReadOnlyRefusal = 'default',
): Promise<Membership> {
  const membership = await authorize(ctx, organizationId, permission, { lock: true });
  assertWritableOrganization(membership, refusal);
  return membership;
}

// How a read of the prompt row locks it: `true` FOR UPDATE (a write to the prompt itself: archive,
// rename, a saved version…), `'share'` FOR SHARE (a write under the prompt, which must not land once
// an archive has answered: the archive waits for it, or it waits for the archive and sees it).
type PromptLock = { lock?: true | 'share' };

// Reads the prompt inside the caller's organization; another organization's prompt looks missing.
export async function loadPrompt(
  ctx: ServiceContext,
  organizationId: string,
  promptId: string,
  options: PromptLock = {},
): Promise<PromptRow> {
  if (!isId('prm', promptId)) throw notFound('Prompt');
  const query = ctx.db
    .select()
    .from(prompts)
    .where(and(eq(prompts.id, promptId), eq(prompts.organizationId, organizationId)));
  const [row] = options.lock ? await query.for(options.lock === 'share' ? 'share' : 'update') : await query;
  if (!row) throw notFound('Prompt');
  return row;
}

export function assertNotArchived(prompt: PromptRow): void {
  if (prompt.state === 'archived')
    throw new AppError('invalid_state', 'This prompt is archived and read-only.', { state: 'archived' });
}

// The checks every write to a prompt, its drafts or its dataset goes through, in this order:
// membership and role, a writable organization, the prompt exists, the prompt is not archived.
// The prompt row stays locked until the write commits (FOR SHARE unless the caller asks for more).
export async function authorizePromptWrite(
  ctx: ServiceContext,
  organizationId: string,
  promptId: string,
  options: PromptLock = {},
): Promise<{ membership: Membership; prompt: PromptRow }> {
  const membership = await authorizeOrganizationWrite(ctx, organizationId, 'prompts.write');
  const prompt = await loadPrompt(ctx, organizationId, promptId, { lock: options.lock ?? 'share' });
  assertNotArchived(prompt);
  return { membership, prompt };
}

export async function authorizePromptRead(
  ctx: ServiceContext,
  organizationId: string,
  promptId: string,
): Promise<{ membership: Membership; prompt: PromptRow }> {
  const membership = await authorize(ctx, organizationId, 'prompts.read');
  const prompt = await loadPrompt(ctx, organizationId, promptId);
  return { membership, prompt };
}
