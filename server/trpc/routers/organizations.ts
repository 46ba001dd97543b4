import { checkDeletionLink, createDeletionLink, createOrganization, deleteOrganization, getOrganization, listOrganizations, renameOrganization } from '@/server/orgs/service';
import { createOrganizationInput, deleteOrganizationInput, renameOrganizationInput } from '@/server/orgs/schemas';
import { z } from 'zod';
import { protectedProcedure, router } from '../init';
import { dashboardPage, orgIdInput, withoutDirection } from './paging';

export const organizationsRouter = router({
  list: protectedProcedure.input(dashboardPage).query(({ ctx, input }) => listOrganizations(ctx, withoutDirection(input))),
  get: protectedProcedure.input(orgIdInput).query(({ ctx, input }) => getOrganization(ctx, withoutDirection(input))),
  create: protectedProcedure.input(createOrganizationInput).mutation(({ ctx, input }) => createOrganization(ctx, withoutDirection(input))),
  rename: protectedProcedure.input(renameOrganizationInput.extend(orgIdInput.shape)).mutation(({ ctx, input }) => renameOrganization(ctx, withoutDirection(input))),
  createDeletionLink: protectedProcedure.input(orgIdInput).mutation(({ ctx, input }) => createDeletionLink(ctx, withoutDirection(input))),
  checkDeletionLink: protectedProcedure.input(orgIdInput.extend({ token: z.string().min(1) })).query(({ ctx, input }) => checkDeletionLink(ctx, input.organizationId, input.token)),
  delete: protectedProcedure
    .input(deleteOrganizationInput.extend(orgIdInput.shape))
    .mutation(({ ctx, input }) => deleteOrganization(ctx, input.organizationId, { token: input.token, confirmName: input.confirmName })),
});
