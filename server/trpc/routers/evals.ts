import { estimateBaseline } from '@/server/evals/initialize';
import { baselineEstimateInput } from '@/server/evals/schemas';
import { protectedProcedure } from '../init';
import { promptIdInput } from './paging';

// What initializing the baseline would run and cost, shown before it starts: dashboard only.
export const evalProcedures = {
  estimateBaseline: protectedProcedure
    .input(baselineEstimateInput.extend(promptIdInput.shape))
    .query(({ ctx, input }) => estimateBaseline(ctx, input)),
};
