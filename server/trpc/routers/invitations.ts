import { z } from 'zod';
import { addMemberInput } from '@/server/orgs/schemas';
import {
  acceptInvitation,
  checkInvitation,
  inviteMember,
  listInvitations,
  revokeInvitation,
} from '@/server/orgs/invitations';
import { protectedProcedure, publicProcedure } from '../init';
import { orgIdInput } from './paging';

const tokenInput = z.strictObject({
  token: z.string().min(1, 'This invitation link is not valid.').max(200, 'This invitation link is not valid.'),
});

// Invitations by email (dashboard only; server/orgs/invitations.ts): admins invite and revoke, the
// invited person opens the link and accepts.
export const invitationProcedures = {
  invitations: protectedProcedure.input(orgIdInput).query(({ ctx, input }) => listInvitations(ctx, input)),
  invite: protectedProcedure
    .input(addMemberInput.extend(orgIdInput.shape))
    .mutation(({ ctx, input }) => inviteMember(ctx, input)),
  revokeInvitation: protectedProcedure
    .input(orgIdInput.extend({ invitationId: z.string().min(1).max(100) }))
    .mutation(async ({ ctx, input }) => (await revokeInvitation(ctx, input), null)),
  checkInvitation: publicProcedure.input(tokenInput).query(({ ctx, input }) => checkInvitation(ctx, input.token)),
  acceptInvitation: protectedProcedure
    .input(tokenInput)
    .mutation(({ ctx, input }) => acceptInvitation(ctx, input.token)),
};
