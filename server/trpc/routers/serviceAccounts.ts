import { z } from 'zod';
import { createServiceAccount, listServiceAccounts, revokeServiceAccount } from '@/server/service-accounts/service';
import { createServiceAccountInput } from '@/server/service-accounts/schemas';
import { protectedProcedure, router } from '../init';
import { dashboardPage, orgIdInput, withoutDirection } from './paging';

export const serviceAccountsRouter = router({
  list: protectedProcedure.input(dashboardPage.extend(orgIdInput.shape)).query(({ ctx, input }) => listServiceAccounts(ctx, withoutDirection(input))),
  create: protectedProcedure.input(createServiceAccountInput.extend(orgIdInput.shape)).mutation(({ ctx, input }) => createServiceAccount(ctx, withoutDirection(input))),
  revoke: protectedProcedure.input(orgIdInput.extend({ serviceAccountId: z.string().min(1) })).mutation(({ ctx, input }) => revokeServiceAccount(ctx, withoutDirection(input))),
});
