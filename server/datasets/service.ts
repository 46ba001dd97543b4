import { and, asc, count, eq, gt, sql } from 'drizzle-orm';
import { datasetCases, datasets, drafts } from '@/db/schema';
import { inSnapshot, type ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { AppError, invalidRequest, notFound, zodIssues } from '../errors';
import { newId } from '../ids';
import { recordAudit } from '../audit/service';
import type { Membership } from '../access/permissions';
import { syncDatasetCapacityWarning } from './capacity-warning';
import { authorizePromptRead, authorizePromptWrite, type PromptRow } from '../access/organization';
import { latestVersionContent } from '../prompts/service';
import type { DraftContent } from '../prompts/schemas';
import { inputWarnings } from './case-input';
import {
  caseRowSchema,
  planCapacity,
  type CaseRowPatch,
  type CaseSource,
  type Dataset,
  type DatasetCase,
  type DatasetCaseResult,
  type ValidCaseRow,
} from './schemas';

export type DatasetRow = typeof datasets.$inferSelect;
type CaseRowRecord = typeof datasetCases.$inferSelect;
type Tx = ServiceContext['db'];

export function capacityOf(membership: Membership): number {
  return planCapacity[membership.organization.plan];
}

function toCase(row: CaseRowRecord): DatasetCase {
  return {
    id: row.id,
    position: row.position,
    input: row.input,
    expectedOutput: row.expectedOutput,
    inputFormat: row.inputFormat,
    referenceFormat: row.referenceFormat,
    source:
      row.sourceTraceId !== null && row.sourceSpanId !== null
        ? { traceId: row.sourceTraceId, spanId: row.sourceSpanId }
        : null,
  };
}

export async function datasetOf(db: Tx, prompt: PromptRow, options: { lock?: boolean } = {}): Promise<DatasetRow> {
  const query = db
    .select()
    .from(datasets)
    .where(and(eq(datasets.promptId, prompt.id), eq(datasets.organizationId, prompt.organizationId)));
  const [row] = options.lock ? await query.for('update') : await query;
  if (!row) throw notFound('Dataset');
  return row;
}

export async function casesOf(db: Tx, datasetId: string): Promise<CaseRowRecord[]> {
  return db
    .select()
    .from(datasetCases)
    .where(eq(datasetCases.datasetId, datasetId))
    .orderBy(asc(datasetCases.position), asc(datasetCases.id));
}

export async function countOf(db: Tx, datasetId: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(datasetCases).where(eq(datasetCases.datasetId, datasetId));
  return row.n;
}

/**
 * The content cases are checked against for input_incompatible warnings (docs/decisions.md Q1):
 * the caller's draft of the prompt, else its latest saved version; null before either exists.
 */
export async function checkedContent(ctx: ServiceContext, promptId: string): Promise<DraftContent | null> {
  const [draft] = await ctx.db
    .select({ content: drafts.content })
    .from(drafts)
    .where(and(eq(drafts.promptId, promptId), eq(drafts.userId, ctx.actor.userId)));
  return (draft?.content ?? (await latestVersionContent(ctx, promptId))) as DraftContent | null;
}

async function toDataset(ctx: ServiceContext, dataset: DatasetRow, capacity: number): Promise<Dataset> {
  const rows = (await casesOf(ctx.db, dataset.id)).map(toCase);
  const warnings = inputWarnings(await checkedContent(ctx, dataset.promptId), rows);
  return { id: dataset.id, revision: dataset.revision, count: rows.length, capacity, rows, warnings };
}

async function toCaseResult(ctx: ServiceContext, dataset: DatasetRow, row: CaseRowRecord): Promise<DatasetCaseResult> {
  const item = toCase(row);
  return { ...item, warnings: inputWarnings(await checkedContent(ctx, dataset.promptId), [item]) };
}

export async function getDataset(
  ctx: ServiceContext,
  { organizationId, promptId }: OperationInput<'get_dataset'>,
): Promise<Dataset> {
  const { membership, prompt } = await authorizePromptRead(ctx, organizationId, promptId);
  // One snapshot: the revision answered is the revision of the rows answered.
  return inSnapshot(ctx.db, async (db) =>
    toDataset({ ...ctx, db }, await datasetOf(db, prompt), capacityOf(membership)),
  );
}

export type DatasetWrite = { ctx: ServiceContext; tx: Tx; dataset: DatasetRow; capacity: number };

// Every dataset write: authorize, lock the dataset row, check the expected revision, run the
// change, then bump the revision, keep the dataset_near_capacity warning and audit, all in the caller's transaction. The row lock serializes
// writers, so capacity checks made under it hold until commit.
export async function writeDataset<T>(
  ctx: ServiceContext,
  organizationId: string,
  promptId: string,
  expectedRevision: number,
  operation: string,
  change: (write: DatasetWrite) => Promise<{
    result: (revision: number) => Promise<T> | T;
    details?: Record<string, unknown>;
    targetId?: string;
    // Nothing changed (an import whose rows were all duplicates): the revision stays.
    unchanged?: boolean;
  }>,
): Promise<T> {
  const { db } = ctx;
  const { membership, prompt } = await authorizePromptWrite(ctx, organizationId, promptId);
  const dataset = await datasetOf(db, prompt, { lock: true });
  if (dataset.revision !== expectedRevision) {
    throw new AppError('dataset_conflict', 'The dataset changed since you loaded it. Reload it and try again.', {
      currentRevision: dataset.revision,
    });
  }
  const outcome = await change({ ctx, tx: db, dataset, capacity: capacityOf(membership) });
  const count = await countOf(db, dataset.id);
  await syncDatasetCapacityWarning(
    db,
    { organizationId, promptId: prompt.id, promptName: prompt.name, datasetId: dataset.id, count },
    membership.organization.plan,
  );
  const [bumped] = outcome.unchanged
    ? [{ revision: expectedRevision }]
    : await db
        .update(datasets)
        .set({ revision: sql`${datasets.revision} + 1`, updatedAt: new Date() })
        .where(and(eq(datasets.id, dataset.id), eq(datasets.revision, expectedRevision)))
        .returning({ revision: datasets.revision });
  await recordAudit(ctx, {
    organizationId,
    operation,
    // A write of one case names the case; the others (import, reorder) the dataset.
    targetType: outcome.targetId ? 'case' : 'dataset',
    targetId: outcome.targetId ?? dataset.id,
    details: { promptId: prompt.id, revision: bumped.revision, ...outcome.details },
  });
  return outcome.result(bumped.revision);
}

// Input/expectedOutput pairs stay unique within a dataset: the case that already holds the pair.
export async function duplicateOf(
  db: Tx,
  datasetId: string,
  row: Pick<ValidCaseRow, 'input' | 'expectedOutput'>,
  exceptId?: string,
): Promise<string | null> {
  const found = await db
    .select({ id: datasetCases.id })
    .from(datasetCases)
    .where(
      and(
        eq(datasetCases.datasetId, datasetId),
        eq(datasetCases.input, row.input),
        eq(datasetCases.expectedOutput, row.expectedOutput),
      ),
    );
  return found.find((c) => c.id !== exceptId)?.id ?? null;
}

async function assertNoDuplicate(tx: Tx, datasetId: string, row: ValidCaseRow, exceptId?: string): Promise<void> {
  const existing = await duplicateOf(tx, datasetId, row, exceptId);
  if (existing) {
    throw new AppError('invalid_state', 'A case with the same input and expected output already exists.', {
      state: 'duplicate',
      caseId: existing,
    });
  }
}

/**
 * Appends one case under a dataset write (add case, and a case from a span): the capacity of the
 * plan, then the unique input/expectedOutput pair, then the insert at the end of the order.
 */
export async function insertCase(
  { ctx, tx, dataset, capacity }: DatasetWrite,
  row: ValidCaseRow,
  source: CaseSource | null = null,
): Promise<{ result: () => Promise<DatasetCaseResult>; targetId: string }> {
  const current = await countOf(tx, dataset.id);
  if (current >= capacity) {
    throw new AppError('invalid_state', `The dataset is full (${capacity} cases on this plan).`, {
      state: 'at_capacity',
      count: current,
      capacity,
    });
  }
  await assertNoDuplicate(tx, dataset.id, row);
  const [inserted] = await tx
    .insert(datasetCases)
    .values({
      id: newId('case'),
      organizationId: dataset.organizationId,
      datasetId: dataset.id,
      position: current + 1,
      ...row,
      sourceTraceId: source?.traceId ?? null,
      sourceSpanId: source?.spanId ?? null,
    })
    .returning();
  return { result: () => toCaseResult(ctx, dataset, inserted), targetId: inserted.id };
}

export async function addCase(
  ctx: ServiceContext,
  { organizationId, promptId, revision, row }: OperationInput<'add_dataset_case'>,
): Promise<DatasetCaseResult> {
  return writeDataset(ctx, organizationId, promptId, revision, 'dataset.addCase', (write) => insertCase(write, row));
}

async function loadCase(tx: Tx, datasetId: string, caseId: string): Promise<CaseRowRecord> {
  const [row] = await tx
    .select()
    .from(datasetCases)
    .where(and(eq(datasetCases.id, caseId), eq(datasetCases.datasetId, datasetId)));
  if (!row) throw notFound('Case');
  return row;
}

// Fields left out keep their stored values; the merged row must pass the same rules as a new one.
function mergeRow(current: CaseRowRecord, patch: CaseRowPatch): ValidCaseRow {
  const merged = {
    input: current.input,
    expectedOutput: current.expectedOutput,
    inputFormat: current.inputFormat,
    referenceFormat: current.referenceFormat,
    ...patch,
  };
  const result = caseRowSchema.safeParse(merged);
  if (!result.success)
    throw invalidRequest(
      'The case is not valid.',
      zodIssues(result.error).map(({ path, message }) => ({ path: path ? `row.${path}` : 'row', message })),
    );
  return result.data;
}

export async function updateCase(
  ctx: ServiceContext,
  { organizationId, promptId, caseId, revision, row: patch }: OperationInput<'update_dataset_case'>,
): Promise<DatasetCaseResult> {
  return writeDataset(
    ctx,
    organizationId,
    promptId,
    revision,
    'dataset.updateCase',
    async ({ ctx: txCtx, tx, dataset }) => {
      const merged = mergeRow(await loadCase(tx, dataset.id, caseId), patch);
      await assertNoDuplicate(tx, dataset.id, merged, caseId);
      const [row] = await tx.update(datasetCases).set(merged).where(eq(datasetCases.id, caseId)).returning();
      return { result: () => toCaseResult(txCtx, dataset, row), targetId: caseId };
    },
  );
}

// Positions stay contiguous from 1: the cases after the removed one move up.
export async function deleteCase(
  ctx: ServiceContext,
  { organizationId, promptId, caseId, revision }: OperationInput<'delete_dataset_case'>,
): Promise<Dataset> {
  return writeDataset(
    ctx,
    organizationId,
    promptId,
    revision,
    'dataset.deleteCase',
    async ({ ctx: txCtx, tx, dataset, capacity }) => {
      const removed = await loadCase(tx, dataset.id, caseId);
      await tx.delete(datasetCases).where(eq(datasetCases.id, caseId));
      await tx
        .update(datasetCases)
        .set({ position: sql`${datasetCases.position} - 1` })
        .where(and(eq(datasetCases.datasetId, dataset.id), gt(datasetCases.position, removed.position)));
      return { result: (bumped) => toDataset(txCtx, { ...dataset, revision: bumped }, capacity), targetId: caseId };
    },
  );
}

export async function reorderCases(
  ctx: ServiceContext,
  { organizationId, promptId, revision, caseIds }: OperationInput<'reorder_dataset'>,
): Promise<Dataset> {
  return writeDataset(
    ctx,
    organizationId,
    promptId,
    revision,
    'dataset.reorder',
    async ({ ctx: txCtx, tx, dataset, capacity }) => {
      const current = await casesOf(tx, dataset.id);
      const known = new Set(current.map((c) => c.id));
      const given = new Set<string>();
      const repeated = new Set<string>();
      for (const id of caseIds) (given.has(id) ? repeated : given).add(id);
      const unknown = caseIds.filter((id) => !known.has(id));
      const missing = current.map((c) => c.id).filter((id) => !given.has(id));
      if (repeated.size || unknown.length || missing.length) {
        throw new AppError('invalid_order', 'List every current case id exactly once.', {
          missing,
          unknown,
          duplicates: [...repeated],
        });
      }
      if (caseIds.length) {
        await tx.execute(sql`
        update dataset_cases as c set position = o.ord
        from jsonb_array_elements_text(${JSON.stringify(caseIds)}::jsonb) with ordinality as o(id, ord)
        where c.id = o.id and c.dataset_id = ${dataset.id}`);
      }
      return { result: (bumped) => toDataset(txCtx, { ...dataset, revision: bumped }, capacity) };
    },
  );
}
