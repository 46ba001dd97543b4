import { z } from 'zod';
import { findPromptVersion } from '@/server/traces/query';
import { protectedProcedure } from '../init';
import { orgIdInput } from './paging';

export const traceProcedures = {
  // What a span's promptVersionId points at in this organization (null when nothing), to link to it.
  promptVersion: protectedProcedure
    .input(orgIdInput.extend({ versionId: z.string().min(1).max(100) }))
    .query(({ ctx, input }) => findPromptVersion(ctx, input.organizationId, input.versionId)),
};
