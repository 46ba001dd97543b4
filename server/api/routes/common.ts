import { z } from 'zod';

// Shared by the management route files: the tag and credential, and the path parameters.
export const management = { tag: 'Management', auth: 'management' } as const;
export const orgParams = z.strictObject({ organizationId: z.string() });
export const promptParams = z.strictObject({ organizationId: z.string(), promptId: z.string() });
