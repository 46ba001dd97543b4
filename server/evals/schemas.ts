import { z } from 'zod';
import { pageQuery } from '../paging';
import { revisionSchema, scoringMethods } from '../prompts/schemas';
import { inputWarningSchema } from '../datasets/schemas';

const evaluationStatuses = ['pending', 'running', 'paused', 'completed', 'failed', 'cancelled'] as const;
export type EvaluationStatus = (typeof evaluationStatuses)[number];
const evaluationKinds = ['comparison', 'baseline'] as const;
const evaluationScopes = ['quick', 'comprehensive'] as const;
export type EvaluationScope = (typeof evaluationScopes)[number];
const evaluationSides = ['candidate', 'production'] as const;
export type EvaluationSide = (typeof evaluationSides)[number];
const resultStatuses = ['pending', 'scored', 'pending_review', 'error'] as const;
const reviewDecisions = ['accept_generated', 'accept_corrected', 'mark_correct', 'mark_incorrect'] as const;
export type ReviewDecision = (typeof reviewDecisions)[number];

// Quick scope: the first cases of the ordered dataset.
export const quickCases = 10;
const reviewLimits = { items: 100, correctedOutputChars: 100_000 } as const;

const id = z.string().min(1).max(100);

// Strict: a model or settings override (modelRouteId, temperature, …) is an unknown field, 400.
const candidateVersion = id.describe('The saved version to compare with production (the candidate).');
const scope = z
  .enum(evaluationScopes)
  .describe(`quick: the first ${quickCases} cases of the dataset’s order; comprehensive: every case (Pro only).`);
const rerunBoth =
  'Run production again instead of reusing its latest completed evidence for the same version, cases and scoring (default false).';

export const startEvaluationInput = z.strictObject({
  versionId: candidateVersion,
  scope,
  rerunBoth: z.boolean().default(false).describe(rerunBoth),
});
export type StartEvaluationInput = z.infer<typeof startEvaluationInput>;

export const estimateQuery = z.strictObject({
  versionId: candidateVersion,
  scope,
  rerunBoth: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true')
    .describe(rerunBoth),
});

export const initializeInput = z.strictObject({
  draftRevision: revisionSchema.describe(
    'The current revision of your draft: the content frozen and run (409 draft_conflict when stale).',
  ),
  scoringMethod: z
    .enum(scoringMethods)
    .describe('How outputs are scored (expected, judge or review); set on the prompt’s scoring policy.'),
});
export type InitializeInput = z.infer<typeof initializeInput>;

// The dashboard's preview before initializing: the method chosen on the page, and its judge route,
// which initialize sets on the prompt only when it starts.
export const baselineEstimateInput = z.strictObject({
  scoringMethod: initializeInput.shape.scoringMethod,
  judgeModelRouteId: z.string().min(1).optional(),
});
export type BaselineEstimateInput = z.infer<typeof baselineEstimateInput>;

export const retryInput = z.strictObject({
  side: z.enum(evaluationSides).describe('The failed or cancelled side to run again; the other side is untouched.'),
});

const reviewItemInput = z
  .strictObject({
    resultId: id,
    decision: z.enum(reviewDecisions),
    correctedOutput: z
      .string()
      .min(1, 'Give the corrected output (an empty one is not a correction).')
      .max(reviewLimits.correctedOutputChars)
      .optional(),
  })
  .superRefine((item, ctx) => {
    if (item.decision === 'accept_corrected' && item.correctedOutput === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['correctedOutput'],
        message: 'accept_corrected needs the corrected output.',
      });
    }
    if (item.decision !== 'accept_corrected' && item.correctedOutput !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['correctedOutput'],
        message: 'Only accept_corrected takes a corrected output.',
      });
    }
  });
export type ReviewItemInput = z.infer<typeof reviewItemInput>;

export const reviewInput = z
  .strictObject({
    reviews: z
      .array(reviewItemInput)
      .min(1)
      .max(reviewLimits.items, `Send at most ${reviewLimits.items} reviews at once.`)
      .describe(
        `1 to ${reviewLimits.items} decisions { resultId, decision, correctedOutput }, each result once; correctedOutput with accept_corrected only.`,
      ),
  })
  .superRefine((input, ctx) => {
    const seen = new Set<string>();
    input.reviews.forEach((item, i) => {
      if (seen.has(item.resultId))
        ctx.addIssue({
          code: 'custom',
          path: ['reviews', i, 'resultId'],
          message: 'Each result may be reviewed once per request.',
        });
      seen.add(item.resultId);
    });
  });

export const listResultsQuery = pageQuery.extend({
  side: z.enum(evaluationSides).optional().describe('Only the results of this side; both sides when absent.'),
});

const sideSummary = z.object({
  runId: z.string(),
  reused: z.boolean(),
  status: z.enum(evaluationStatuses),
  totalCases: z.number().int(),
  scoredCases: z.number().int(),
  passedCases: z.number().int(),
  failedCases: z.number().int(),
  pendingReviewCases: z.number().int(),
  errorCases: z.number().int(),
  pendingCases: z.number().int(),
  passRate: z.number().min(0).max(1),
});
export type SideSummary = z.infer<typeof sideSummary>;

const frozenScoringSchema = z.object({
  method: z.enum(scoringMethods),
  judgeModelRouteId: z.string().optional(),
  rubric: z.string().optional(),
});

export const evaluationSchema = z.object({
  id: z.string(),
  promptId: z.string(),
  kind: z.enum(evaluationKinds),
  versionId: z
    .string()
    .nullable()
    .describe('Candidate version; for a baseline, version 1 once it is published (null before).'),
  version: z.number().int().nullable(),
  status: z.enum(evaluationStatuses),
  scope: z.enum(evaluationScopes),
  rerunBoth: z.boolean(),
  totalCases: z
    .number()
    .int()
    .describe('Candidate side; totalCases = pendingCases + scoredCases + pendingReviewCases + errorCases.'),
  datasetSize: z.number().int().describe('Cases in the dataset when the evaluation was accepted.'),
  scoredCases: z.number().int().describe('scoredCases = passedCases + failedCases.'),
  pendingReviewCases: z.number().int(),
  passedCases: z.number().int(),
  failedCases: z.number().int(),
  errorCases: z.number().int(),
  pendingCases: z.number().int(),
  passRate: z.number().min(0).max(1).describe('passedCases / scoredCases; 0 while nothing is scored.'),
  productionRunId: z
    .string()
    .nullable()
    .describe('Evidence run of the pinned production version (reused or fresh); null for a baseline.'),
  productionVersionId: z.string().nullable(),
  productionVersion: z.number().int().nullable(),
  candidateRunId: z.string(),
  candidate: sideSummary,
  production: sideSummary.nullable(),
  scoring: frozenScoringSchema,
  createdAt: z.string(),
  completedAt: z.string().nullable(),
  error: z.string().nullable(),
});
export type Evaluation = z.infer<typeof evaluationSchema>;

const reviewRecordSchema = z.object({
  decision: z.enum(reviewDecisions),
  correctedOutput: z.string().nullable(),
  userId: z.string(),
  clientId: z.string(),
  human: z.boolean().describe('False whenever the decision came through an OAuth client acting as an agent (MCP).'),
  at: z.string(),
});
export type ReviewRecord = z.infer<typeof reviewRecordSchema>;

export const resultSchema = z.object({
  id: z.string(),
  caseId: z.string(),
  position: z.number().int(),
  side: z.enum(evaluationSides),
  status: z.enum(resultStatuses),
  input: z.string(),
  output: z.string().nullable(),
  expectedOutput: z.string(),
  inputFormat: z.enum(['text', 'json']),
  referenceFormat: z.enum(['text', 'json']),
  passed: z.boolean().nullable(),
  score: z.number().nullable(),
  assertions: z.array(z.object({ name: z.string(), passed: z.boolean(), message: z.string().nullable() })),
  judgeReasoning: z.string().nullable(),
  error: z.string().nullable(),
  review: reviewRecordSchema.nullable(),
  latencyMs: z.number().int().nullable(),
  inputTokens: z.number().int().nullable(),
  outputTokens: z.number().int().nullable(),
  costUsdNanos: z.number().int().nullable(),
});
export type Result = z.infer<typeof resultSchema>;

export const estimateSchema = z.object({
  scope: z.enum(evaluationScopes),
  datasetSize: z.number().int(),
  totalCases: z.number().int(),
  candidateCases: z.number().int(),
  productionCases: z.number().int().describe('Production cases that will execute (0 when evidence is reused).'),
  reusedProductionRunId: z.string().nullable(),
  credits: z
    .number()
    .int()
    .describe(
      'One credit per case executed on one side. Cases that cannot run (under the version’s input type, or on a side whose model or judge route has no credentials on this server) are not charged and not counted.',
    ),
  incompatibleCases: z
    .number()
    .int()
    .describe(
      'Candidate cases that cannot run under the candidate version’s input type: they will be recorded as errors without charge.',
    ),
  warnings: z.array(inputWarningSchema).describe('One input_incompatible warning per such candidate case.'),
  creditsRemaining: z
    .number()
    .int()
    .describe(
      'Credits left in the billing period now. A run that needs more pauses when they run out (usage_exhausted) and can be resumed once credits are back.',
    ),
  allowed: z.boolean(),
  reason: z
    .string()
    .nullable()
    .describe(
      'Error code a start would answer with now (plan_required, invalid_state, forbidden, read_only…), or null.',
    ),
});
export type Estimate = z.infer<typeof estimateSchema>;
