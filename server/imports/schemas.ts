import { z } from 'zod';
import { caseFormats, encodedCaseIssues } from '../datasets/schemas';
import { encodedStringProblem } from '../input-hygiene';
import { storedInt } from '../numbers';
import { draftContentSchema, promptStates, scoringPolicyView } from '../prompts/schemas';
import { releasePolicyInput } from '../releases/schemas';

// Moving prompts in and out (API.md "Moving prompts in and out"): the lossless bundle every export
// writes and every importer stores, the import request and its report. Pure zod, so the CLI and the
// dashboard can import it.

export const bundleFormat = 'promptloop.bundle';
export const bundleFormatVersion = 1;
// The import route alone takes bodies up to 8 MiB (other management routes keep 1 MiB).
export const importMaxBodyBytes = 8 * 1024 * 1024;
// Prompts per import document (the CLI splits a larger bundle into parts of at most this many).
export const importMaxPrompts = 1_000;
// Prompts per page of the organization export.
export const exportPageSize = 25;

export const importSources = ['promptloop', 'openai', 'langfuse', 'openai_eval'] as const;
export type ImportSource = (typeof importSources)[number];
export const conflictPolicies = ['skip', 'rename'] as const;
export type ConflictPolicy = (typeof conflictPolicies)[number];

const bundleVersionSchema = z.object({
  version: z.number().int().min(1),
  content: draftContentSchema,
  createdAt: z.string(),
});
const bundleCaseSchema = z.object({
  input: z.string(),
  expectedOutput: z.string(),
  inputFormat: z.enum(caseFormats),
  referenceFormat: z.enum(caseFormats),
});

// What an export writes (ids are not carried: an import gives new ones).
const historySplit = z
  .array(z.object({ version: z.number().int().min(1).nullable(), weight: z.number().int() }))
  .nullable();

const bundlePromptSchema = z.object({
  name: z.string(),
  state: z.enum(promptStates),
  versions: z.array(bundleVersionSchema),
  labels: z.array(
    z.object({
      label: z.string(),
      version: z.number().int().min(1),
      // A traffic split (M10), by version number in the order given; null when one version.
      split: z.array(z.object({ version: z.number().int().min(1), weight: z.number().int() })).nullable(),
    }),
  ),
  // The label history as GET …/label-history shows it, versions by number (not replayed on import).
  labelHistory: z.array(
    z.object({
      label: z.string(),
      fromVersion: z.number().int().nullable(),
      toVersion: z.number().int().nullable(),
      at: z.string(),
      source: z.enum(['move', 'import']),
      fromSplit: historySplit.describe('The split the label pointed at before this entry; null for one version.'),
      toSplit: historySplit.describe('The split the label pointed at after this entry; null for one version.'),
      override: z.object({ reason: z.string() }).nullable(),
      userId: z.string(),
      clientId: z.string(),
      evaluationId: z.string().nullable(),
    }),
  ),
  scoring: scoringPolicyView.nullable(),
  // The release policy (M10); null for the default policy.
  releasePolicy: releasePolicyInput.nullable(),
  dataset: z.object({ cases: z.array(bundleCaseSchema) }),
});
export type BundlePrompt = z.infer<typeof bundlePromptSchema>;

export const bundleSchema = z.object({
  format: z.literal(bundleFormat),
  formatVersion: z.literal(bundleFormatVersion),
  exportedAt: z.string(),
  prompts: z.array(bundlePromptSchema),
});
export type Bundle = z.infer<typeof bundleSchema>;

// One page of the organization export: a bundle plus the cursor of the next page.
export const bundlePageSchema = bundleSchema.extend({ nextCursor: z.string().nullable() });
export type BundlePage = z.infer<typeof bundlePageSchema>;

export const exportOrganizationQuery = z.strictObject({
  cursor: z.string().min(1).max(500).optional().describe('The nextCursor of the previous page.'),
});

// `document` is the source's JSON as it was read: an object or an array. It is checked by the
// source's mapper item by item (422 import_rejected with JSON-pointer paths), not by this schema.
const sourceDocument = z
  .union([z.record(z.string(), z.unknown()), z.array(z.unknown())], {
    error: (issue) =>
      issue.input === undefined
        ? 'Required: the source document, as a JSON object or array.'
        : typeof issue.input === 'string'
          ? 'Give the source document as a JSON object or array, not as a string.'
          : 'Give the source document as a JSON object or array.',
  })
  .meta({ description: 'The source’s JSON as it was read (object or array).' });

export const importInput = z
  .strictObject({
    source: z
      .enum(importSources)
      .describe(
        'What document is: promptloop (a bundle), openai (request bodies), langfuse (prompt objects) or openai_eval ({ eval, items, prompt }).',
      ),
    document: sourceDocument,
    dryRun: z.boolean().default(false).describe('Write nothing and answer 200 with the same report (default false).'),
    onConflict: z
      .enum(conflictPolicies)
      .default('skip')
      .describe(
        'When a prompt of the same name exists: skip it (default), or rename the import to “Name (imported)”, “Name (imported 2)”, ….',
      ),
    // Sources without labels (OpenAI): the version that gets `production`, default the highest.
    productionVersion: storedInt(1)
      .optional()
      .describe(
        'Sources without labels (openai, openai_eval): the version number that gets production, default the highest.',
      ),
  })
  .superRefine((input, ctx) => {
    if (input.source !== 'promptloop') return;
    for (const { path, message } of encodedBundleIssues(input.document))
      ctx.addIssue({ code: 'custom', path: ['document', ...path], message });
  });

const records = (value: unknown): [number, Record<string, unknown>][] =>
  Array.isArray(value)
    ? value.flatMap((item, i) =>
        typeof item === 'object' && item !== null && !Array.isArray(item)
          ? [[i, item as Record<string, unknown>] as [number, Record<string, unknown>]]
          : [],
      )
    : [];

/**
 * API.md "Input hygiene": a poison string inside a bundle's JSON-encoded fields (a version's
 * outputSchema, a matches_schema metric's schema, a json-format case) is 400 invalid_request with its
 * path, before the importer's 422 checks. The body's own strings were checked before parsing; these
 * hold JSON text whose escapes decode to what the body check cannot see.
 */
function encodedBundleIssues(document: unknown): { path: (string | number)[]; message: string }[] {
  const found: { path: (string | number)[]; message: string }[] = [];
  const prompts = typeof document === 'object' && document !== null ? (document as { prompts?: unknown }).prompts : [];
  for (const [p, prompt] of records(prompts)) {
    for (const [v, version] of records(prompt.versions)) {
      const content = version.content as Record<string, unknown> | null | undefined;
      if (typeof content !== 'object' || content === null) continue;
      const at = ['prompts', p, 'versions', v, 'content'];
      const schema = typeof content.outputSchema === 'string' ? encodedStringProblem(content.outputSchema) : '';
      if (schema) found.push({ path: [...at, 'outputSchema'], message: schema });
      for (const [m, metric] of records(content.customMetrics)) {
        const problem = typeof metric.value === 'string' ? encodedStringProblem(metric.value) : '';
        if (problem && metric.type === 'matches_schema')
          found.push({ path: [...at, 'customMetrics', m, 'value'], message: problem });
      }
    }
    const dataset = prompt.dataset as { cases?: unknown } | null | undefined;
    for (const [c, row] of records(dataset?.cases))
      for (const issue of encodedCaseIssues(row))
        found.push({ path: ['prompts', p, 'dataset', 'cases', c, ...issue.path], message: issue.message });
  }
  return found;
}
export type ImportInput = z.infer<typeof importInput>;

const importReportPromptSchema = z.object({
  name: z.string().describe('The name stored: the new one after a rename.'),
  action: z.enum(['create', 'skip']),
  promptId: z
    .string()
    .nullable()
    .describe('The new prompt’s id, the existing prompt’s id on a skip, null in a dry run.'),
  versions: z.number().int(),
  labels: z.number().int(),
  cases: z.number().int(),
  notes: z.array(z.string()),
});
export type ImportReportPrompt = z.infer<typeof importReportPromptSchema>;

export const importReportSchema = z.object({
  prompts: z.array(importReportPromptSchema),
  notes: z.array(z.string()).describe('What could not be carried, and why: nothing is dropped silently.'),
});
export type ImportReport = z.infer<typeof importReportSchema>;

// A 422 import_rejected item: `path` is a JSON pointer into `document`.
export type ImportProblem = { path: string; message: string };
