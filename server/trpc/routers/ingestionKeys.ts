import { z } from 'zod';
import { createIngestionKey, listIngestionKeys, revokeIngestionKey } from '@/server/keys/ingestion';
import { createIngestionKeyInput } from '@/server/keys/schemas';
import { protectedProcedure, router } from '../init';
import { dashboardPage, orgIdInput, withoutDirection } from './paging';

export const ingestionKeysRouter = router({
  list: protectedProcedure.input(dashboardPage.extend(orgIdInput.shape)).query(({ ctx, input }) => listIngestionKeys(ctx, withoutDirection(input))),
  create: protectedProcedure.input(createIngestionKeyInput.extend(orgIdInput.shape)).mutation(({ ctx, input }) => createIngestionKey(ctx, withoutDirection(input))),
  revoke: protectedProcedure.input(orgIdInput.extend({ keyId: z.string().min(1) })).mutation(({ ctx, input }) => revokeIngestionKey(ctx, withoutDirection(input))),
});
