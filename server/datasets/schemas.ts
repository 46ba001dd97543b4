import { z } from 'zod';
import { revisionSchema } from '../prompts/schemas';
import { encodedStringProblem, jsonTextProblem } from '../input-hygiene';
import { integerParam } from '../numbers';

export const caseFormats = ['text', 'json'] as const;
const importModes = ['append', 'replace'] as const;
export const caseLimits = { inputChars: 100_000, expectedOutputChars: 100_000 } as const;
export const planCapacity = { free: 10, pro: 500 } as const;

// A JSON-format field must hold a JSON document; text holds anything.
function jsonProblem(value: string): string {
  const problem = jsonTextProblem(value);
  return problem === 'Must be valid JSON text.' ? 'Must be valid JSON for the json format.' : problem;
}

const caseRowFields = {
  input: z
    .string()
    .min(1, 'Input is required.')
    .max(caseLimits.inputChars, `Use at most ${caseLimits.inputChars} characters.`),
  expectedOutput: z
    .string()
    .max(caseLimits.expectedOutputChars, `Use at most ${caseLimits.expectedOutputChars} characters.`),
  inputFormat: z.enum(caseFormats),
  referenceFormat: z.enum(caseFormats),
};

type FormatChecked = { input?: string; expectedOutput?: string; inputFormat?: string; referenceFormat?: string };
function checkJsonFormats(row: FormatChecked, ctx: z.RefinementCtx): void {
  if (row.inputFormat === 'json' && row.input !== undefined && jsonProblem(row.input))
    ctx.addIssue({ code: 'custom', path: ['input'], message: jsonProblem(row.input) });
  if (row.referenceFormat === 'json' && row.expectedOutput !== undefined && jsonProblem(row.expectedOutput)) {
    ctx.addIssue({ code: 'custom', path: ['expectedOutput'], message: jsonProblem(row.expectedOutput) });
  }
}

export const caseRowSchema = z
  .strictObject({
    ...caseRowFields,
    inputFormat: caseRowFields.inputFormat.default('text'),
    referenceFormat: caseRowFields.referenceFormat.default('text'),
  })
  .superRefine(checkJsonFormats);

// Update takes any subset of the fields; the rest keep their stored values, and the merged row
// must pass the same rules (checked again by the service).
const caseRowPatchSchema = z
  .strictObject({
    input: caseRowFields.input.optional(),
    expectedOutput: caseRowFields.expectedOutput.optional(),
    inputFormat: caseRowFields.inputFormat.optional(),
    referenceFormat: caseRowFields.referenceFormat.optional(),
  })
  .refine((row) => Object.keys(row).length > 0, 'Give at least one field to change.')
  .meta({ minProperties: 1 });
export type CaseRowPatch = z.infer<typeof caseRowPatchSchema>;
export type CaseRow = z.input<typeof caseRowSchema>;
export type ValidCaseRow = z.infer<typeof caseRowSchema>;

// Import rows are checked one by one (invalid rows become rowErrors, not a 400), so the
// body accepts any items and the document describes the row shape.
const importRow = z.unknown().meta({
  type: 'object',
  additionalProperties: false,
  required: ['input', 'expectedOutput'],
  properties: {
    input: { type: 'string', minLength: 1, maxLength: caseLimits.inputChars },
    expectedOutput: { type: 'string', maxLength: caseLimits.expectedOutputChars },
    inputFormat: { type: 'string', enum: [...caseFormats], default: 'text' },
    referenceFormat: { type: 'string', enum: [...caseFormats], default: 'text' },
  },
});

// The dataset revision the caller last read: a stale one is 409 dataset_conflict and changes nothing.
const revisionText = 'The dataset revision you last read (409 dataset_conflict when stale).';
export const datasetRevision = revisionSchema.describe(revisionText);

export const addCaseInput = z.strictObject({
  revision: datasetRevision,
  row: caseRowSchema.describe(
    'The case: input, expectedOutput, and inputFormat and referenceFormat (text or json, default text).',
  ),
});
export const updateCaseInput = z.strictObject({
  revision: datasetRevision,
  row: caseRowPatchSchema.describe('The fields to change (at least one); the others keep their stored values.'),
});
export const deleteCaseQuery = z.strictObject({ revision: integerParam(0).describe(revisionText) });
export const reorderInput = z.strictObject({
  revision: datasetRevision,
  caseIds: z
    .array(z.string().min(1))
    .max(10_000)
    .describe('Every current case id exactly once, in the new order (422 invalid_order otherwise).'),
});
export const previewImportInput = z.strictObject({
  mode: z.enum(importModes).default('append'),
  rows: z.array(importRow).max(10_000),
});
export const importInput = z
  .strictObject({
    revision: datasetRevision,
    mode: z
      .enum(importModes)
      .default('append')
      .describe('append (default) adds to the current cases; replace deletes them first.'),
    rows: z
      .array(importRow)
      .max(10_000)
      .describe(
        'Up to 10,000 rows { input, expectedOutput, inputFormat, referenceFormat }; duplicates are skipped, any invalid row rejects the import (422).',
      ),
  })
  .superRefine((input, ctx) =>
    input.rows.forEach((row, i) => {
      for (const { path, message } of encodedCaseIssues(row))
        ctx.addIssue({ code: 'custom', path: ['rows', i, ...path], message });
    }),
  );

/**
 * API.md "Input hygiene": a poison string inside a json-format case (U+0000 or a lone surrogate as a
 * `\u` escape in its JSON text) is 400 invalid_request with its path, before an import's 422 row
 * checks. Issues relative to the row; a row of any other shape is the row checks' to report.
 */
export function encodedCaseIssues(row: unknown): { path: string[]; message: string }[] {
  if (typeof row !== 'object' || row === null) return [];
  const { input, expectedOutput, inputFormat, referenceFormat } = row as Record<string, unknown>;
  const found: { path: string[]; message: string }[] = [];
  const check = (field: string, value: unknown, format: unknown) => {
    const problem = format === 'json' && typeof value === 'string' ? encodedStringProblem(value) : '';
    if (problem) found.push({ path: [field], message: problem });
  };
  check('input', input, inputFormat);
  check('expectedOutput', expectedOutput, referenceFormat);
  return found;
}
export type ImportMode = (typeof importModes)[number];

// Where a case came from: the production span it was made from (POST …/dataset/cases/from-span).
const caseSourceSchema = z
  .object({ traceId: z.string(), spanId: z.string() })
  .nullable()
  .describe('The span the case was made from (POST …/dataset/cases/from-span); null for any other case.');
export type CaseSource = NonNullable<z.infer<typeof caseSourceSchema>>;

const datasetCaseSchema = z.object({
  id: z.string(),
  position: z.number().int(),
  input: z.string(),
  expectedOutput: z.string(),
  inputFormat: z.enum(caseFormats),
  referenceFormat: z.enum(caseFormats),
  source: caseSourceSchema,
});
export type DatasetCase = z.infer<typeof datasetCaseSchema>;

// A case that cannot run under the prompt's input type (docs/decisions.md Q1): it is kept, and an
// evaluation records it as an error without charging a credit.
export const inputWarningSchema = z
  .object({
    code: z.literal('input_incompatible'),
    message: z
      .string()
      .describe('Why the case cannot run, e.g. a variables prompt given text instead of a JSON object of values.'),
    caseId: z.string(),
    row: z.number().int().optional().describe('Import only: the 1-based row of the request.'),
  })
  .describe('Checked against your draft of the prompt, else its latest saved version.');
export type InputWarning = z.infer<typeof inputWarningSchema>;
const warningsField = z
  .array(inputWarningSchema)
  .describe('Cases that cannot run under the prompt’s input type; empty when every case can.');

export const datasetCaseResultSchema = datasetCaseSchema.extend({ warnings: warningsField });
export type DatasetCaseResult = z.infer<typeof datasetCaseResultSchema>;

export const datasetSchema = z.object({
  id: z.string(),
  revision: z.number().int(),
  count: z.number().int(),
  capacity: z.number().int(),
  rows: z.array(datasetCaseSchema),
  warnings: warningsField,
});
export type Dataset = z.infer<typeof datasetSchema>;

const skippedRowSchema = z.object({ row: z.number().int(), reason: z.literal('duplicate') });
export type SkippedRow = z.infer<typeof skippedRowSchema>;
export type RowError = { row: number; field: string; message: string };

export const importResultSchema = z.object({
  added: z.number().int(),
  skipped: z.number().int(),
  count: z.number().int(),
  revision: z.number().int(),
  skippedRows: z.array(skippedRowSchema),
  warnings: warningsField,
});
export type ImportResult = z.infer<typeof importResultSchema>;

// The dashboard-only preview of an import (no REST response documents it).
export type ImportPreview = {
  wouldAdd: number;
  skippedRows: SkippedRow[];
  rowErrors: RowError[];
  currentCount: number;
  availableCapacity: number;
  requestedAddition: number;
  accepted: boolean;
};
