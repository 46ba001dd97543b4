import { z } from 'zod';
import { createRetrievalKey, listRetrievalKeys, revokeRetrievalKey } from '@/server/keys/retrieval';
import { createRetrievalKeyInput } from '@/server/keys/schemas';
import { protectedProcedure, router } from '../init';
import { dashboardPage, orgIdInput, withoutDirection } from './paging';

const promptInput = orgIdInput.extend({ promptId: z.string().min(1) });

export const retrievalKeysRouter = router({
  list: protectedProcedure.input(dashboardPage.extend(promptInput.shape)).query(({ ctx, input }) => listRetrievalKeys(ctx, withoutDirection(input))),
  create: protectedProcedure.input(createRetrievalKeyInput.extend(promptInput.shape)).mutation(({ ctx, input }) => createRetrievalKey(ctx, withoutDirection(input))),
  revoke: protectedProcedure.input(promptInput.extend({ keyId: z.string().min(1) })).mutation(({ ctx, input }) => revokeRetrievalKey(ctx, withoutDirection(input))),
});
