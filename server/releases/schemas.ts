import { z } from 'zod';
import { integerParam, maxUnixMs } from '../numbers';
import { labelName } from '../prompts/schemas';

// ---- Safe releases (M10, API.md "Safe releases: promotion gates and traffic splits") ----

// maxRegressions: API.md says only "an integer ≥ 0"; the largest a 32-bit column holds.
export const releasePolicyLimits = { maxProtectedLabels: 10, maxRegressions: 2_147_483_647 } as const;

// PUT …/release-policy replaces the whole policy: all four fields are required.
export const releasePolicyInput = z.strictObject({
  protectedLabels: z
    .array(labelName)
    .max(releasePolicyLimits.maxProtectedLabels)
    .refine((labels) => new Set(labels).size === labels.length, 'List each label once.')
    .describe('Labels the gate guards (0 to 10 label names).'),
  requireEvaluation: z
    .boolean()
    .describe(
      'When true, moving a protected label to a version it never pointed at needs the evaluationId of a completed comparison of that version against the label’s current version that meets the thresholds.',
    ),
  maxPassRateDrop: z
    .number()
    .min(0)
    .max(1)
    .describe(
      'How far the candidate’s pass rate may fall below production’s, in absolute terms (a fraction 0–1: 0.05 lets 80% fall to 75%).',
    ),
  maxRegressions: z
    .number()
    .int()
    .min(0)
    .max(releasePolicyLimits.maxRegressions)
    .describe('How many cases may pass on production and not on the candidate.'),
});
export type ReleasePolicy = z.infer<typeof releasePolicyInput>;

export const defaultReleasePolicy: ReleasePolicy = {
  protectedLabels: ['production'],
  requireEvaluation: false,
  maxPassRateDrop: 0,
  maxRegressions: 0,
};

export const releasePolicyView = z.object({
  protectedLabels: z.array(z.string()),
  requireEvaluation: z.boolean(),
  maxPassRateDrop: z.number(),
  maxRegressions: z.number().int(),
  isDefault: z.boolean().describe('True while the prompt has never had a policy saved (the default policy).'),
  updatedAt: z.string().nullable(),
  updatedBy: z.string().nullable(),
});
export type ReleasePolicyView = z.infer<typeof releasePolicyView>;

// error.details of 409 promotion_blocked.
export type PromotionBlockedDetails = {
  reasons: string[];
  evaluationId: string | null;
  candidatePassRate: number | null;
  productionPassRate: number | null;
  regressions: string[];
};

// GET …/labels/{label}/split-stats?from=&to= (Unix ms; default the split's life).
const unixMs = integerParam(0, maxUnixMs);
export const splitStatsQuery = z
  .strictObject({
    from: unixMs.optional().describe('Unix ms; default: when the split began.'),
    to: unixMs.optional().describe('Unix ms; default: now.'),
  })
  .refine((q) => q.from === undefined || q.to === undefined || q.from <= q.to, {
    message: '`from` must not be after `to`.',
    path: ['from'],
  });

const onlineScoreSummary = z.object({
  scored: z.number().int(),
  passed: z.number().int(),
  meanScore: z.number().nullable().describe('0–1, to 6 decimals; null when nothing was scored.'),
});

const splitVersionStats = z.object({
  versionId: z.string(),
  version: z.number().int(),
  weight: z.number().int(),
  retrievals: z.number().int().describe('Retrievals that chose this version (the retrieval activity counters).'),
  spans: z.number().int().describe('Finished model spans that carry this promptVersionId.'),
  errorRate: z.number().min(0).max(1).describe('Fraction of those spans with status error; 0 without spans.'),
  p50LatencyMs: z.number().nullable().describe('Nearest-rank; null without spans.'),
  p95LatencyMs: z.number().nullable(),
  inputTokens: z.number().int(),
  outputTokens: z.number().int(),
  costUsdNanos: z.number().int(),
  onlineScore: onlineScoreSummary,
});
export type SplitVersionStats = z.infer<typeof splitVersionStats>;

export const splitStatsSchema = z.object({
  splitId: z.string(),
  since: z.string().describe('When the split began (ISO 8601).'),
  versions: z.array(splitVersionStats),
});
export type SplitStats = z.infer<typeof splitStatsSchema>;

// The gate's reason while results await review, shared with the dashboard's own reading of the
// gate (components/releases/rules.ts). It counts results: a case pending on both sides is two.
export function pendingReviewReason(candidate: number, production: number): string | null {
  const total = candidate + production;
  if (total === 0) return null;
  const sides = [
    candidate ? `${candidate} of the candidate` : null,
    production ? `${production} of production` : null,
  ].filter(Boolean);
  return `${total} ${total === 1 ? 'result is' : 'results are'} still pending review (${sides.join(', ')}).`;
}
