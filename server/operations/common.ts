import { z } from 'zod';

// Path parameters shared by the declarations.
export const orgParams = z.strictObject({ organizationId: z.string() });
export const promptParams = z.strictObject({ organizationId: z.string(), promptId: z.string() });
