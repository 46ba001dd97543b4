import { flushBeforeRead } from '@/server/retrieval/activity';
import { countOpenWarnings } from '@/server/warnings/service';
import { protectedProcedure } from '../init';
import { orgIdInput } from './paging';

export const warningProcedures = {
  // The badge in the navigation.
  openCount: protectedProcedure.input(orgIdInput).query(async ({ ctx, input }) => {
    await flushBeforeRead('warnings'); // this process's retrievals of archived prompts first
    return countOpenWarnings(ctx, input.organizationId);
  }),
};
