import { defineRoute } from '../define';
import { getProfile, resolveDefaultOrganization, setDefaultOrganization } from '../../account/service';
import { organizationSchema, profileSchema, setDefaultOrganizationInput } from '../../orgs/schemas';

export const accountRoutes = [
  defineRoute({
    method: 'GET',
    path: '/me',
    operationId: 'get_profile',
    summary: 'Get the signed-in user and their default organization',
    tag: 'Management',
    auth: 'management',
    status: 200,
    response: profileSchema,
    handler: ({ ctx }) => getProfile(ctx),
  }),
  defineRoute({
    method: 'PUT',
    path: '/me/default-organization',
    operationId: 'set_default_organization',
    summary: 'Set or clear (null) the account default organization',
    tag: 'Management',
    auth: 'management',
    body: setDefaultOrganizationInput,
    status: 200,
    response: profileSchema,
    errors: ['not_found'],
    handler: ({ ctx, body }) => setDefaultOrganization(ctx, body),
  }),
  defineRoute({
    method: 'GET',
    path: '/me/default-organization',
    operationId: 'resolve_default_organization',
    summary: 'Resolve the default organization, or fail with choose_organization listing the accessible ones',
    tag: 'Management',
    auth: 'management',
    status: 200,
    response: organizationSchema,
    errors: ['choose_organization'],
    handler: ({ ctx }) => resolveDefaultOrganization(ctx),
  }),
];
