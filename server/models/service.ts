import type { ServiceContext } from '../context';
import { authorize } from '../auth/permissions';
import { configuredRoutes, toModelRoute } from './routes';
import type { ModelRoute } from './schemas';

export async function listModelRoutes(ctx: ServiceContext, organizationId: string): Promise<{ items: ModelRoute[] }> {
  await authorize(ctx, organizationId, 'prompts.read');
  return { items: configuredRoutes().map(toModelRoute) };
}
