import { z } from 'zod';
import { checkDeletionLink, deleteOrganization } from '@/server/orgs/service';
import { deleteOrganizationInput } from '@/server/orgs/schemas';
import { protectedProcedure } from '../init';
import { orgIdInput } from './paging';

// Deleting an organization through its emailed link: dashboard only (the table has the link itself).
export const organizationProcedures = {
  checkDeletionLink: protectedProcedure
    .input(orgIdInput.extend({ token: z.string().min(1) }))
    .query(({ ctx, input }) => checkDeletionLink(ctx, input.organizationId, input.token)),
  delete: protectedProcedure
    .input(deleteOrganizationInput.extend(orgIdInput.shape))
    .mutation(({ ctx, input }) =>
      deleteOrganization(ctx, input.organizationId, { token: input.token, confirmName: input.confirmName }),
    ),
};
