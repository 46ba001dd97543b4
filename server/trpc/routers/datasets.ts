import { z } from 'zod';
import { addCase, deleteCase, getDataset, reorderCases, updateCase } from '@/server/datasets/service';
import { importCases, previewImport } from '@/server/datasets/import';
import { addCaseInput, importInput, previewImportInput, reorderInput, updateCaseInput } from '@/server/datasets/schemas';
import { revisionSchema } from '@/server/prompts/schemas';
import { protectedProcedure, router } from '../init';
import { withoutDirection } from './paging';
import { promptIdInput } from './prompts';

const caseIdInput = promptIdInput.extend({ caseId: z.string().min(1) });

export const datasetsRouter = router({
  get: protectedProcedure.input(promptIdInput).query(({ ctx, input }) => getDataset(ctx, withoutDirection(input))),
  addCase: protectedProcedure.input(addCaseInput.extend(promptIdInput.shape)).mutation(({ ctx, input }) => addCase(ctx, withoutDirection(input))),
  updateCase: protectedProcedure.input(updateCaseInput.extend(caseIdInput.shape)).mutation(({ ctx, input }) => updateCase(ctx, withoutDirection(input))),
  deleteCase: protectedProcedure.input(caseIdInput.extend({ revision: revisionSchema })).mutation(({ ctx, input }) => deleteCase(ctx, withoutDirection(input))),
  reorder: protectedProcedure.input(reorderInput.extend(promptIdInput.shape)).mutation(({ ctx, input }) => reorderCases(ctx, withoutDirection(input))),
  previewImport: protectedProcedure
    .input(previewImportInput.extend(promptIdInput.shape))
    .mutation(({ ctx, input }) => previewImport(ctx, input.organizationId, input.promptId, { mode: input.mode, rows: input.rows })),
  import: protectedProcedure.input(importInput.extend(promptIdInput.shape)).mutation(({ ctx, input }) => importCases(ctx, withoutDirection(input))),
});
