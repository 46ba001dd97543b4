import { listAuditLog } from '@/server/audit/service';
import { protectedProcedure, router } from '../init';
import { dashboardPage, orgIdInput, toPageQuery } from './paging';

export const auditRouter = router({
  list: protectedProcedure
    .input(dashboardPage.extend(orgIdInput.shape))
    .query(({ ctx, input }) => listAuditLog(ctx, input.organizationId, toPageQuery(input))),
});
