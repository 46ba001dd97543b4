import { z } from 'zod';
import { createServiceAccount, listServiceAccounts, revokeServiceAccount } from '@/server/service-accounts/service';
import { createServiceAccountInput } from '@/server/service-accounts/schemas';
import { protectedProcedure, router } from '../init';
import { dashboardPage, orgIdInput, toPageQuery } from './paging';

export const serviceAccountsRouter = router({
  list: protectedProcedure.input(dashboardPage.extend(orgIdInput.shape)).query(({ ctx, input }) => listServiceAccounts(ctx, input.organizationId, toPageQuery(input))),
  create: protectedProcedure
    .input(createServiceAccountInput.extend(orgIdInput.shape))
    .mutation(({ ctx, input }) => createServiceAccount(ctx, input.organizationId, { name: input.name, role: input.role })),
  revoke: protectedProcedure
    .input(orgIdInput.extend({ serviceAccountId: z.string().min(1) }))
    .mutation(({ ctx, input }) => revokeServiceAccount(ctx, input.organizationId, input.serviceAccountId)),
});
