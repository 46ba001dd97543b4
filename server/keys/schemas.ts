import { z } from 'zod';
import { trimmedText } from '../text';

const label = (what: string) => trimmedText(100, `${what} is required.`);

const keyName = () => label('Name').describe('A name for the key, 1 to 100 characters (trimmed).');

export const createIngestionKeyInput = z.strictObject({
  name: keyName(),
  application: label('Application').describe(
    'The application that sends with the key, 1 to 100 characters; recorded on every span it sends.',
  ),
  environment: label('Environment').describe(
    'The environment it runs in (production, staging, …), 1 to 100 characters; recorded on every span it sends.',
  ),
});

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

// Retrieval keys (plr_): read-only, scoped to one prompt.
export const createRetrievalKeyInput = z.strictObject({ name: keyName() });

export const retrievalKeySchema = z.object({
  id: z.string(),
  promptId: z.string(),
  name: z.string(),
  prefix: z.string().describe('The first 12 characters of the secret (plr_ and 8 more); not secret.'),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
});
export type RetrievalKey = z.infer<typeof retrievalKeySchema>;

export const createdRetrievalKeySchema = z.object({
  key: retrievalKeySchema,
  secret: z.string().describe('The full plr_ key. Shown once: only its SHA-256 digest is stored.'),
});
export type CreatedRetrievalKey = z.infer<typeof createdRetrievalKeySchema>;
