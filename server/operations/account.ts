import { organizationSchema, profileSchema, setDefaultOrganizationInput } from '../orgs/schemas';
import { declareOperations } from './declare';

export const accountOperations = declareOperations({
  get_profile: {
    method: 'GET',
    path: '/me',
    summary: 'Get the signed-in user and their default organization',
    status: 200,
    response: profileSchema,
    role: 'user',
    effect: 'read',
    cli: { command: ['account', 'get'], positional: [] },
    dashboard: 'account.profile',
  },
  set_default_organization: {
    method: 'PUT',
    path: '/me/default-organization',
    summary: 'Set or clear (null) the account default organization',
    description: 'A service account has no default to set (its default is its one organization): 403 forbidden.',
    body: setDefaultOrganizationInput,
    status: 200,
    response: profileSchema,
    errors: ['forbidden', 'not_found'],
    role: 'user',
    effect: 'write',
    cli: { command: ['account', 'set-default-org'], positional: ['organizationId'] },
    dashboard: 'account.setDefaultOrganization',
  },
  resolve_default_organization: {
    method: 'GET',
    path: '/me/default-organization',
    summary: 'Resolve the default organization, or fail with choose_organization listing the accessible ones',
    status: 200,
    response: organizationSchema,
    errors: ['choose_organization'],
    role: 'user',
    effect: 'read',
    cli: { command: ['account', 'default-org'], positional: [] },
    dashboard: 'account.defaultOrganization',
  },
});
