import { z } from 'zod';
import { pageQuery } from '../paging';

// Every kind the service raises today or will (API.md); each is one item per (kind, subject).
const warningKinds = [
  'archived_prompt_used',
  'key_unused',
  'evaluation_paused',
  'payment_failed',
  'dataset_near_capacity',
  'otlp_spans_rejected',
  'webhook_failing',
  'online_evaluation_paused',
  'online_evaluation_failing',
] as const;
export type WarningKind = (typeof warningKinds)[number];

const warningStates = ['open', 'resolved', 'all'] as const;

export const listWarningsQuery = pageQuery.extend({
  kind: z.enum(warningKinds).optional().describe('Only warnings of this kind.'),
  state: z.enum(warningStates).default('open').describe('open (default), resolved, or all warnings.'),
});

export const warningSchema = z.object({
  id: z.string(),
  kind: z.enum(warningKinds),
  message: z.string(),
  subjectId: z.string().describe('What the warning is about: the prompt, key, evaluation, subscription or dataset id.'),
  promptId: z.string().nullable(),
  keyId: z.string().nullable(),
  details: z.record(z.string(), z.unknown()),
  firstSeenAt: z.string(),
  lastSeenAt: z.string(),
  count: z.number().int().describe('Distinct occurrences; a redelivered occurrence is not counted again.'),
  resolvedAt: z.string().nullable(),
});
export type Warning = z.infer<typeof warningSchema>;

export type OpenWarningCount = { open: number };
