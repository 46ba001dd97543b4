import { z } from 'zod';
import { pageQuery } from '../paging';
import { pageOf } from '../paging';
import {
  createdIngestionKeySchema,
  createdRetrievalKeySchema,
  createIngestionKeyInput,
  createRetrievalKeyInput,
  ingestionKeySchema,
  retrievalKeySchema,
} from '../keys/schemas';
import { declareOperations } from './declare';
import { orgParams, promptParams } from './common';

const ingestionKeyParams = z.strictObject({ organizationId: z.string(), keyId: z.string() });
const retrievalKeyParams = z.strictObject({ organizationId: z.string(), promptId: z.string(), keyId: z.string() });

export const ingestionKeyOperations = declareOperations({
  list_ingestion_keys: {
    method: 'GET',
    path: '/organizations/{organizationId}/ingestion-keys',
    summary: 'List the organization’s ingestion keys, newest first (any member; never a secret)',
    params: orgParams,
    query: pageQuery,
    status: 200,
    response: pageOf(ingestionKeySchema),
    errors: ['not_found'],
    role: 'viewer',
    effect: 'read',
    cli: { command: ['ingestion-keys', 'list'], positional: [] },
    dashboard: 'ingestionKeys.list',
  },
  create_ingestion_key: {
    method: 'POST',
    path: '/organizations/{organizationId}/ingestion-keys',
    summary:
      'Create an ingestion key for an application and environment (editors and admins); the secret is returned once',
    description:
      'The secret (plt_…) appears only in this 201 response; only its SHA-256 digest is stored. Replaying the same Idempotency-Key and body returns 409 secret_unavailable with the key as it is now (revokedAt, lastUsedAt) in error.details.key and creates no second key.',
    params: orgParams,
    body: createIngestionKeyInput,
    status: 201,
    response: createdIngestionKeySchema,
    errors: ['forbidden', 'not_found', 'read_only', 'secret_unavailable'],
    role: 'editor',
    effect: 'write',
    idempotentReplay: 'secret_unavailable',
    cli: { command: ['ingestion-keys', 'create'], positional: ['name'] },
    dashboard: 'ingestionKeys.create',
  },
  revoke_ingestion_key: {
    method: 'DELETE',
    path: '/organizations/{organizationId}/ingestion-keys/{keyId}',
    summary: 'Revoke an ingestion key (editors and admins); later ingestion with it fails with 401',
    description: 'Revoking a key that is already revoked returns it unchanged.',
    params: ingestionKeyParams,
    status: 200,
    response: ingestionKeySchema,
    errors: ['forbidden', 'not_found'],
    role: 'editor',
    effect: 'destroys',
    cli: { command: ['ingestion-keys', 'revoke'], positional: ['keyId'] },
    dashboard: 'ingestionKeys.revoke',
  },
});

export const retrievalKeyOperations = declareOperations({
  list_retrieval_keys: {
    method: 'GET',
    path: '/organizations/{organizationId}/prompts/{promptId}/keys',
    summary: 'List the prompt’s retrieval keys, newest first (never a secret)',
    params: promptParams,
    query: pageQuery,
    status: 200,
    response: pageOf(retrievalKeySchema),
    errors: ['not_found'],
    role: 'viewer',
    effect: 'read',
    cli: { command: ['keys', 'list'], positional: ['promptId'] },
    dashboard: 'retrievalKeys.list',
  },
  create_retrieval_key: {
    method: 'POST',
    path: '/organizations/{organizationId}/prompts/{promptId}/keys',
    summary: 'Create a read-only retrieval key for this prompt; the secret is returned once',
    description:
      'The secret (plr_…) appears only in this 201 response; only its SHA-256 digest is stored. Replaying the same Idempotency-Key and body returns 409 secret_unavailable with the key as it is now (revokedAt, lastUsedAt) in error.details.key and creates no second key. An archived prompt answers 409 invalid_state.',
    params: promptParams,
    body: createRetrievalKeyInput,
    status: 201,
    response: createdRetrievalKeySchema,
    errors: ['forbidden', 'not_found', 'read_only', 'invalid_state', 'secret_unavailable'],
    role: 'editor',
    effect: 'write',
    idempotentReplay: 'secret_unavailable',
    cli: { command: ['keys', 'create'], positional: ['promptId', 'name'] },
    dashboard: 'retrievalKeys.create',
  },
  revoke_retrieval_key: {
    method: 'DELETE',
    path: '/organizations/{organizationId}/prompts/{promptId}/keys/{keyId}',
    summary: 'Revoke a retrieval key; every later retrieval with it fails with 401',
    description:
      'Revoking a key that is already revoked returns it unchanged. Allowed on archived prompts and read-only organizations.',
    params: retrievalKeyParams,
    status: 200,
    response: retrievalKeySchema,
    errors: ['forbidden', 'not_found'],
    role: 'editor',
    effect: 'destroys',
    cli: { command: ['keys', 'revoke'], positional: ['promptId', 'keyId'] },
    dashboard: 'retrievalKeys.revoke',
  },
});
