import { and, asc, eq, inArray, sql } from 'drizzle-orm';
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
import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { AppError } from '../errors';
import { newId } from '../ids';
import { recordAudits } from '../audit/service';
import { authorizeOrganizationWrite } from '../access/organization';
import { can } from '../auth/schemas';
import { configuredRoutes } from '../models/routes';
import { capacityOf } from '../datasets/service';
import { raiseNewDatasetsCapacityWarnings } from '../datasets/capacity-warning';
import { changesRetrieval } from '../standby';
import { emitEvents } from '../webhooks/outbox';
import { toVersion } from '../prompts/versions';
import { toLabelHistoryItem } from '../prompts/labels';
import type { MappedDocument, MapperOptions } from './mapped';
import { mapBundleDocument } from './sources/bundle';
import { mapOpenAiDocument } from './sources/openai';
import { mapLangfuseDocument } from './sources/langfuse';
import { mapOpenAiEvalDocument } from './sources/openai-eval';
import { importLimits, validateDocument, type ValidPrompt } from './validate';
import type { ImportProblem, ImportReport, ImportReportPrompt, ImportSource } from './schemas';

// POST /organizations/{org}/imports (API.md "Moving prompts in and out"): every source maps its
// document into the one mapped shape, then one path validates it, resolves name conflicts and
// stores it, all or nothing in the operation's transaction.

type Mapper = (document: unknown, options: MapperOptions) => MappedDocument;
const mappers: Record<ImportSource, Mapper> = {
  promptloop: mapBundleDocument,
  openai: mapOpenAiDocument,
  langfuse: mapLangfuseDocument,
  openai_eval: mapOpenAiEvalDocument,
};

// Rows per INSERT statement: one statement per table for any usual import, far below Postgres's
// 65,535 parameters per statement for the largest.
const rowsPerStatement = 1_000;

function* chunks<T>(rows: T[]): Generator<T[]> {
  for (let i = 0; i < rows.length; i += rowsPerStatement) yield rows.slice(i, i + rowsPerStatement);
}

function rejection(problems: ImportProblem[]): AppError {
  const listed = problems.slice(0, importLimits.listedProblems);
  const more = problems.length > listed.length ? ` (the first ${listed.length} are listed)` : '';
  return new AppError(
    'import_rejected',
    `The import was rejected: ${problems.length} ${problems.length === 1 ? 'problem' : 'problems'}${more}. Nothing was imported.`,
    { items: listed },
  );
}

// "Name (imported)", "Name (imported 2)", …, cut so the whole name keeps within the name limit.
function renamed(name: string, attempt: number): string {
  const suffix = attempt === 1 ? ' (imported)' : ` (imported ${attempt})`;
  let base = name.slice(0, importLimits.nameChars - suffix.length);
  // Never end on half of a surrogate pair.
  if (/[\uD800-\uDBFF]$/.test(base)) base = base.slice(0, -1);
  return `${base.trimEnd()}${suffix}`;
}

// Existing prompts (archived included) with any of these exact names: name → the oldest one's id.
async function existingByName(
  ctx: ServiceContext,
  organizationId: string,
  names: string[],
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const batch of chunks(names)) {
    const rows = await ctx.db
      .select({ id: prompts.id, name: prompts.name })
      .from(prompts)
      .where(and(eq(prompts.organizationId, organizationId), inArray(prompts.name, batch)))
      .orderBy(asc(prompts.createdAt), asc(prompts.id));
    for (const row of rows) if (!found.has(row.name)) found.set(row.name, row.id);
  }
  return found;
}

type Resolution = { prompt: ValidPrompt; name: string; skipOf: string | null };

/**
 * Decides each prompt's fate: its own name when free, else skipped (`skip`) or the first free
 * "Name (imported N)" (`rename`), free against the organization and against every name this
 * document uses. Probes a few candidates per prompt per query.
 */
async function resolveNames(
  ctx: ServiceContext,
  organizationId: string,
  valid: ValidPrompt[],
  onConflict: 'skip' | 'rename',
): Promise<Resolution[]> {
  const existing = await existingByName(
    ctx,
    organizationId,
    valid.map((p) => p.name),
  );
  const taken = new Set(valid.map((p) => p.name));
  const resolutions: Resolution[] = valid.map((prompt) => ({
    prompt,
    name: prompt.name,
    skipOf: onConflict === 'skip' ? (existing.get(prompt.name) ?? null) : null,
  }));
  let pending = onConflict === 'rename' ? resolutions.filter((r) => existing.has(r.prompt.name)) : [];
  const next = new Map(pending.map((r) => [r, 1]));
  const probesPerRound = 8;
  while (pending.length) {
    const candidates = new Map<Resolution, string[]>();
    for (const r of pending) {
      const list: string[] = [];
      for (let n = next.get(r)!; list.length < probesPerRound; n++) {
        next.set(r, n + 1);
        const candidate = renamed(r.prompt.name, n);
        if (!taken.has(candidate)) list.push(candidate);
      }
      candidates.set(r, list);
    }
    const found = await existingByName(ctx, organizationId, [...candidates.values()].flat());
    for (const [r, list] of candidates) {
      const free = list.find((candidate) => !found.has(candidate) && !taken.has(candidate));
      if (free) {
        r.name = free;
        taken.add(free);
      }
    }
    pending = pending.filter((r) => r.name === r.prompt.name);
  }
  return resolutions;
}

// An import's webhook events (API.md "Webhooks"), as saving and moving write them: prompt.version.created
// for each version (the Version with the labels the import gave it), then prompt.label.moved for each
// label (its history item, `source: "import"`).
async function emitImportEvents(
  ctx: ServiceContext,
  organizationId: string,
  versions: (typeof promptVersions.$inferSelect)[],
  labels: (typeof promptLabels.$inferInsert)[],
  history: (typeof promptLabelHistory.$inferSelect)[],
): Promise<void> {
  const labelsOf = new Map<string, string[]>();
  for (const { versionId, label } of [...labels].sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0)))
    labelsOf.set(versionId, [...(labelsOf.get(versionId) ?? []), label]);
  const numberOf = new Map(versions.map((v) => [v.id, v.number]));
  await emitEvents(ctx, organizationId, [
    ...versions.map((row) => ({
      organizationId,
      type: 'prompt.version.created' as const,
      data: toVersion(row, labelsOf.get(row.id) ?? []),
    })),
    ...history.map((entry) => ({
      organizationId,
      type: 'prompt.label.moved' as const,
      data: toLabelHistoryItem(
        entry,
        null,
        entry.toVersionId === null ? null : (numberOf.get(entry.toVersionId) ?? null),
      ),
    })),
  ]);
}

// The rows of one import, built in memory and written with one statement per table (per chunk).
async function store(ctx: ServiceContext, organizationId: string, plan: 'free' | 'pro', creates: Resolution[]) {
  const { userId, clientId } = ctx.actor;
  const now = new Date();
  const ids = new Map<Resolution, string>();
  const promptRows: (typeof prompts.$inferInsert)[] = [];
  const versionRows: (typeof promptVersions.$inferInsert)[] = [];
  const labelRows: (typeof promptLabels.$inferInsert)[] = [];
  const historyRows: (typeof promptLabelHistory.$inferInsert)[] = [];
  const splitRows: (typeof promptSplitVersions.$inferInsert)[] = [];
  const policyRows: (typeof promptReleasePolicies.$inferInsert)[] = [];
  const datasetRows: (typeof datasets.$inferInsert)[] = [];
  const caseRows: (typeof datasetCases.$inferInsert)[] = [];
  creates.forEach((r, index) => {
    const { prompt } = r;
    // One creation time for all; ids in document order, so an export lists them as the document did.
    const promptId = newId('prm', now.getTime() + index);
    ids.set(r, promptId);
    promptRows.push({
      id: promptId,
      organizationId,
      name: r.name,
      state: prompt.state,
      // Gaps are kept: the next save gets the highest number plus one.
      versionCount: prompt.versions.length,
      lastVersionNumber: prompt.versions.reduce((max, v) => Math.max(max, v.number), 0),
      createdBy: userId,
      createdAt: now,
      archivedAt: prompt.state === 'archived' ? now : null,
      ...(prompt.scoring ? { scoring: prompt.scoring } : {}),
    });
    const versionIds = new Map<number, string>();
    for (const version of prompt.versions) {
      const id = newId('ver');
      versionIds.set(version.number, id);
      versionRows.push({
        id,
        organizationId,
        promptId,
        number: version.number,
        content: version.content,
        createdBy: userId,
        createdByClient: clientId,
        createdAt: version.createdAt ?? now,
      });
    }
    for (const { label, version, split } of prompt.labels) {
      const versionId = versionIds.get(version)!;
      const splitId = split ? newId('spl', now.getTime()) : null;
      labelRows.push({
        organizationId,
        promptId,
        label,
        versionId,
        updatedBy: userId,
        updatedAt: now,
        splitId,
        splitSince: split ? now : null,
      });
      let lo = 0;
      split?.forEach((entry, position) => {
        splitRows.push({
          splitId: splitId!,
          position,
          organizationId,
          promptId,
          label,
          versionId: versionIds.get(entry.version)!,
          weight: entry.weight,
          lo,
          hi: lo + entry.weight,
        });
        lo += entry.weight;
      });
      historyRows.push({
        organizationId,
        promptId,
        label,
        fromVersionId: null,
        toVersionId: versionId,
        userId,
        clientId,
        evaluationId: null,
        at: now,
        source: 'import',
        toSplit: split?.map((entry) => ({ versionId: versionIds.get(entry.version)!, weight: entry.weight })) ?? null,
      });
    }
    if (prompt.releasePolicy)
      policyRows.push({ promptId, organizationId, ...prompt.releasePolicy, updatedBy: userId, updatedAt: now });
    const datasetId = newId('ds');
    datasetRows.push({ id: datasetId, organizationId, promptId });
    prompt.cases.forEach((row, i) =>
      caseRows.push({ id: newId('case'), organizationId, datasetId, position: i + 1, ...row }),
    );
  });
  const { db } = ctx;
  for (const rows of chunks(promptRows)) await db.insert(prompts).values(rows);
  const versions: (typeof promptVersions.$inferSelect)[] = [];
  for (const rows of chunks(versionRows)) versions.push(...(await db.insert(promptVersions).values(rows).returning()));
  for (const rows of chunks(labelRows)) await db.insert(promptLabels).values(rows);
  for (const rows of chunks(splitRows)) await db.insert(promptSplitVersions).values(rows);
  const history: (typeof promptLabelHistory.$inferSelect)[] = [];
  for (const rows of chunks(historyRows))
    history.push(...(await db.insert(promptLabelHistory).values(rows).returning()));
  for (const rows of chunks(policyRows)) await db.insert(promptReleasePolicies).values(rows);
  for (const rows of chunks(datasetRows)) await db.insert(datasets).values(rows);
  for (const rows of chunks(caseRows)) await db.insert(datasetCases).values(rows);
  await emitImportEvents(ctx, organizationId, versions, labelRows, history);
  await raiseNewDatasetsCapacityWarnings(
    db,
    creates.map((r, i) => ({
      organizationId,
      promptId: ids.get(r)!,
      promptName: r.name,
      datasetId: datasetRows[i].id,
      count: r.prompt.cases.length,
    })),
    plan,
  );
  return ids;
}

/**
 * Imports a source document into the organization, all or nothing (editors and admins; a writable
 * organization). A dry run answers the same report and writes nothing.
 */
export async function importPrompts(
  ctx: ServiceContext,
  { organizationId, source, document, dryRun, onConflict, productionVersion }: OperationInput<'import_prompts'>,
): Promise<ImportReport> {
  const membership = await authorizeOrganizationWrite(ctx, organizationId, 'prompts.write');
  const mapper = mappers[source];
  const routeIds = new Set(configuredRoutes().map((route) => route.id));
  const mapped = mapper(document, { routeIds, ...(productionVersion !== undefined ? { productionVersion } : {}) });
  const plan = membership.organization.plan;
  const { prompts: valid, problems } = validateDocument(mapped, {
    name: plan === 'pro' ? 'Pro' : 'Free',
    capacity: capacityOf(membership),
    setsReleasePolicy: can(membership.role, 'prompts.releasePolicy'),
  });
  if (problems.length) throw rejection(problems);

  // Racing imports of one organization take turns from here, so two cannot both create one name.
  if (!dryRun) {
    await ctx.db.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`prompt-import:${organizationId}`}, 0))`);
    changesRetrieval(ctx);
  }
  const resolutions = await resolveNames(ctx, organizationId, valid, onConflict);
  const creates = resolutions.filter((r) => r.skipOf === null);
  const ids = dryRun ? new Map<Resolution, string>() : await store(ctx, organizationId, plan, creates);

  const rows: ImportReportPrompt[] = resolutions.map((r) => {
    if (r.skipOf !== null)
      return {
        name: r.name,
        action: 'skip',
        promptId: dryRun ? null : r.skipOf,
        versions: 0,
        labels: 0,
        cases: 0,
        notes: [`A prompt named "${r.name}" exists already: nothing was imported for it (onConflict skip).`],
      };
    const notes =
      r.name === r.prompt.name
        ? r.prompt.notes
        : [`A prompt named "${r.prompt.name}" exists already: imported as "${r.name}".`, ...r.prompt.notes];
    return {
      name: r.name,
      action: 'create',
      promptId: ids.get(r) ?? null,
      versions: r.prompt.versions.length,
      labels: r.prompt.labels.length,
      cases: r.prompt.cases.length,
      notes,
    };
  });
  if (!dryRun)
    await recordAudits(
      ctx,
      rows
        .filter((row) => row.action === 'create')
        .map((row) => ({
          organizationId,
          operation: 'prompt.import',
          targetType: 'prompt',
          targetId: row.promptId!,
          details: { source, name: row.name, versions: row.versions, labels: row.labels, cases: row.cases },
        })),
    );
  return { prompts: rows, notes: mapped.notes };
}
