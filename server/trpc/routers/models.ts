import { listModelRoutes } from '@/server/models/service';
import { protectedProcedure, router } from '../init';
import { orgIdInput, withoutDirection } from './paging';

export const modelsRouter = router({
  list: protectedProcedure.input(orgIdInput).query(({ ctx, input }) => listModelRoutes(ctx, withoutDirection(input))),
});
