import { z } from 'zod';
import { findPromptVersion } from '@/server/traces/query';
import { previewCaseFromSpan } from '@/server/online/from-span';
import { protectedProcedure } from '../init';
import { orgIdInput } from './paging';

export const traceProcedures = {
  // What a span's promptVersionId points at in this organization (null when nothing), to link to it.
  promptVersion: protectedProcedure
    .input(orgIdInput.extend({ versionId: z.string().min(1).max(100) }))
    .query(({ ctx, input }) => findPromptVersion(ctx, input.organizationId, input.versionId)),
  // The case "Add to dataset" would add from a span to its prompt's dataset, and that dataset's revision.
  caseFromSpan: protectedProcedure
    .input(orgIdInput.extend({ traceId: z.string().min(1).max(100), spanId: z.string().min(1).max(100) }))
    .query(({ ctx, input }) => previewCaseFromSpan(ctx, input)),
};
