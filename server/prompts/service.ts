import { and, asc, desc, eq, lt, sql } from 'drizzle-orm';
import { datasets, promptLabels, prompts, promptVersions } from '@/db/schema';
import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { newId } from '../ids';
import { toPage, type Page } from '../paging';
import { idCursor } from '../id-cursor';
import { authorize } from '../access/permissions';
import { recordAudit } from '../audit/service';
import { changesRetrieval } from '../standby';
import {
  authorizeOrganizationWrite,
  authorizePromptRead,
  authorizePromptWrite,
  loadPrompt,
  type PromptRow,
} from '../access/organization';
import type { Prompt } from './schemas';

type Label = Prompt['labels'][number];

async function labelsOf(ctx: ServiceContext, promptIds: string[]): Promise<Map<string, Label[]>> {
  const byPrompt = new Map<string, Label[]>(promptIds.map((id) => [id, []]));
  if (!promptIds.length) return byPrompt;
  const rows = await ctx.db
    .select({
      promptId: promptLabels.promptId,
      label: promptLabels.label,
      versionId: promptLabels.versionId,
      version: promptVersions.number,
      splitId: promptLabels.splitId,
    })
    .from(promptLabels)
    .innerJoin(promptVersions, eq(promptVersions.id, promptLabels.versionId))
    .where(sql`${promptLabels.promptId} in ${promptIds}`)
    .orderBy(asc(promptLabels.label));
  for (const row of rows)
    byPrompt
      .get(row.promptId)
      ?.push({ label: row.label, versionId: row.versionId, version: row.version, splitId: row.splitId });
  return byPrompt;
}

function toPrompt(row: PromptRow, labels: Label[]): Prompt {
  return {
    id: row.id,
    name: row.name,
    state: row.state,
    versionCount: row.versionCount,
    createdAt: row.createdAt.toISOString(),
    productionVersionId: labels.find((l) => l.label === 'production')?.versionId ?? null,
    labels,
    archivedAt: row.archivedAt?.toISOString() ?? null,
  };
}

async function withLabels(ctx: ServiceContext, row: PromptRow): Promise<Prompt> {
  return toPrompt(row, (await labelsOf(ctx, [row.id])).get(row.id) ?? []);
}

// A new prompt starts in setup with its empty dataset, both in the caller's transaction.
export async function createPrompt(
  ctx: ServiceContext,
  { organizationId, name }: OperationInput<'create_prompt'>,
): Promise<Prompt> {
  const { db } = ctx;
  await authorizeOrganizationWrite(ctx, organizationId, 'prompts.write');
  const [row] = await db
    .insert(prompts)
    .values({ id: newId('prm'), organizationId, name, createdBy: ctx.actor.userId })
    .returning();
  await db.insert(datasets).values({ id: newId('ds'), organizationId, promptId: row.id });
  await recordAudit(ctx, {
    organizationId,
    operation: 'prompt.create',
    targetType: 'prompt',
    targetId: row.id,
    details: { name: row.name },
  });
  return toPrompt(row, []);
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

// Newest first; `search` is a case-insensitive substring of the name.
export async function listPrompts(
  ctx: ServiceContext,
  { organizationId, ...query }: OperationInput<'list_prompts'>,
): Promise<Page<Prompt>> {
  await authorize(ctx, organizationId, 'prompts.read');
  const conditions = [eq(prompts.organizationId, organizationId)];
  if (query.cursor) conditions.push(lt(prompts.id, idCursor(query.cursor, 'prm')));
  if (query.state) conditions.push(eq(prompts.state, query.state));
  if (query.search) conditions.push(sql`lower(${prompts.name}) like ${`%${escapeLike(query.search.toLowerCase())}%`}`);
  const rows = await ctx.db
    .select()
    .from(prompts)
    .where(and(...conditions))
    .orderBy(desc(prompts.id))
    .limit(query.limit + 1);
  const labels = await labelsOf(
    ctx,
    rows.slice(0, query.limit).map((r) => r.id),
  );
  return toPage(
    rows,
    query.limit,
    (r) => [r.id],
    (r) => toPrompt(r, labels.get(r.id) ?? []),
  );
}

export async function getPrompt(
  ctx: ServiceContext,
  { organizationId, promptId }: OperationInput<'get_prompt'>,
): Promise<Prompt> {
  const { prompt } = await authorizePromptRead(ctx, organizationId, promptId);
  return withLabels(ctx, prompt);
}

export async function renamePrompt(
  ctx: ServiceContext,
  { organizationId, promptId, name }: OperationInput<'rename_prompt'>,
): Promise<Prompt> {
  const { db } = ctx;
  const { prompt } = await authorizePromptWrite(ctx, organizationId, promptId, { lock: true });
  changesRetrieval(ctx);
  const [row] = await db.update(prompts).set({ name }).where(eq(prompts.id, prompt.id)).returning();
  await recordAudit(ctx, {
    organizationId,
    operation: 'prompt.rename',
    targetType: 'prompt',
    targetId: prompt.id,
    details: { from: prompt.name, to: name },
  });
  return withLabels(ctx, row);
}

// Archiving an archived prompt returns it unchanged (a retried archive is not an error).
export async function archivePrompt(
  ctx: ServiceContext,
  { organizationId, promptId }: OperationInput<'archive_prompt'>,
): Promise<Prompt> {
  const { db } = ctx;
  await authorizeOrganizationWrite(ctx, organizationId, 'prompts.write');
  const prompt = await loadPrompt(ctx, organizationId, promptId, { lock: true });
  // Also when already archived: a retry after a 503 answers only once the standby has the archive.
  changesRetrieval(ctx);
  if (prompt.state === 'archived') return withLabels(ctx, prompt);
  const [row] = await db
    .update(prompts)
    .set({ state: 'archived', archivedAt: new Date() })
    .where(eq(prompts.id, prompt.id))
    .returning();
  await recordAudit(ctx, {
    organizationId,
    operation: 'prompt.archive',
    targetType: 'prompt',
    targetId: prompt.id,
    details: { from: prompt.state },
  });
  return withLabels(ctx, row);
}

// The content of the newest saved version, if there is one.
export async function latestVersion(
  ctx: ServiceContext,
  promptId: string,
): Promise<{ number: number; content: unknown } | null> {
  const [row] = await ctx.db
    .select({ number: promptVersions.number, content: promptVersions.content })
    .from(promptVersions)
    .where(eq(promptVersions.promptId, promptId))
    .orderBy(desc(promptVersions.number))
    .limit(1);
  return row ?? null;
}

export async function latestVersionContent(ctx: ServiceContext, promptId: string): Promise<unknown | null> {
  return (await latestVersion(ctx, promptId))?.content ?? null;
}
