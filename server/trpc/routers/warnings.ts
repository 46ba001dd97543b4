import { z } from 'zod';
import { countOpenWarnings, dismissWarning, listWarnings } from '@/server/warnings/service';
import { listWarningsQuery } from '@/server/warnings/schemas';
import { protectedProcedure, router } from '../init';
import { infiniteDirection, orgIdInput, withoutDirection } from './paging';

export const warningsRouter = router({
  list: protectedProcedure.input(listWarningsQuery.extend(infiniteDirection).extend(orgIdInput.shape)).query(({ ctx, input }) => listWarnings(ctx, withoutDirection(input))),
  openCount: protectedProcedure.input(orgIdInput).query(({ ctx, input }) => countOpenWarnings(ctx, input.organizationId)),
  dismiss: protectedProcedure.input(orgIdInput.extend({ warningId: z.string().min(1) })).mutation(({ ctx, input }) => dismissWarning(ctx, withoutDirection(input))),
});
