import { listAuthorizedApplications, revokeAuthorizedApplication } from '@/server/oauth/applications';
import { revokeApplicationInput } from '@/server/oauth/schemas';
import { protectedProcedure, router } from '../init';

// Account → Authorized applications: OAuth clients the person allowed, and revoking them.
export const authorizedAppsRouter = router({
  list: protectedProcedure.query(({ ctx }) => listAuthorizedApplications(ctx)),
  revoke: protectedProcedure
    .input(revokeApplicationInput)
    .mutation(({ ctx, input }) => revokeAuthorizedApplication(ctx, input.clientId)),
});
