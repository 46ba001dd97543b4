import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import {
  datasetCases,
  datasets,
  promptLabelHistory,
  promptLabels,
  promptReleasePolicies,
  prompts,
  promptSplitVersions,
  promptVersions,
} from '@/db/schema';
import type { ReleasePolicy } from '../releases/schemas';
import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { encodeCursor, timeCursor } from '../paging';
import { authorize } from '../access/permissions';
import { authorizePromptRead, type PromptRow } from '../access/organization';
import { scoringView } from '../prompts/scoring';
import type { DraftContent } from '../prompts/schemas';
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

// Prompts read together, one query per table: a page costs a few round trips, not five per
// prompt, while at most this many prompts' data is held beyond the page being written.
const promptsPerRead = 5;

// Rows of `rows` grouped by their prompt id, in the order read.
function byPrompt<T extends { promptId: string }>(rows: T[]): Map<string, Omit<T, 'promptId'>[]> {
  const groups = new Map<string, Omit<T, 'promptId'>[]>();
  for (const { promptId, ...rest } of rows) {
    const group = groups.get(promptId) ?? [];
    group.push(rest);
    groups.set(promptId, group);
  }
  return groups;
}

// Everything of a few prompts of one organization, read in the caller's transaction.
async function bundlePrompts(ctx: ServiceContext, organizationId: string, rows: PromptRow[]): Promise<BundlePrompt[]> {
  const { db } = ctx;
  const ids = rows.map((row) => row.id);
  const versions = await db
    .select({
      promptId: promptVersions.promptId,
      id: promptVersions.id,
      version: promptVersions.number,
      content: promptVersions.content,
      createdAt: promptVersions.createdAt,
    })
    .from(promptVersions)
    .where(and(eq(promptVersions.organizationId, organizationId), inArray(promptVersions.promptId, ids)))
    .orderBy(asc(promptVersions.promptId), asc(promptVersions.number));
  const labels = await db
    .select({
      promptId: promptLabels.promptId,
      label: promptLabels.label,
      version: promptVersions.number,
      splitId: promptLabels.splitId,
    })
    .from(promptLabels)
    .innerJoin(promptVersions, eq(promptVersions.id, promptLabels.versionId))
    .where(and(eq(promptLabels.organizationId, organizationId), inArray(promptLabels.promptId, ids)))
    .orderBy(asc(promptLabels.promptId), asc(promptLabels.label));
  const history = await db
    .select({
      promptId: promptLabelHistory.promptId,
      label: promptLabelHistory.label,
      fromVersion: fromVersions.number,
      toVersion: toVersions.number,
      at: promptLabelHistory.at,
      source: promptLabelHistory.source,
      fromSplit: promptLabelHistory.fromSplit,
      toSplit: promptLabelHistory.toSplit,
      overrideReason: promptLabelHistory.overrideReason,
      userId: promptLabelHistory.userId,
      clientId: promptLabelHistory.clientId,
      evaluationId: promptLabelHistory.evaluationId,
    })
    .from(promptLabelHistory)
    .leftJoin(fromVersions, eq(fromVersions.id, promptLabelHistory.fromVersionId))
    .leftJoin(toVersions, eq(toVersions.id, promptLabelHistory.toVersionId))
    .where(and(eq(promptLabelHistory.organizationId, organizationId), inArray(promptLabelHistory.promptId, ids)))
    .orderBy(asc(promptLabelHistory.id));
  const splitRows = await db
    .select({
      splitId: promptSplitVersions.splitId,
      version: promptVersions.number,
      weight: promptSplitVersions.weight,
    })
    .from(promptSplitVersions)
    .innerJoin(promptVersions, eq(promptVersions.id, promptSplitVersions.versionId))
    .where(and(eq(promptSplitVersions.organizationId, organizationId), inArray(promptSplitVersions.promptId, ids)))
    .orderBy(asc(promptSplitVersions.splitId), asc(promptSplitVersions.position));
  const policies = await db
    .select()
    .from(promptReleasePolicies)
    .where(and(eq(promptReleasePolicies.organizationId, organizationId), inArray(promptReleasePolicies.promptId, ids)));
  const cases = await db
    .select({
      promptId: datasets.promptId,
      input: datasetCases.input,
      expectedOutput: datasetCases.expectedOutput,
      inputFormat: datasetCases.inputFormat,
      referenceFormat: datasetCases.referenceFormat,
    })
    .from(datasetCases)
    .innerJoin(datasets, eq(datasets.id, datasetCases.datasetId))
    .where(and(eq(datasets.organizationId, organizationId), inArray(datasets.promptId, ids)))
    .orderBy(asc(datasetCases.position), asc(datasetCases.id));
  const versionsOf = byPrompt(versions);
  const labelsOf = byPrompt(labels);
  const historyOf = byPrompt(history);
  const casesOf = byPrompt(cases);
  const splits = new Map<string, { version: number; weight: number }[]>();
  for (const { splitId, ...entry } of splitRows) splits.set(splitId, [...(splits.get(splitId) ?? []), entry]);
  const policyOf = new Map(policies.map((p) => [p.promptId, p]));
  const numberOf = new Map(versions.map((v) => [v.id, v.version]));
  // A history entry's split, by version number like a label's.
  const splitByNumber = (split: unknown) =>
    Array.isArray(split)
      ? (split as { versionId: string; weight: number }[]).map(({ versionId, weight }) => ({
          version: numberOf.get(versionId) ?? null,
          weight,
        }))
      : null;
  return rows.map((prompt) => {
    const scoring = scoringView(prompt.scoring);
    // The untouched default policy (expected) exports as null, so an import leaves the default too.
    const isDefault = scoring.method === 'expected';
    return {
      name: prompt.name,
      state: prompt.state,
      versions: (versionsOf.get(prompt.id) ?? []).map((v) => ({
        version: v.version,
        content: v.content as DraftContent,
        createdAt: v.createdAt.toISOString(),
      })),
      labels: (labelsOf.get(prompt.id) ?? []).map(({ splitId, ...label }) => ({
        ...label,
        split: splitId ? (splits.get(splitId) ?? null) : null,
      })),
      // Every entry as the history list shows it, versions by number: moves, splits, overrides.
      labelHistory: (historyOf.get(prompt.id) ?? []).map(({ overrideReason, fromSplit, toSplit, ...h }) => ({
        ...h,
        at: h.at.toISOString(),
        fromSplit: splitByNumber(fromSplit),
        toSplit: splitByNumber(toSplit),
        override: overrideReason === null ? null : { reason: overrideReason },
      })),
      scoring: isDefault ? null : scoring,
      releasePolicy: releasePolicyOf(policyOf.get(prompt.id)),
      dataset: { cases: casesOf.get(prompt.id) ?? [] },
    };
  });
}

// A saved release policy (the default one exports as null; a prompt in setup always has the default).
function releasePolicyOf(row: typeof promptReleasePolicies.$inferSelect | undefined): ReleasePolicy | null {
  if (!row) return null;
  const { protectedLabels, requireEvaluation, maxPassRateDrop, maxRegressions } = row;
  return { protectedLabels, requireEvaluation, maxPassRateDrop, maxRegressions };
}

function envelope(prompts: BundlePrompt[]): Bundle {
  return { format: bundleFormat, formatVersion: bundleFormatVersion, exportedAt: new Date().toISOString(), prompts };
}

export async function exportPrompt(
  ctx: ServiceContext,
  { organizationId, promptId }: OperationInput<'export_prompt'>,
): Promise<Bundle> {
  const { prompt } = await authorizePromptRead(ctx, organizationId, promptId);
  return envelope(await bundlePrompts(ctx, organizationId, [prompt]));
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
    // The cursor holds the (createdAt, id) of the last prompt of the previous page.
    const after = timeCursor(cursor);
    conditions.push(sql`(${prompts.createdAt}, ${prompts.id}) > (${after.at.toISOString()}::timestamptz, ${after.id})`);
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
  const candidates = rows.slice(0, exportPageSize);
  reading: for (let i = 0; i < candidates.length; i += promptsPerRead) {
    const slice = candidates.slice(i, i + promptsPerRead);
    const items = await bundlePrompts(ctx, organizationId, slice);
    for (const [k, item] of items.entries()) {
      const size = Buffer.byteLength(JSON.stringify(item)) + 1;
      if (page.length && bytes + size > pageBytesTarget) break reading;
      page.push(item);
      bytes += size;
      last = slice[k];
    }
  }
  const more = rows.length > page.length;
  return {
    ...envelope(page),
    nextCursor: more && last ? encodeCursor([last.createdAt.toISOString(), last.id]) : null,
  };
}
