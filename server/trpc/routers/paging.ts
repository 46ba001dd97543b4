import { z } from 'zod';
import { pageQuery } from '@/server/paging';

// TanStack's infinite queries add `direction` to the input; services only see cursor and limit.
export const infiniteDirection = { direction: z.enum(['forward', 'backward']).optional() };
export const dashboardPage = pageQuery.extend(infiniteDirection);

export const orgIdInput = z.strictObject({ organizationId: z.string().min(1) });
export const promptIdInput = orgIdInput.extend({ promptId: z.string().min(1) });

export function toPageQuery(input: { cursor?: string; limit: number }) {
  return { cursor: input.cursor, limit: input.limit };
}
