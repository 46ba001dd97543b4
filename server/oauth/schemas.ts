import { z } from 'zod';

// Inputs of the authorized-applications procedures (the dashboard).
export const revokeApplicationInput = z.object({ clientId: z.string().min(1).max(200) }).strict();

export type AuthorizedApplication = {
  clientId: string;
  name: string;
  scopes: string[];
  authorizedAt: string;
  lastUsedAt: string | null;
};
