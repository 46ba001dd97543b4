import { previewImport } from '@/server/datasets/import';
import { previewImportInput } from '@/server/datasets/schemas';
import { protectedProcedure } from '../init';
import { promptIdInput } from './paging';

// What an import would do, before it is confirmed: dashboard only.
export const datasetProcedures = {
  previewImport: protectedProcedure
    .input(previewImportInput.extend(promptIdInput.shape))
    .mutation(({ ctx, input }) =>
      previewImport(ctx, input.organizationId, input.promptId, { mode: input.mode, rows: input.rows }),
    ),
};
