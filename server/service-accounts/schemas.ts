import { z } from 'zod';
import { roleSchema } from '../orgs/schemas';
import { nameSchema } from '../text';

// Service accounts (API.md "Service accounts"): shared by the operation table, tRPC and the form.
export const createServiceAccountInput = z.strictObject({
  name: nameSchema(100).describe('A name for the account, 1 to 100 characters (trimmed).'),
  role: roleSchema.describe('The role it acts with in the organization.'),
});

export const serviceAccountSchema = z.object({
  id: z.string().describe('sac_…: the `sub` of its access tokens, and the userId in audit entries and label history.'),
  clientId: z.string().describe('sa_…: the client_id for the client_credentials grant at /oauth/token.'),
  name: z.string(),
  role: roleSchema,
  createdAt: z.string(),
  createdBy: z.string().describe('Id of whoever created it.'),
  lastUsedAt: z.string().nullable().describe('Last token request or API call, kept current within a minute.'),
  revokedAt: z.string().nullable(),
});
export type ServiceAccount = z.infer<typeof serviceAccountSchema>;

export const createdServiceAccountSchema = z.object({
  serviceAccount: serviceAccountSchema,
  clientSecret: z.string().describe('pls_ + 43 base62 characters. Shown once: only its SHA-256 digest is stored.'),
});
export type CreatedServiceAccount = z.infer<typeof createdServiceAccountSchema>;
