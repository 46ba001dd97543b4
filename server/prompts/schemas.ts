import { z } from 'zod';
import Ajv from 'ajv';
import { jsonTextProblem, maxBodyDepth } from '../input-hygiene';
import { pageQuery } from '../paging';
import { integerParam, storedInt } from '../numbers';
import { localRouteId } from '../models/routes';
import { toolLimits, toolNamePattern } from '@/lib/tools';
import { nameSchema, trimmedText } from '../text';

export const promptStates = ['setup', 'active', 'archived'] as const;
export const messageRoles = ['system', 'user', 'assistant'] as const;
export const inputTypes = ['user_message', 'variables'] as const;
const metricTypes = ['contains', 'not_contains', 'matches_regex', 'is_json', 'matches_schema', 'max_chars'] as const;
export type MetricType = (typeof metricTypes)[number];

const limits = {
  promptName: 200,
  messages: 50,
  messageChars: 100_000,
  outputSchemaChars: 100_000,
  metrics: 20,
  metricName: 100,
  metricValueChars: 10_000,
} as const;

export { extractVariables, replaceVariables } from '@/lib/templates';

let ajv: Ajv | undefined;
// '' when valid, else why the document is not a JSON Schema.
function jsonSchemaProblem(text: string, maxDepth = maxBodyDepth): string {
  // Depth and storable strings first: ajv walks the document recursively.
  const result: { value?: unknown } = {};
  const problem = jsonTextProblem(text, maxDepth, result);
  if (problem) return problem === 'Must be valid JSON text.' ? 'Must be valid JSON.' : problem;
  const parsed = result.value;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    if (typeof parsed !== 'boolean') return 'Must be a JSON Schema object.';
  }
  ajv ??= new Ajv({ strict: false, validateSchema: true });
  if (!ajv.validateSchema(parsed as object)) return `Not a valid JSON Schema: ${ajv.errorsText(ajv.errors)}.`;
  return '';
}

function regexProblem(source: string): string {
  try {
    new RegExp(source);
    return '';
  } catch (error) {
    return `Not a valid regular expression: ${(error as Error).message}`;
  }
}

const promptName = nameSchema(limits.promptName);

const messageSchema = z.strictObject({
  role: z.enum(messageRoles),
  content: z
    .string()
    .min(1, 'Message content is required.')
    .max(limits.messageChars, `Use at most ${limits.messageChars} characters.`),
});

const customMetricSchema = z
  .strictObject({
    name: trimmedText(limits.metricName, 'Name is required.'),
    type: z.enum(metricTypes),
    value: z.union([z.string().max(limits.metricValueChars), z.number()]).optional(),
  })
  .superRefine((metric, ctx) => {
    const issue = (message: string) => ctx.addIssue({ code: 'custom', path: ['value'], message });
    const { type, value } = metric;
    if (type === 'contains' || type === 'not_contains') {
      if (typeof value !== 'string' || value.length === 0) issue('Give the text to look for.');
    } else if (type === 'matches_regex') {
      if (typeof value !== 'string' || value.length === 0) issue('Give a regular expression.');
      else if (regexProblem(value)) issue(regexProblem(value));
    } else if (type === 'is_json') {
      if (value !== undefined) issue('is_json takes no value.');
    } else if (type === 'matches_schema') {
      // Without a value the metric checks against the prompt's outputSchema.
      if (value !== undefined && (typeof value !== 'string' || jsonSchemaProblem(value)))
        issue(typeof value === 'string' ? jsonSchemaProblem(value) : 'Give a JSON Schema document as a string.');
    } else if (type === 'max_chars') {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 1)
        issue('Give a positive whole number of characters.');
    }
  });
export type CustomMetric = z.infer<typeof customMetricSchema>;

// A function tool the model may call (API.md "Moving prompts in and out"): sent to an
// OpenAI-compatible route as a function definition; a tool call in the answer is the output.
// The object root is what OpenAI's function definitions accept.
const defaultToolParameters = () => ({ type: 'object', properties: {} });
const toolSchema = z
  .strictObject({
    type: z.literal('function'),
    name: z.string().regex(toolNamePattern, 'Use 1 to 64 letters, digits, underscores or hyphens.'),
    description: z
      .string()
      .max(toolLimits.descriptionChars, `Use at most ${toolLimits.descriptionChars} characters.`)
      .default(''),
    // A JSON Schema object describing the arguments.
    parameters: z
      .record(z.string(), z.unknown(), 'Must be a JSON Schema object, for example {"type": "object"}.')
      .default(defaultToolParameters),
  })
  .superRefine((tool, ctx) => {
    const issue = (message: string) => ctx.addIssue({ code: 'custom', path: ['parameters'], message });
    const text = JSON.stringify(tool.parameters);
    if (text.length > toolLimits.parametersChars)
      return issue(`Use at most ${toolLimits.parametersChars} characters of JSON.`);
    const problem = jsonSchemaProblem(text, toolLimits.parametersDepth);
    if (problem) return issue(problem);
    if ('type' in tool.parameters && tool.parameters.type !== 'object')
      issue('The arguments of a function are an object: use "type": "object".');
  });
export type Tool = z.infer<typeof toolSchema>;

const contentFields = {
  messages: z.array(messageSchema).max(limits.messages, `Use at most ${limits.messages} messages.`),
  inputType: z.enum(inputTypes),
  modelRouteId: z.string().min(1).max(200).default(localRouteId),
  temperature: z.number().min(0).max(2).default(1),
  outputSchema: z.string().max(limits.outputSchemaChars).default(''),
  customMetrics: z.array(customMetricSchema).max(limits.metrics, `Use at most ${limits.metrics} metrics.`).default([]),
  tools: z.array(toolSchema).max(toolLimits.tools, `Use at most ${toolLimits.tools} tools.`).default([]),
  // null: the route's own limit.
  maxOutputTokens: z
    .number('Give a whole number of tokens, or null for the model’s default.')
    .int('Give a whole number of tokens.')
    .min(1, 'Give at least 1 token.')
    .max(toolLimits.maxOutputTokens, `Use at most ${toolLimits.maxOutputTokens} tokens.`)
    .nullable()
    .default(null),
};

// What a client sends: messages and inputType are required, the rest have defaults.
// modelId is optional: it is filled from the route (and must match it when given).
export const draftContentInput = z
  .strictObject({ ...contentFields, modelId: z.string().min(1).max(200).optional() })
  .superRefine((content, ctx) => {
    if (content.outputSchema !== '') {
      const problem = jsonSchemaProblem(content.outputSchema);
      if (problem) ctx.addIssue({ code: 'custom', path: ['outputSchema'], message: problem });
    }
    const toolNames = new Set<string>();
    content.tools.forEach((tool, i) => {
      if (toolNames.has(tool.name))
        ctx.addIssue({ code: 'custom', path: ['tools', i, 'name'], message: 'Tool names must be unique.' });
      toolNames.add(tool.name);
    });
    const names = new Set<string>();
    content.customMetrics.forEach((metric, i) => {
      if (names.has(metric.name))
        ctx.addIssue({ code: 'custom', path: ['customMetrics', i, 'name'], message: 'Metric names must be unique.' });
      names.add(metric.name);
      if (metric.type === 'matches_schema' && metric.value === undefined && content.outputSchema === '') {
        ctx.addIssue({
          code: 'custom',
          path: ['customMetrics', i, 'value'],
          message: 'Give a JSON Schema, or set the output schema.',
        });
      }
    });
  });
export type ParsedDraftContent = z.infer<typeof draftContentInput>;

export const draftContentSchema = z.object({
  messages: z.array(z.object({ role: z.enum(messageRoles), content: z.string() })),
  inputType: z.enum(inputTypes),
  modelRouteId: z.string(),
  modelId: z.string(),
  temperature: z.number(),
  outputSchema: z.string(),
  customMetrics: z.array(
    z.object({ name: z.string(), type: z.enum(metricTypes), value: z.union([z.string(), z.number()]).optional() }),
  ),
  tools: z.array(
    z.object({
      type: z.literal('function'),
      name: z.string(),
      description: z.string(),
      parameters: z.record(z.string(), z.unknown()),
    }),
  ),
  maxOutputTokens: z.number().int().nullable(),
});
export type DraftContent = z.infer<typeof draftContentSchema>;

export const revisionSchema = storedInt(0);

const draftRevision = revisionSchema.describe(
  'The revision of your draft you last read (409 draft_conflict when stale).',
);

export const createPromptInput = z.strictObject({
  name: promptName.describe(`The prompt’s name, 1 to ${limits.promptName} characters (trimmed).`),
});
export const renamePromptInput = z.strictObject({
  name: promptName.describe(`The new name, 1 to ${limits.promptName} characters (trimmed).`),
});
export const updateDraftInput = z.strictObject({
  content: draftContentInput.describe(
    'The whole new content: messages and inputType (required), modelRouteId, temperature, outputSchema, customMetrics, tools and maxOutputTokens.',
  ),
  revision: draftRevision,
});
export const discardDraftInput = z.strictObject({ revision: draftRevision });

export const listPromptsQuery = pageQuery.extend({
  state: z.enum(promptStates).optional().describe('Only prompts in this state.'),
  search: trimmedText(limits.promptName, 'Give something to search for.')
    .optional()
    .describe('Case-insensitive part of the name.'),
});

const labelSchema = z.object({
  label: z.string(),
  versionId: z.string().describe('The version it points at; during a split, the largest weight’s.'),
  version: z.number().int(),
  splitId: z
    .string()
    .nullable()
    .describe('spl_… while the label splits its traffic between versions (…/labels has the shares); else null.'),
});

export const promptSchema = z.object({
  id: z.string(),
  name: z.string(),
  state: z.enum(promptStates),
  versionCount: z.number().int(),
  createdAt: z.string(),
  productionVersionId: z.string().nullable(),
  labels: z.array(labelSchema),
  archivedAt: z.string().nullable(),
});
export type Prompt = z.infer<typeof promptSchema>;

export const draftSchema = z.object({
  content: draftContentSchema,
  revision: z.number().int(),
  basedOnVersion: z
    .number()
    .int()
    .nullable()
    .describe(
      'The version the draft started from: the latest version when it was created or discarded (0 when there was none), or the version last saved from it. Null for drafts older than this field.',
    ),
  latestVersion: z
    .number()
    .int()
    .describe(
      "The prompt's newest version number (0 before the first). Greater than basedOnVersion: versions were saved since the draft started, and saving it replaces what they changed.",
    ),
  updatedAt: z.string(),
  variables: z.array(z.string()),
});
export type Draft = z.infer<typeof draftSchema>;

// Labels name versions: lowercase letters, digits and hyphens, 1 to 64 characters, alphanumeric at both ends.
export const labelPattern = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
export const labelName = z
  .string()
  .regex(labelPattern, 'Use 1 to 64 lowercase letters, digits or hyphens, starting and ending with a letter or digit.');

// How evaluation outputs are scored: set by initialize, changed with set scoring, frozen into each evaluation.
export const scoringMethods = ['expected', 'judge', 'review'] as const;
export type ScoringMethod = (typeof scoringMethods)[number];
export const scoringPolicySchema = z.strictObject({
  method: z
    .enum(scoringMethods)
    .describe(
      'expected: compare with the expected output; judge: a model grades against a rubric; review: a person decides.',
    ),
  judgeModelRouteId: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('Judge only: the model route that grades (default local/judge).'),
  rubric: trimmedText(10_000, 'Give a rubric, or leave it out.')
    .optional()
    .describe('Judge only: what the judge grades against, up to 10,000 characters (default the built-in rubric).'),
});
export type ScoringPolicy = z.infer<typeof scoringPolicySchema>;

// ---- Versions, labels, label history and the scoring policy (M4) ----

export const versionSchema = z.object({
  id: z.string(),
  promptId: z.string().describe('The prompt this version belongs to (webhook receivers need it).'),
  number: z.number().int().min(1),
  content: draftContentSchema,
  createdAt: z.string(),
  createdBy: z.string(),
  labels: z
    .array(z.string())
    .describe('The labels that serve this version: those pointing at it, and traffic splits it has a share of.'),
});
export type Version = z.infer<typeof versionSchema>;

export const saveVersionInput = z.strictObject({
  draftRevision: revisionSchema.describe(
    'The current revision of your draft: its content becomes the version (409 draft_conflict when stale).',
  ),
});

// A version number in a path: digits only, 1 to 2^31-1 (anything else is 400, an absent one 404).
export const versionNumber = integerParam(1);

// A label's traffic split (M10): the versions in the order given, weights summing to 100.
const labelSplitItemSchema = z.object({
  versionId: z.string(),
  version: z.number().int(),
  weight: z.number().int().min(1).max(99),
});
export const labelItemSchema = z.object({
  label: z.string(),
  versionId: z
    .string()
    .describe('The version it points at; during a split, the largest weight’s (the first listed on a tie).'),
  version: z.number().int(),
  updatedAt: z.string(),
  updatedBy: z.string(),
  splitId: z.string().nullable().describe('spl_…: a new id whenever the split changes; null without a split.'),
  split: z.array(labelSplitItemSchema).nullable().describe('The traffic split, or null when it points at one version.'),
});
export type LabelItem = z.infer<typeof labelItemSchema>;
export type LabelSplitItem = z.infer<typeof labelSplitItemSchema>;
// A prompt's labels are listed (and embedded in the prompt) whole, so their number is bounded.
export const labelLimits = { perPrompt: 100 } as const;
export const labelListSchema = z.object({
  items: z.array(labelItemSchema).describe(`Every label of the prompt: at most ${labelLimits.perPrompt}.`),
});

export const splitLimits = { minVersions: 2, maxVersions: 4, totalWeight: 100 } as const;
const splitEntryInput = z.strictObject({
  versionId: z.string().min(1).max(100),
  weight: z.number().int().min(1).max(99),
});
export type SplitEntry = z.infer<typeof splitEntryInput>;

// The rules of a split across its entries (sum of weights, each version once), for the label move's
// body (versions by id) and a bundle's label (versions by number).
export function splitIssues<
  K extends 'versionId' | 'version',
  T extends { weight: number } & Record<K, string | number>,
>(split: T[], versionKey: K): { path: (string | number)[]; message: string }[] {
  const issues: { path: (string | number)[]; message: string }[] = [];
  const total = split.reduce((sum, entry) => sum + entry.weight, 0);
  if (total !== splitLimits.totalWeight)
    issues.push({ path: ['split'], message: `The weights add up to ${total}; they must add up to 100.` });
  const seen = new Set<string | number>();
  split.forEach((entry, index) => {
    const version = entry[versionKey];
    if (seen.has(version))
      issues.push({ path: ['split', index, versionKey], message: 'This version is already in the split.' });
    seen.add(version);
  });
  return issues;
}

// An admin's bypass of the release policy; its reason is kept in the label history.
const overrideInput = z.strictObject({
  reason: z
    .string()
    .min(1, { error: 'Say why the release policy is bypassed.', abort: true })
    .max(500)
    .refine((reason) => reason.trim().length > 0, 'Say why the release policy is bypassed.'),
});

// PUT …/labels/{label}: one version (`versionId`) or a traffic split (`split`), never both.
export const moveLabelInput = z
  .strictObject({
    versionId: z.string().min(1).max(100).optional(),
    split: z
      .array(splitEntryInput)
      .min(splitLimits.minVersions)
      .max(splitLimits.maxVersions)
      .optional()
      .describe(
        '2 to 4 distinct versions of this prompt with integer weights 1–99 summing to 100, instead of versionId. Retrieval picks one per request, sticky per Promptloop-Subject.',
      ),
    evaluationId: z.string().min(1).max(100).optional(),
    override: overrideInput
      .optional()
      .describe('Admins only (else 403 admin_required): move even though the release policy would refuse it.'),
  })
  .superRefine((input, ctx) => {
    if ((input.versionId === undefined) === (input.split === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: input.versionId === undefined ? ['versionId'] : ['split'],
        message:
          input.versionId === undefined
            ? 'Give versionId (one version) or split (2 to 4 versions).'
            : 'Give versionId (one version) or split (2 to 4 versions), not both.',
      });
      return;
    }
    if (input.split)
      for (const issue of splitIssues(input.split, 'versionId')) ctx.addIssue({ code: 'custom', ...issue });
  });

const labelHistorySources = ['move', 'import'] as const;
const historySplitSchema = z.array(z.object({ versionId: z.string(), weight: z.number().int() })).nullable();
export const labelHistoryItemSchema = z.object({
  promptId: z.string().describe('The prompt whose label this is (webhook receivers need it).'),
  label: z.string(),
  fromVersionId: z.string().nullable(),
  toVersionId: z.string().nullable().describe('During a split, its largest weight’s version.'),
  fromVersion: z.number().int().nullable(),
  toVersion: z.number().int().nullable(),
  userId: z.string(),
  clientId: z.string(),
  evaluationId: z.string().nullable(),
  at: z.string(),
  source: z.enum(labelHistorySources).describe('`import` for the one entry per label an import writes, else `move`.'),
  toSplit: historySplitSchema.describe('The split the label pointed at after this entry; null for one version.'),
  fromSplit: historySplitSchema.describe('The split the label pointed at before this entry; null for one version.'),
  override: z
    .object({ reason: z.string() })
    .nullable()
    .describe('Set when an admin bypassed the release policy for this move.'),
});
export type LabelHistoryItem = z.infer<typeof labelHistoryItemSchema>;

export const labelHistoryQuery = pageQuery.extend({
  label: labelName.optional().describe('Only the history of this label.'),
});

// PUT …/scoring: judgeModelRouteId and rubric only mean something for the judge method.
export const setScoringInput = scoringPolicySchema.superRefine((policy, ctx) => {
  if (policy.method === 'judge') return;
  for (const field of ['judgeModelRouteId', 'rubric'] as const) {
    if (policy[field] !== undefined)
      ctx.addIssue({ code: 'custom', path: [field], message: 'Only the judge method takes this field.' });
  }
});

// The set scoring body also takes what get scoring answers, so a policy read can be written back:
// null is "none" (the default route or rubric), and the read-only rubricIsDefault is ignored.
export const setScoringBody = z
  .strictObject({
    method: scoringPolicySchema.shape.method,
    judgeModelRouteId: scoringPolicySchema.shape.judgeModelRouteId
      .unwrap()
      .nullable()
      .optional()
      .describe('Judge only: the model route that grades (default local/judge; null for the default).'),
    rubric: scoringPolicySchema.shape.rubric
      .unwrap()
      .nullable()
      .optional()
      .describe(
        'Judge only: what the judge grades against, up to 10,000 characters (default the built-in rubric; null for the default).',
      ),
    rubricIsDefault: z
      .boolean()
      .optional()
      .describe('Read-only, as get scoring answers it: accepted and ignored, so a policy read can be sent back.'),
  })
  .superRefine((policy, ctx) => {
    if (policy.method === 'judge') return;
    for (const field of ['judgeModelRouteId', 'rubric'] as const) {
      if (policy[field] !== undefined && policy[field] !== null)
        ctx.addIssue({ code: 'custom', path: [field], message: 'Only the judge method takes this field.' });
    }
  });

// What get/set scoring answer: the effective policy; `rubricIsDefault` says the built-in rubric is in use.
export const scoringPolicyView = z.object({
  method: z.enum(scoringMethods),
  judgeModelRouteId: z.string().nullable(),
  rubric: z.string().nullable(),
  rubricIsDefault: z.boolean(),
});
export type ScoringPolicyView = z.infer<typeof scoringPolicyView>;
