import { z } from 'zod';
import { defineRoute } from '../define';
import { listModelRoutes } from '../../models/service';
import { modelRouteListSchema } from '../../models/schemas';

export const modelRoutes = [
  defineRoute({
    tag: 'Management',
    auth: 'management',
    method: 'GET',
    path: '/organizations/{organizationId}/model-routes',
    operationId: 'list_model_routes',
    summary: 'List the model routes a draft can use; `available` says whether the route can run now',
    params: z.strictObject({ organizationId: z.string() }),
    status: 200,
    response: modelRouteListSchema,
    errors: ['not_found'],
    handler: ({ ctx, params }) => listModelRoutes(ctx, params.organizationId),
  }),
];
