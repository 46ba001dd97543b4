import { z } from 'zod';
import { checkDeletionLink, deleteOrganization } from '@/server/orgs/service';
import { gettingStarted } from '@/server/orgs/getting-started';
import { deleteOrganizationInput } from '@/server/orgs/schemas';
import { serviceAccountNames } from '@/server/service-accounts/service';
import { protectedProcedure } from '../init';
import { orgIdInput } from './paging';

// Deleting an organization through its emailed link: dashboard only (the table has the link itself);
// the names of its service accounts, for the pages that show who acted; and the overview's
// "Get started" progress.
export const organizationProcedures = {
  gettingStarted: protectedProcedure
    .input(orgIdInput)
    .query(({ ctx, input }) => gettingStarted(ctx, input.organizationId)),
  serviceAccountNames: protectedProcedure
    .input(orgIdInput)
    .query(({ ctx, input }) => serviceAccountNames(ctx, input.organizationId)),
  checkDeletionLink: protectedProcedure
    .input(orgIdInput.extend({ token: z.string().min(1) }))
    .query(({ ctx, input }) => checkDeletionLink(ctx, input.organizationId, input.token)),
  delete: protectedProcedure
    .input(deleteOrganizationInput.extend(orgIdInput.shape))
    .mutation(({ ctx, input }) =>
      deleteOrganization(ctx, input.organizationId, { token: input.token, confirmName: input.confirmName }),
    ),
};
