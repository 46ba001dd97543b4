import { and, asc, eq, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { promptLabelHistory, promptLabels, prompts, promptVersions } from '@/db/schema';
import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { invalidRequest } from '../errors';
import { decodeCursor, encodeCursor } from '../paging';
import { authorize } from '../access/permissions';
import { authorizePromptRead, type PromptRow } from '../access/organization';
import { scoringView } from '../prompts/scoring';
import type { DraftContent } from '../prompts/schemas';
import { casesOf, datasetOf } from '../datasets/service';
import {
  bundleFormat,
  bundleFormatVersion,
  exportPageSize,
  type Bundle,
  type BundlePage,
  type BundlePrompt,
} from './schemas';

// The lossless bundle (API.md "Moving prompts in and out"): one prompt, or the organization's
// prompts page by page. Each page stays importable: it stops adding prompts before its JSON passes
// this size (always at least one prompt), under the import route's 8 MiB limit.
const pageBytesTarget = 6 * 1024 * 1024;

const fromVersions = alias(promptVersions, 'from_versions');
const toVersions = alias(promptVersions, 'to_versions');

// Everything of one prompt, read in the caller's transaction; bounded by the prompt's own data.
async function bundlePrompt(ctx: ServiceContext, prompt: PromptRow): Promise<BundlePrompt> {
  const { db } = ctx;
  const versions = await db
    .select({ version: promptVersions.number, content: promptVersions.content, createdAt: promptVersions.createdAt })
    .from(promptVersions)
    .where(and(eq(promptVersions.promptId, prompt.id), eq(promptVersions.organizationId, prompt.organizationId)))
    .orderBy(asc(promptVersions.number));
  const labels = await db
    .select({ label: promptLabels.label, version: promptVersions.number })
    .from(promptLabels)
    .innerJoin(promptVersions, eq(promptVersions.id, promptLabels.versionId))
    .where(and(eq(promptLabels.promptId, prompt.id), eq(promptLabels.organizationId, prompt.organizationId)))
    .orderBy(asc(promptLabels.label));
  const history = await db
    .select({
      label: promptLabelHistory.label,
      fromVersion: fromVersions.number,
      toVersion: toVersions.number,
      at: promptLabelHistory.at,
    })
    .from(promptLabelHistory)
    .leftJoin(fromVersions, eq(fromVersions.id, promptLabelHistory.fromVersionId))
    .leftJoin(toVersions, eq(toVersions.id, promptLabelHistory.toVersionId))
    .where(
      and(eq(promptLabelHistory.promptId, prompt.id), eq(promptLabelHistory.organizationId, prompt.organizationId)),
    )
    .orderBy(asc(promptLabelHistory.id));
  const cases = await casesOf(db, (await datasetOf(db, prompt)).id);
  const scoring = scoringView(prompt.scoring);
  // The untouched default policy (expected) exports as null, so an import leaves the default too.
  const isDefault = scoring.method === 'expected';
  return {
    name: prompt.name,
    state: prompt.state,
    versions: versions.map((v) => ({
      version: v.version,
      content: v.content as DraftContent,
      createdAt: v.createdAt.toISOString(),
    })),
    labels,
    labelHistory: history.map((h) => ({ ...h, at: h.at.toISOString() })),
    scoring: isDefault ? null : scoring,
    dataset: {
      cases: cases.map((c) => ({
        input: c.input,
        expectedOutput: c.expectedOutput,
        inputFormat: c.inputFormat,
        referenceFormat: c.referenceFormat,
      })),
    },
  };
}

function envelope(prompts: BundlePrompt[]): Bundle {
  return { format: bundleFormat, formatVersion: bundleFormatVersion, exportedAt: new Date().toISOString(), prompts };
}

export async function exportPrompt(
  ctx: ServiceContext,
  { organizationId, promptId }: OperationInput<'export_prompt'>,
): Promise<Bundle> {
  const { prompt } = await authorizePromptRead(ctx, organizationId, promptId);
  return envelope([await bundlePrompt(ctx, prompt)]);
}

// The cursor holds the (createdAt, id) of the last prompt of the previous page.
function afterCursor(cursor: string): { createdAt: Date; id: string } {
  const [createdAt, id] = decodeCursor(cursor, 2);
  const at = typeof createdAt === 'string' ? new Date(createdAt) : null;
  if (!at || Number.isNaN(at.getTime()) || typeof id !== 'string')
    throw invalidRequest('The cursor is not valid.', [{ path: 'cursor', message: 'Invalid cursor' }]);
  return { createdAt: at, id };
}

/**
 * One page of the organization's prompts, oldest first by (createdAt, id), archived included: at
 * most 25, fewer when the next one would take the page past ~6 MiB (never fewer than one).
 */
export async function exportOrganization(
  ctx: ServiceContext,
  { organizationId, cursor }: OperationInput<'export_organization'>,
): Promise<BundlePage> {
  await authorize(ctx, organizationId, 'prompts.read');
  const conditions = [eq(prompts.organizationId, organizationId)];
  if (cursor) {
    const after = afterCursor(cursor);
    conditions.push(
      sql`(${prompts.createdAt}, ${prompts.id}) > (${after.createdAt.toISOString()}::timestamptz, ${after.id})`,
    );
  }
  const rows = await ctx.db
    .select()
    .from(prompts)
    .where(and(...conditions))
    .orderBy(asc(prompts.createdAt), asc(prompts.id))
    .limit(exportPageSize + 1);
  const page: BundlePrompt[] = [];
  let bytes = Buffer.byteLength(JSON.stringify({ ...envelope([]), nextCursor: encodeCursor(['', '']) }));
  let last: PromptRow | null = null;
  for (const row of rows.slice(0, exportPageSize)) {
    const item = await bundlePrompt(ctx, row);
    const size = Buffer.byteLength(JSON.stringify(item)) + 1;
    if (page.length && bytes + size > pageBytesTarget) break;
    page.push(item);
    bytes += size;
    last = row;
  }
  const more = rows.length > page.length;
  return {
    ...envelope(page),
    nextCursor: more && last ? encodeCursor([last.createdAt.toISOString(), last.id]) : null,
  };
}
