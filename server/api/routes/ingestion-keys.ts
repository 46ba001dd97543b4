import { z } from 'zod';
import { defineRoute, type Route } from '../define';
import { pageQuery } from '../../paging';
import { pageOf } from '../../orgs/schemas';
import { createIngestionKey, listIngestionKeys, revokeIngestionKey } from '../../keys/ingestion';
import { createdIngestionKeySchema, createIngestionKeyInput, ingestionKeySchema } from '../../keys/schemas';
import { management, orgParams } from './common';

const keyParams = z.strictObject({ organizationId: z.string(), keyId: z.string() });

export const ingestionKeyRoutes: Route[] = [
  defineRoute({
    ...management,
    method: 'GET',
    path: '/organizations/{organizationId}/ingestion-keys',
    operationId: 'list_ingestion_keys',
    summary: 'List the organization’s ingestion keys, newest first (admin only)',
    params: orgParams,
    query: pageQuery,
    status: 200,
    response: pageOf(ingestionKeySchema),
    errors: ['admin_required', 'not_found'],
    handler: ({ ctx, params, query }) => listIngestionKeys(ctx, params.organizationId, query),
  }),
  defineRoute({
    ...management,
    method: 'POST',
    path: '/organizations/{organizationId}/ingestion-keys',
    operationId: 'create_ingestion_key',
    summary: 'Create an ingestion key for an application and environment (admin only); the secret is returned once',
    description:
      'The secret (plt_…) appears only in this 201 response; only its SHA-256 digest is stored. Replaying the same Idempotency-Key and body returns 409 secret_unavailable with the key metadata in error.details.key and creates no second key.',
    params: orgParams,
    body: createIngestionKeyInput,
    status: 201,
    response: createdIngestionKeySchema,
    errors: ['admin_required', 'not_found', 'read_only', 'secret_unavailable'],
    idempotentReplay: 'secret_unavailable',
    handler: ({ ctx, params, body }) => createIngestionKey(ctx, params.organizationId, body),
  }),
  defineRoute({
    ...management,
    method: 'DELETE',
    path: '/organizations/{organizationId}/ingestion-keys/{keyId}',
    operationId: 'revoke_ingestion_key',
    summary: 'Revoke an ingestion key (admin only); later ingestion with it fails with 401',
    description: 'Revoking a key that is already revoked returns it unchanged.',
    params: keyParams,
    status: 200,
    response: ingestionKeySchema,
    errors: ['admin_required', 'not_found'],
    handler: ({ ctx, params }) => revokeIngestionKey(ctx, params.organizationId, params.keyId),
  }),
];
