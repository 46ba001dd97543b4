import { z } from 'zod';
import { pageQuery } from '../paging';
import { pageOf } from '../paging';
import {
  createdServiceAccountSchema,
  createServiceAccountInput,
  serviceAccountSchema,
} from '../service-accounts/schemas';
import { declareOperations } from './declare';
import { orgParams } from './common';

const serviceAccountParams = z.strictObject({ organizationId: z.string(), serviceAccountId: z.string() });

export const serviceAccountOperations = declareOperations({
  list_service_accounts: {
    method: 'GET',
    path: '/organizations/{organizationId}/service-accounts',
    summary: 'List the organization’s service accounts, newest first, revoked ones included (admin only)',
    params: orgParams,
    query: pageQuery,
    status: 200,
    response: pageOf(serviceAccountSchema),
    errors: ['admin_required', 'not_found'],
    role: 'admin',
    effect: 'read',
    cli: { command: ['service-accounts', 'list'], positional: [] },
    dashboard: 'serviceAccounts.list',
  },
  create_service_account: {
    method: 'POST',
    path: '/organizations/{organizationId}/service-accounts',
    summary:
      'Create a service account (machine credentials for CI) with a role in this organization (admin only); the client secret is returned once',
    description:
      'The account gets management tokens from POST /oauth/token with grant_type=client_credentials, its clientId (sa_…) and clientSecret (pls_…, form fields or HTTP Basic). The secret appears only in this 201 response; only its SHA-256 digest is stored. Replaying the same Idempotency-Key and body returns 409 secret_unavailable with the account as it is now in error.details.serviceAccount and creates no second account. With an external OAUTH_ISSUER there is no token endpoint for it: 409 invalid_state (state external_issuer). Only a person creates service accounts: a service account, even an admin one, gets 403 forbidden.',
    params: orgParams,
    body: createServiceAccountInput,
    status: 201,
    response: createdServiceAccountSchema,
    errors: ['admin_required', 'not_found', 'read_only', 'invalid_state', 'secret_unavailable'],
    role: 'admin',
    effect: 'write',
    idempotentReplay: 'secret_unavailable',
    secretField: 'clientSecret',
    cli: { command: ['service-accounts', 'create'], positional: ['name'] },
    dashboard: 'serviceAccounts.create',
  },
  get_service_account: {
    method: 'GET',
    path: '/organizations/{organizationId}/service-accounts/{serviceAccountId}',
    summary: 'Get a service account (admin only)',
    params: serviceAccountParams,
    status: 200,
    response: serviceAccountSchema,
    errors: ['admin_required', 'not_found'],
    role: 'admin',
    effect: 'read',
    cli: { command: ['service-accounts', 'get'], positional: ['serviceAccountId'] },
    dashboard: 'serviceAccounts.get',
  },
  revoke_service_account: {
    method: 'DELETE',
    path: '/organizations/{organizationId}/service-accounts/{serviceAccountId}',
    summary: 'Revoke a service account (admin only); its tokens are refused from the next request',
    description:
      'Revoking an account that is already revoked returns it unchanged. Revoked accounts stay listed. Allowed on read-only organizations.',
    params: serviceAccountParams,
    status: 200,
    response: serviceAccountSchema,
    errors: ['admin_required', 'not_found'],
    role: 'admin',
    effect: 'destroys',
    cli: { command: ['service-accounts', 'revoke'], positional: ['serviceAccountId'] },
    dashboard: 'serviceAccounts.revoke',
  },
});
