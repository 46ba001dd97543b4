import { z } from 'zod';

const label = (what: string) => z.string().trim().min(1, `${what} is required.`).max(100, 'Use at most 100 characters.');

export const createIngestionKeyInput = z.strictObject({
  name: label('Name'),
  application: label('Application'),
  environment: label('Environment'),
});
export type CreateIngestionKeyInput = z.infer<typeof createIngestionKeyInput>;

export const ingestionKeySchema = z.object({
  id: z.string(),
  name: z.string(),
  application: z.string(),
  environment: z.string(),
  prefix: z.string(),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
});
export type IngestionKey = z.infer<typeof ingestionKeySchema>;

export const createdIngestionKeySchema = z.object({
  key: ingestionKeySchema,
  secret: z.string().describe('The full plt_ key. Shown once: only its SHA-256 digest is stored.'),
});
export type CreatedIngestionKey = z.infer<typeof createdIngestionKeySchema>;
