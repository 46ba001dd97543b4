import { z } from 'zod';

const modelRouteSchema = z.object({
  id: z.string(),
  provider: z.string(),
  modelId: z.string(),
  name: z.string(),
  available: z.boolean(),
});
export type ModelRoute = z.infer<typeof modelRouteSchema>;
export const modelRouteListSchema = z.object({ items: z.array(modelRouteSchema) });

export const playgroundRunInput = z.strictObject({
  input: z.string().max(100_000).optional(),
  variables: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string().max(100_000)).optional(),
});

export type RunEvent =
  | { type: 'delta'; text: string }
  | {
      type: 'done';
      output: string;
      inputTokens: number | null;
      outputTokens: number | null;
      latencyMs: number;
      costUsdNanos: number | null;
      finishReason: string | null;
    };
