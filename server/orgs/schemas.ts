import { z } from 'zod';
import { roles } from '../auth/schemas';
import { nameSchema } from '../text';

const organizationName = nameSchema(160);
export const roleSchema = z.enum(roles);

export const createOrganizationInput = z.strictObject({
  name: organizationName.describe('The organization’s name, 1 to 160 characters (trimmed).'),
});
export const renameOrganizationInput = z.strictObject({
  name: organizationName.describe('The new name, 1 to 160 characters (trimmed).'),
});
export const addMemberInput = z.strictObject({
  email: z
    .string()
    .trim()
    .toLowerCase()
    .email('Enter a valid email address.')
    .max(320)
    .describe('The email of a user who has signed in once (404 not_found otherwise).'),
  role: roleSchema.describe('The member’s role: viewers read; editors and admins also write.'),
});
export const changeRoleInput = z.strictObject({
  role: roleSchema.describe('The new role; the organization always keeps an admin (409 invalid_state).'),
});
export const setDefaultOrganizationInput = z.strictObject({ organizationId: z.string().min(1).nullable() });
export const deleteOrganizationInput = z.strictObject({ token: z.string().min(1), confirmName: z.string() });

export const organizationSchema = z.object({
  id: z.string(),
  name: z.string(),
  role: roleSchema,
  plan: z.enum(['free', 'pro']),
  readOnly: z.boolean(),
  createdAt: z.string(),
});
export type Organization = z.infer<typeof organizationSchema>;

export const memberSchema = z.object({
  userId: z.string(),
  email: z.string().nullable(),
  name: z.string().nullable(),
  role: roleSchema,
  joinedAt: z.string(),
});
export type Member = z.infer<typeof memberSchema>;

export const profileSchema = z.object({
  id: z.string(),
  email: z.string().nullable(),
  name: z.string().nullable(),
  defaultOrganizationId: z.string().nullable(),
  kind: z
    .enum(['user', 'service_account'])
    .describe('service_account: email is null and defaultOrganizationId is its one organization.'),
});
export type Profile = z.infer<typeof profileSchema>;

export const dashboardLinkSchema = z.object({ url: z.string(), expiresAt: z.string() });
export type DashboardLink = z.infer<typeof dashboardLinkSchema>;

/**
 * How far an organization has come on the way from sign-up to production (the overview's "Get
 * started" card, dashboard only). Each step is read from what exists, never stored: a prompt, a
 * published version (a `production` label), a retrieval key that has fetched a prompt, a trace, a
 * second member. Every part is an index probe bounded by the organization.
 */
export type GettingStarted = {
  hasPrompt: boolean;
  hasPublished: boolean;
  hasRetrievalKey: boolean;
  hasRetrieved: boolean;
  hasTraces: boolean;
  hasTeammate: boolean;
  /** The oldest prompt still in setup (its baseline is the next step), else null. */
  setupPromptId: string | null;
  /** The oldest active prompt (the one to fetch from code), else null. */
  activePromptId: string | null;
};
