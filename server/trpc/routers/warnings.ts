import { countOpenWarnings } from '@/server/warnings/service';
import { protectedProcedure } from '../init';
import { orgIdInput } from './paging';

export const warningProcedures = {
  // The badge in the navigation.
  openCount: protectedProcedure
    .input(orgIdInput)
    .query(({ ctx, input }) => countOpenWarnings(ctx, input.organizationId)),
};
