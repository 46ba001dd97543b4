import { archivePrompt, createPrompt, getPrompt, listPrompts, renamePrompt } from '@/server/prompts/service';
import { discardDraft, getDraft, updateDraft } from '@/server/prompts/drafts';
import { createPromptInput, discardDraftInput, listPromptsQuery, renamePromptInput, updateDraftInput } from '@/server/prompts/schemas';
import { z } from 'zod';
import { protectedProcedure, router } from '../init';
import { infiniteDirection, orgIdInput } from './paging';

export const promptIdInput = orgIdInput.extend({ promptId: z.string().min(1) });

export const promptsRouter = router({
  list: protectedProcedure
    .input(listPromptsQuery.extend({ ...orgIdInput.shape, ...infiniteDirection }))
    .query(({ ctx, input }) => listPrompts(ctx, input.organizationId, { cursor: input.cursor, limit: input.limit, state: input.state, search: input.search })),
  create: protectedProcedure.input(createPromptInput.extend(orgIdInput.shape)).mutation(({ ctx, input }) => createPrompt(ctx, input.organizationId, { name: input.name })),
  get: protectedProcedure.input(promptIdInput).query(({ ctx, input }) => getPrompt(ctx, input.organizationId, input.promptId)),
  rename: protectedProcedure
    .input(renamePromptInput.extend(promptIdInput.shape))
    .mutation(({ ctx, input }) => renamePrompt(ctx, input.organizationId, input.promptId, { name: input.name })),
  archive: protectedProcedure.input(promptIdInput).mutation(({ ctx, input }) => archivePrompt(ctx, input.organizationId, input.promptId)),
  getDraft: protectedProcedure.input(promptIdInput).query(({ ctx, input }) => getDraft(ctx, input.organizationId, input.promptId)),
  updateDraft: protectedProcedure
    .input(updateDraftInput.extend(promptIdInput.shape))
    .mutation(({ ctx, input }) => updateDraft(ctx, input.organizationId, input.promptId, { content: input.content, revision: input.revision })),
  discardDraft: protectedProcedure
    .input(discardDraftInput.extend(promptIdInput.shape))
    .mutation(({ ctx, input }) => discardDraft(ctx, input.organizationId, input.promptId, { revision: input.revision })),
});
