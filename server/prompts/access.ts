import { and, eq } from 'drizzle-orm';
import { prompts } from '@/db/schema';
import type { ServiceContext } from '../context';
import { AppError, notFound } from '../errors';
import { isId } from '../ids';
import { authorize, type Membership } from '../auth/permissions';

export type PromptRow = typeof prompts.$inferSelect;

// Reads the prompt inside the caller's organization; another organization's prompt looks missing.
export async function loadPrompt(ctx: ServiceContext, organizationId: string, promptId: string, options: { lock?: boolean } = {}): Promise<PromptRow> {
  if (!isId('prm', promptId)) throw notFound('Prompt');
  const query = ctx.db
    .select()
    .from(prompts)
    .where(and(eq(prompts.id, promptId), eq(prompts.organizationId, organizationId)));
  const [row] = options.lock ? await query.for('update') : await query;
  if (!row) throw notFound('Prompt');
  return row;
}

export function assertWritableOrganization(membership: Membership): void {
  if (membership.organization.readOnly) throw new AppError('read_only', 'This organization is read-only while its deletion is scheduled.');
}

function assertNotArchived(prompt: PromptRow): void {
  if (prompt.state === 'archived') throw new AppError('invalid_state', 'This prompt is archived and read-only.', { state: 'archived' });
}

// The checks every write to a prompt, its drafts or its dataset goes through, in this order:
// membership and role, a writable organization, the prompt exists, the prompt is not archived.
export async function authorizePromptWrite(
  ctx: ServiceContext,
  organizationId: string,
  promptId: string,
  options: { lock?: boolean } = {},
): Promise<{ membership: Membership; prompt: PromptRow }> {
  const membership = await authorize(ctx, organizationId, 'prompts.write');
  assertWritableOrganization(membership);
  const prompt = await loadPrompt(ctx, organizationId, promptId, options);
  assertNotArchived(prompt);
  return { membership, prompt };
}

export async function authorizePromptRead(ctx: ServiceContext, organizationId: string, promptId: string): Promise<{ membership: Membership; prompt: PromptRow }> {
  const membership = await authorize(ctx, organizationId, 'prompts.read');
  const prompt = await loadPrompt(ctx, organizationId, promptId);
  return { membership, prompt };
}
