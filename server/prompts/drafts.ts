import { and, eq, sql } from 'drizzle-orm';
import { drafts } from '@/db/schema';
import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { AppError } from '../errors';
import { recordAudit } from '../audit/service';
import { localRoute, requireRoute, type RouteConfig } from '../models/routes';
import { authorizePromptRead, authorizePromptWrite } from '../access/organization';
import { latestVersion } from './service';
import { extractVariables, type Draft, type DraftContent, type ParsedDraftContent } from './schemas';

type DraftRow = typeof drafts.$inferSelect;
type DraftChange = { content: DraftContent; basedOnVersion?: number };

export function emptySetupContent(): DraftContent {
  return {
    messages: [],
    inputType: 'user_message',
    modelRouteId: localRoute.id,
    modelId: localRoute.modelId,
    temperature: 1,
    outputSchema: '',
    customMetrics: [],
    tools: [],
    maxOutputTokens: null,
  };
}

// `latestVersion` from the prompt row read with the draft (0 before the first version).
function toDraft(row: DraftRow, prompt: { lastVersionNumber: number }): Draft {
  const content = row.content as DraftContent;
  return {
    content,
    revision: row.revision,
    basedOnVersion: row.basedOnVersion,
    latestVersion: prompt.lastVersionNumber,
    updatedAt: row.updatedAt.toISOString(),
    variables: content.inputType === 'variables' ? extractVariables(content.messages) : [],
  };
}

// A fresh draft starts from the latest saved version, or from empty setup content (version 0).
async function startingContent(ctx: ServiceContext, promptId: string): Promise<Required<DraftChange>> {
  const latest = await latestVersion(ctx, promptId);
  return latest
    ? { content: latest.content as DraftContent, basedOnVersion: latest.number }
    : { content: emptySetupContent(), basedOnVersion: 0 };
}

// Creates the (prompt, user) draft at revision 0 if it does not exist yet; concurrent first
// reads race on the primary key and all see the one row.
async function ensureDraft(ctx: ServiceContext, organizationId: string, promptId: string): Promise<DraftRow> {
  const where = and(eq(drafts.promptId, promptId), eq(drafts.userId, ctx.actor.userId));
  const [existing] = await ctx.db.select().from(drafts).where(where);
  if (existing) return existing;
  await ctx.db
    .insert(drafts)
    .values({
      organizationId,
      promptId,
      userId: ctx.actor.userId,
      ...(await startingContent(ctx, promptId)),
      revision: 0,
    })
    .onConflictDoNothing();
  const [row] = await ctx.db.select().from(drafts).where(where);
  return row;
}

// Fills modelId from the route; a modelId that names another model is refused.
export function resolveContent(
  parsed: ParsedDraftContent,
  routes?: RouteConfig[],
): { content: DraftContent; route: RouteConfig } {
  const route = requireRoute(parsed.modelRouteId, 'content.modelRouteId', routes);
  if (parsed.modelId !== undefined && parsed.modelId !== route.modelId) {
    throw new AppError('invalid_request', `Model route ${route.id} serves ${route.modelId}, not ${parsed.modelId}.`, {
      issues: [{ path: 'content.modelId', message: `Must be ${route.modelId} for this route, or left out.` }],
    });
  }
  return { content: { ...parsed, modelId: route.modelId }, route };
}

export async function getDraft(
  ctx: ServiceContext,
  { organizationId, promptId }: OperationInput<'get_draft'>,
): Promise<Draft> {
  const { prompt } = await authorizePromptRead(ctx, organizationId, promptId);
  return toDraft(await ensureDraft(ctx, organizationId, prompt.id), prompt);
}

// Compare-and-swap on revision: the stale writer gets draft_conflict and changes nothing.
async function swapContent(
  ctx: ServiceContext,
  organizationId: string,
  promptId: string,
  expected: number,
  changes: (ctx: ServiceContext, promptId: string) => Promise<DraftChange> | DraftChange,
  operation: string,
): Promise<Draft> {
  const { db } = ctx;
  const { prompt } = await authorizePromptWrite(ctx, organizationId, promptId);
  await ensureDraft(ctx, organizationId, prompt.id);
  const set = await changes(ctx, prompt.id);
  const [row] = await db
    .update(drafts)
    .set({ ...set, revision: sql`${drafts.revision} + 1`, updatedAt: new Date() })
    .where(and(eq(drafts.promptId, prompt.id), eq(drafts.userId, ctx.actor.userId), eq(drafts.revision, expected)))
    .returning();
  if (!row) {
    const [current] = await db
      .select({ revision: drafts.revision })
      .from(drafts)
      .where(and(eq(drafts.promptId, prompt.id), eq(drafts.userId, ctx.actor.userId)));
    throw new AppError(
      'draft_conflict',
      'Your draft changed since you loaded it (another window or tool saved it). Reload it before saving.',
      {
        currentRevision: current?.revision ?? 0,
      },
    );
  }
  await recordAudit(ctx, {
    organizationId,
    operation,
    targetType: 'prompt',
    targetId: prompt.id,
    details: { revision: row.revision },
  });
  return toDraft(row, prompt);
}

export async function updateDraft(
  ctx: ServiceContext,
  { organizationId, promptId, content: parsed, revision }: OperationInput<'update_draft'>,
): Promise<Draft> {
  const { content } = resolveContent(parsed);
  return swapContent(ctx, organizationId, promptId, revision, () => ({ content }), 'draft.update');
}

// Discard is a CAS write too: the content goes back to the latest version (or empty setup content),
// and the draft is based on that version from then on.
export async function discardDraft(
  ctx: ServiceContext,
  { organizationId, promptId, revision }: OperationInput<'discard_draft'>,
): Promise<Draft> {
  return swapContent(ctx, organizationId, promptId, revision, startingContent, 'draft.discard');
}
