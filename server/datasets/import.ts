import { eq } from 'drizzle-orm';
import { datasetCases } from '@/db/schema';
import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { AppError, zodIssues } from '../errors';
import { newId } from '../ids';
import { authorizePromptWrite } from '../access/organization';
import { inputWarnings } from './case-input';
import { capacityOf, casesOf, checkedContent, datasetOf, writeDataset } from './service';
import {
  caseRowSchema,
  type ImportMode,
  type ImportPreview,
  type ImportResult,
  type RowError,
  type SkippedRow,
  type ValidCaseRow,
} from './schemas';

// What an import would do: the preview, plus the rows it adds (each with its 1-based request row).
type Plan = Omit<ImportPreview, 'wouldAdd'> & { additions: ValidCaseRow[]; additionRows: number[] };

const pairKey = (row: { input: string; expectedOutput: string }) => JSON.stringify([row.input, row.expectedOutput]);

function validateRow(raw: unknown, rowNumber: number): { row?: ValidCaseRow; errors: RowError[] } {
  const result = caseRowSchema.safeParse(raw);
  if (result.success) return { row: result.data, errors: [] };
  return { errors: zodIssues(result.error).map(({ path, message }) => ({ row: rowNumber, field: path, message })) };
}

// The one set of import rules; preview and import both call it. Rows are 1-based; duplicates
// (of existing rows in append mode, and of earlier rows in the request) are skipped, first wins.
function planImport(
  rows: unknown[],
  existing: { input: string; expectedOutput: string }[],
  mode: ImportMode,
  capacity: number,
): Plan {
  const seen = new Set(mode === 'append' ? existing.map(pairKey) : []);
  const additions: ValidCaseRow[] = [];
  const additionRows: number[] = [];
  const skippedRows: SkippedRow[] = [];
  const rowErrors: RowError[] = [];
  rows.forEach((raw, i) => {
    const { row, errors } = validateRow(raw, i + 1);
    if (!row) {
      rowErrors.push(...errors);
      return;
    }
    const key = pairKey(row);
    if (seen.has(key)) {
      skippedRows.push({ row: i + 1, reason: 'duplicate' });
      return;
    }
    seen.add(key);
    additions.push(row);
    additionRows.push(i + 1);
  });
  const currentCount = existing.length;
  const availableCapacity = mode === 'replace' ? capacity : Math.max(0, capacity - currentCount);
  const requestedAddition = additions.length;
  const accepted = rowErrors.length === 0 && requestedAddition <= availableCapacity;
  return {
    additions,
    additionRows,
    skippedRows,
    rowErrors,
    currentCount,
    availableCapacity,
    requestedAddition,
    accepted,
  };
}

function rejection(plan: Plan): AppError {
  const message = plan.rowErrors.length
    ? `The import was rejected: ${plan.rowErrors.length} problem(s) in the rows. Nothing was imported.`
    : `The import was rejected: ${plan.requestedAddition} new case(s) but room for ${plan.availableCapacity}. Nothing was imported.`;
  return new AppError('import_rejected', message, {
    rowErrors: plan.rowErrors,
    currentCount: plan.currentCount,
    availableCapacity: plan.availableCapacity,
    requestedAddition: plan.requestedAddition,
  });
}

// Same checks as import (role, writable organization, prompt not archived), writing nothing.
export async function previewImport(
  ctx: ServiceContext,
  organizationId: string,
  promptId: string,
  input: { mode: ImportMode; rows: unknown[] },
): Promise<ImportPreview> {
  const { membership, prompt } = await authorizePromptWrite(ctx, organizationId, promptId);
  const dataset = await datasetOf(ctx.db, prompt);
  const plan = planImport(input.rows, await casesOf(ctx.db, dataset.id), input.mode, capacityOf(membership));
  const { additions, additionRows, ...rest } = plan;
  return { wouldAdd: additions.length, ...rest };
}

export async function importCases(
  ctx: ServiceContext,
  { organizationId, promptId, revision, mode, rows }: OperationInput<'import_dataset'>,
): Promise<ImportResult> {
  return writeDataset(
    ctx,
    organizationId,
    promptId,
    revision,
    'dataset.import',
    async ({ ctx: txCtx, tx, dataset, capacity }) => {
      const existing = await casesOf(tx, dataset.id);
      const plan = planImport(rows, existing, mode, capacity);
      if (!plan.accepted) throw rejection(plan);
      let start = existing.length;
      if (mode === 'replace') {
        await tx.delete(datasetCases).where(eq(datasetCases.datasetId, dataset.id));
        start = 0;
      }
      const added = plan.additions.map((row, i) => ({
        id: newId('case'),
        organizationId,
        datasetId: dataset.id,
        position: start + i + 1,
        ...row,
      }));
      if (added.length) await tx.insert(datasetCases).values(added);
      const warnings = inputWarnings(await checkedContent(txCtx, dataset.promptId), added, (i) => plan.additionRows[i]);
      const count = start + added.length;
      const details = { mode, added: added.length, skipped: plan.skippedRows.length };
      return {
        details,
        unchanged: mode === 'append' && added.length === 0,
        result: (revision) => ({
          added: added.length,
          skipped: plan.skippedRows.length,
          count,
          revision,
          skippedRows: plan.skippedRows,
          warnings,
        }),
      };
    },
  );
}
