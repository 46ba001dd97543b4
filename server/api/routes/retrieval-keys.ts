import { z } from 'zod';
import { defineRoute, type Route } from '../define';
import { pageQuery } from '../../paging';
import { pageOf } from '../../orgs/schemas';
import { createRetrievalKey, listRetrievalKeys, revokeRetrievalKey } from '../../keys/retrieval';
import { createdRetrievalKeySchema, createRetrievalKeyInput, retrievalKeySchema } from '../../keys/schemas';
import { management, promptParams } from './common';

const keyParams = z.strictObject({ organizationId: z.string(), promptId: z.string(), keyId: z.string() });

export const retrievalKeyRoutes: Route[] = [
  defineRoute({
    ...management,
    method: 'GET',
    path: '/organizations/{organizationId}/prompts/{promptId}/keys',
    operationId: 'list_retrieval_keys',
    summary: 'List the prompt’s retrieval keys, newest first (never a secret)',
    params: promptParams,
    query: pageQuery,
    status: 200,
    response: pageOf(retrievalKeySchema),
    errors: ['not_found'],
    handler: ({ ctx, params, query }) => listRetrievalKeys(ctx, params.organizationId, params.promptId, query),
  }),
  defineRoute({
    ...management,
    method: 'POST',
    path: '/organizations/{organizationId}/prompts/{promptId}/keys',
    operationId: 'create_retrieval_key',
    summary: 'Create a read-only retrieval key for this prompt; the secret is returned once',
    description:
      'The secret (plr_…) appears only in this 201 response; only its SHA-256 digest is stored. Replaying the same Idempotency-Key and body returns 409 secret_unavailable with the key metadata in error.details.key and creates no second key. An archived prompt answers 409 invalid_state.',
    params: promptParams,
    body: createRetrievalKeyInput,
    status: 201,
    response: createdRetrievalKeySchema,
    errors: ['forbidden', 'not_found', 'read_only', 'invalid_state', 'secret_unavailable'],
    idempotentReplay: 'secret_unavailable',
    handler: ({ ctx, params, body }) => createRetrievalKey(ctx, params.organizationId, params.promptId, body),
  }),
  defineRoute({
    ...management,
    method: 'DELETE',
    path: '/organizations/{organizationId}/prompts/{promptId}/keys/{keyId}',
    operationId: 'revoke_retrieval_key',
    summary: 'Revoke a retrieval key; every later retrieval with it fails with 401',
    description: 'Revoking a key that is already revoked returns it unchanged. Allowed on archived prompts and read-only organizations.',
    params: keyParams,
    status: 200,
    response: retrievalKeySchema,
    errors: ['forbidden', 'not_found'],
    handler: ({ ctx, params }) => revokeRetrievalKey(ctx, params.organizationId, params.promptId, params.keyId),
  }),
];
