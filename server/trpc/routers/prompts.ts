import { archivePrompt, createPrompt, getPrompt, listPrompts, renamePrompt } from '@/server/prompts/service';
import { discardDraft, getDraft, updateDraft } from '@/server/prompts/drafts';
import { createPromptInput, discardDraftInput, listPromptsQuery, renamePromptInput, updateDraftInput } from '@/server/prompts/schemas';
import { z } from 'zod';
import { protectedProcedure, router } from '../init';
import { infiniteDirection, orgIdInput, withoutDirection } from './paging';

export const promptIdInput = orgIdInput.extend({ promptId: z.string().min(1) });

export const promptsRouter = router({
  list: protectedProcedure.input(listPromptsQuery.extend({ ...orgIdInput.shape, ...infiniteDirection })).query(({ ctx, input }) => listPrompts(ctx, withoutDirection(input))),
  create: protectedProcedure.input(createPromptInput.extend(orgIdInput.shape)).mutation(({ ctx, input }) => createPrompt(ctx, withoutDirection(input))),
  get: protectedProcedure.input(promptIdInput).query(({ ctx, input }) => getPrompt(ctx, withoutDirection(input))),
  rename: protectedProcedure.input(renamePromptInput.extend(promptIdInput.shape)).mutation(({ ctx, input }) => renamePrompt(ctx, withoutDirection(input))),
  archive: protectedProcedure.input(promptIdInput).mutation(({ ctx, input }) => archivePrompt(ctx, withoutDirection(input))),
  getDraft: protectedProcedure.input(promptIdInput).query(({ ctx, input }) => getDraft(ctx, withoutDirection(input))),
  updateDraft: protectedProcedure.input(updateDraftInput.extend(promptIdInput.shape)).mutation(({ ctx, input }) => updateDraft(ctx, withoutDirection(input))),
  discardDraft: protectedProcedure.input(discardDraftInput.extend(promptIdInput.shape)).mutation(({ ctx, input }) => discardDraft(ctx, withoutDirection(input))),
});
