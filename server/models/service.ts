import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { authorize } from '../access/permissions';
import { configuredRoutes, toModelRoute } from './routes';
import type { ModelRoute } from './schemas';

export async function listModelRoutes(
  ctx: ServiceContext,
  { organizationId }: OperationInput<'list_model_routes'>,
): Promise<{ items: ModelRoute[] }> {
  await authorize(ctx, organizationId, 'prompts.read');
  return { items: configuredRoutes().map(toModelRoute) };
}
