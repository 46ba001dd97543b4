import { z } from 'zod';
import { addMember, changeMemberRole, listMembers, removeMember } from '@/server/orgs/members';
import { addMemberInput, changeRoleInput } from '@/server/orgs/schemas';
import { protectedProcedure, router } from '../init';
import { dashboardPage, orgIdInput, withoutDirection } from './paging';

const memberInput = orgIdInput.extend({ userId: z.string().min(1) });

export const membersRouter = router({
  list: protectedProcedure.input(dashboardPage.extend(orgIdInput.shape)).query(({ ctx, input }) => listMembers(ctx, withoutDirection(input))),
  add: protectedProcedure.input(addMemberInput.extend(orgIdInput.shape)).mutation(({ ctx, input }) => addMember(ctx, withoutDirection(input))),
  changeRole: protectedProcedure.input(changeRoleInput.extend(memberInput.shape)).mutation(({ ctx, input }) => changeMemberRole(ctx, withoutDirection(input))),
  remove: protectedProcedure.input(memberInput).mutation(({ ctx, input }) => removeMember(ctx, withoutDirection(input))),
});
