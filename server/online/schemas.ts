import { z } from 'zod';
import { integerParam, maxUnixMs } from '../numbers';
import { caseLimits, datasetRevision } from '../datasets/schemas';

// ---- Online evaluation (M11, API.md "Online evaluation (production traces)") ----

export const onlineEvaluationInput = z.strictObject({
  enabled: z.boolean().describe('Score sampled production spans of this prompt (off by default).'),
  sampleRate: z.number().min(0).max(1).default(0.1).describe('Fraction of eligible spans scored (0–1), by span id.'),
  judgeModelRouteId: z
    .string()
    .min(1)
    .max(200)
    .nullable()
    .optional()
    .describe('Absent or null: the scoring policy’s judge route, else the first available route.'),
  rubric: z
    .string()
    .trim()
    .min(1)
    .max(10_000)
    .nullable()
    .optional()
    .describe('Absent or null: the scoring policy’s rubric (400 when there is none).'),
});

export const onlineEvaluationSchema = z.object({
  enabled: z.boolean(),
  sampleRate: z.number(),
  judgeModelRouteId: z.string().nullable(),
  rubric: z.string().nullable(),
  paused: z.boolean().describe('True while scoring waits for credits (warning online_evaluation_paused).'),
  updatedAt: z.string().nullable(),
  updatedBy: z.string().nullable(),
});
export type OnlineEvaluation = z.infer<typeof onlineEvaluationSchema>;

const unixMs = integerParam(0, maxUnixMs);
export const onlineScoresQuery = z
  .strictObject({
    from: unixMs.optional().describe('Unix ms; default 30 days ago.'),
    to: unixMs.optional().describe('Unix ms; default now.'),
    versionId: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe('Only this version of the prompt (404 when it is not one); every version when absent.'),
  })
  .refine((q) => q.from === undefined || q.to === undefined || q.from <= q.to, {
    message: '`from` must not be after `to`.',
    path: ['from'],
  });

export const onlineScoreDaySchema = z.object({
  versionId: z.string(),
  version: z.number().int(),
  day: z.string().describe('UTC day the spans started (YYYY-MM-DD).'),
  sampled: z.number().int().describe('Sampled spans, including those skipped for lack of content.'),
  scored: z.number().int(),
  passed: z.number().int(),
  meanScore: z.number().nullable().describe('0–1, to 6 decimals; null when nothing was scored.'),
  skippedNoContent: z.number().int(),
});
export const onlineScoresSchema = z.object({ items: z.array(onlineScoreDaySchema) });

// The span field of GET …/traces/{traceId} (present on every span; null when not scored).
export const spanOnlineScoreSchema = z
  .object({
    passed: z.boolean().nullable(),
    score: z.number().nullable(),
    reasoning: z.string().nullable(),
    judgeModelRouteId: z.string().nullable(),
    at: z.string().nullable(),
  })
  .nullable();

export const caseFromSpanInput = z.strictObject({
  revision: datasetRevision,
  traceId: z.string().min(1).max(100),
  spanId: z.string().min(1).max(100),
  expectedOutput: z.string().max(caseLimits.expectedOutputChars).optional().describe('Default: the span’s output.'),
});
