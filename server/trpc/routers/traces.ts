import { z } from 'zod';
import { findPromptVersion, getTrace, listTraces } from '@/server/traces/query';
import { getTraceQuery, listTracesQuery } from '@/server/traces/schemas';
import { protectedProcedure, router } from '../init';
import { infiniteDirection, orgIdInput, withoutDirection } from './paging';

// TanStack's infinite queries add `direction`; the service sees only the list query.
const listInput = listTracesQuery.safeExtend({ ...orgIdInput.shape, ...infiniteDirection });

const getTraceInput = getTraceQuery.safeExtend({ ...orgIdInput.shape, traceId: z.string().min(1), ...infiniteDirection });

export const tracesRouter = router({
  list: protectedProcedure.input(listInput).query(({ ctx, input }) => listTraces(ctx, withoutDirection(input))),
  get: protectedProcedure.input(getTraceInput).query(({ ctx, input }) => getTrace(ctx, withoutDirection(input))),
  // What a span's promptVersionId points at in this organization (null when nothing), to link to it.
  promptVersion: protectedProcedure
    .input(orgIdInput.extend({ versionId: z.string().min(1).max(100) }))
    .query(({ ctx, input }) => findPromptVersion(ctx, input.organizationId, input.versionId)),
});
