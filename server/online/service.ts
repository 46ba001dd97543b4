import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import type { OnlineEvaluation } from './schemas';
import type { z } from 'zod';
import type { onlineScoresSchema } from './schemas';

// Online evaluation settings and daily scores — being built (M11 helper "online").
const notBuilt = (): never => {
  throw new Error('online evaluation: not built yet');
};

export async function getOnlineEvaluation(
  _ctx: ServiceContext,
  _input: OperationInput<'get_online_evaluation'>,
): Promise<OnlineEvaluation> {
  return notBuilt();
}
export async function setOnlineEvaluation(
  _ctx: ServiceContext,
  _input: OperationInput<'set_online_evaluation'>,
): Promise<OnlineEvaluation> {
  return notBuilt();
}
export async function listOnlineScores(
  _ctx: ServiceContext,
  _input: OperationInput<'list_online_scores'>,
): Promise<z.infer<typeof onlineScoresSchema>> {
  return notBuilt();
}
