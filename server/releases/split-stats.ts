import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import type { SplitStats } from './schemas';

// GET …/labels/{label}/split-stats — being built (M10 helper "stats").
export async function getSplitStats(
  _ctx: ServiceContext,
  _input: OperationInput<'get_split_stats'>,
): Promise<SplitStats> {
  throw new Error('split stats: not built yet');
}
