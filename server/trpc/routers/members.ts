import { z } from 'zod';
import { addMember, changeMemberRole, listMembers, removeMember } from '@/server/orgs/members';
import { addMemberInput, changeRoleInput } from '@/server/orgs/schemas';
import { protectedProcedure, router } from '../init';
import { dashboardPage, orgIdInput, toPageQuery } from './paging';

const memberInput = orgIdInput.extend({ userId: z.string().min(1) });

export const membersRouter = router({
  list: protectedProcedure.input(dashboardPage.extend(orgIdInput.shape)).query(({ ctx, input }) => listMembers(ctx, input.organizationId, toPageQuery(input))),
  add: protectedProcedure
    .input(addMemberInput.extend(orgIdInput.shape))
    .mutation(({ ctx, input }) => addMember(ctx, input.organizationId, { email: input.email, role: input.role })),
  changeRole: protectedProcedure
    .input(changeRoleInput.extend(memberInput.shape))
    .mutation(({ ctx, input }) => changeMemberRole(ctx, input.organizationId, input.userId, { role: input.role })),
  remove: protectedProcedure.input(memberInput).mutation(({ ctx, input }) => removeMember(ctx, input.organizationId, input.userId)),
});
