import { z } from 'zod';
import type { Route } from './define';
import { errorCodes } from '../errors';
import { jsonSchemaOf } from '../numbers';
import { idempotencyKeySchema } from './idempotency';

type JsonSchema = Record<string, unknown>;

export function schemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  return jsonSchemaOf(schema, io);
}

const errorResponseRef = { $ref: '#/components/responses/Error' };
const standardErrors = ['400', '401', '403', '404', '409', '422', '429', '503'];

function operationFor(route: Route): JsonSchema {
  const parameters: JsonSchema[] = [];
  const addParams = (schema: z.ZodType | undefined, where: 'path' | 'query') => {
    if (!schema) return;
    const json = schemaOf(schema, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
    for (const [name, property] of Object.entries(json.properties ?? {})) {
      parameters.push({
        name,
        in: where,
        required: where === 'path' || (json.required ?? []).includes(name),
        schema: property,
      });
    }
  };
  addParams(route.params, 'path');
  addParams(route.query, 'query');
  const isWrite = route.method !== 'GET';
  if (isWrite && route.auth === 'management') parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });

  const responses: Record<string, unknown> = {};
  responses[String(route.status)] =
    route.status === 204 || !route.response
      ? { description: 'Success, no content' }
      : { description: 'Success', content: { 'application/json': { schema: schemaOf(route.response, 'output') } } };
  // A management write with a body also answers 413 for a body over 1 MiB.
  const managementErrors = route.body ? [...standardErrors, '413'].sort() : standardErrors;
  const errorStatuses =
    route.auth === 'management' ? managementErrors : (route.errors ?? []).map((code) => String(errorCodes[code].http));
  for (const status of errorStatuses) responses[status] = errorResponseRef;

  const operation: JsonSchema = {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    parameters,
    responses,
  };
  if (route.description) operation.description = route.description;
  if (route.errors?.length) operation['x-error-codes'] = route.errors;
  if (route.body)
    operation.requestBody = {
      required: true,
      content: { 'application/json': { schema: schemaOf(route.body, 'input') } },
    };
  if (route.auth === 'management') operation.security = [{ ManagementOAuth: ['management'] }];
  else if (route.auth === 'ingestion') operation.security = [{ IngestionKey: [] }];
  else if (route.auth === 'retrieval') operation.security = [{ RetrievalKey: [] }];
  else operation.security = [];
  return operation;
}

// Routes outside /api/v1 (API.md "Routes"): served by their own handlers, described here by hand.
const errorStatuses = (...statuses: string[]) => Object.fromEntries(statuses.map((s) => [s, errorResponseRef]));
const jsonBody = (schema: JsonSchema) => ({ content: { 'application/json': { schema } } });
const form = (properties: Record<string, JsonSchema>, required: string[]) => ({
  required: true,
  content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', properties, required } } },
});
const str = { type: 'string' };

const outsidePaths: Record<string, Record<string, JsonSchema>> = {
  '/api/webhooks/stripe': {
    post: {
      operationId: 'stripe_webhook',
      summary: "Stripe's webhook deliveries (billing): the only way a plan changes",
      description:
        'Verified on the raw body: `Stripe-Signature` must carry a `v1` HMAC-SHA256 of `t.payload` under one of the configured secrets (STRIPE_WEBHOOK_SECRET, comma-separated during rotation) with `t` (one, in digits) within 300 s of the server clock, before or after. Each event id is applied once, in the transaction of the state change; an event older (`created`) than the last one applied to its subscription never rolls state back. Handled: checkout.session.completed, customer.subscription.created|updated|deleted, invoice.paid, invoice.payment_failed; other types are acknowledged and ignored.',
      tags: ['Billing webhooks'],
      security: [],
      parameters: [{ name: 'Stripe-Signature', in: 'header', required: true, schema: str }],
      requestBody: {
        required: true,
        ...jsonBody({
          type: 'object',
          required: ['id', 'type', 'created', 'data'],
          description: 'A Stripe Event object.',
        }),
      },
      responses: {
        '200': {
          description: 'Accepted (also for duplicates and unhandled types)',
          ...jsonBody({ type: 'object', properties: { received: { const: true } } }),
        },
        ...errorStatuses('400', '413', '503'),
      },
    },
  },
  '/mcp': {
    post: {
      operationId: 'mcp',
      summary: 'The hosted MCP server (streamable HTTP, stateless): one tool per management operation',
      description:
        'JSON-RPC messages of the Model Context Protocol. Needs an OAuth access token whose audience is `$APP_URL/mcp` (RFC 9728 metadata at /.well-known/oauth-protected-resource/mcp).',
      tags: ['Meta'],
      security: [{ ManagementOAuth: ['management'] }],
      requestBody: { required: true, ...jsonBody({ type: 'object' }) },
      responses: {
        '200': { description: 'JSON-RPC response', ...jsonBody({ type: 'object' }) },
        ...errorStatuses('400', '401', '403', '413', '429'),
      },
    },
  },
  '/.well-known/oauth-authorization-server': {
    get: {
      operationId: 'oauth_authorization_server_metadata',
      summary: 'Authorization server metadata (RFC 8414) of the built-in issuer',
      tags: ['OAuth'],
      security: [],
      responses: { '200': { description: 'Metadata', ...jsonBody({ type: 'object' }) } },
    },
  },
  '/.well-known/oauth-protected-resource': {
    get: {
      operationId: 'oauth_protected_resource_metadata',
      summary: 'Protected resource metadata (RFC 9728) of the management API',
      tags: ['OAuth'],
      security: [],
      responses: { '200': { description: 'Metadata', ...jsonBody({ type: 'object' }) } },
    },
  },
  '/.well-known/oauth-protected-resource/mcp': {
    get: {
      operationId: 'oauth_protected_resource_metadata_mcp',
      summary: 'Protected resource metadata (RFC 9728) of the MCP endpoint',
      tags: ['OAuth'],
      security: [],
      responses: { '200': { description: 'Metadata', ...jsonBody({ type: 'object' }) } },
    },
  },
  '/oauth/authorize': {
    get: {
      operationId: 'oauth_authorize',
      summary:
        'Authorization endpoint: authorization code with S256 PKCE; signs in and asks for consent in the browser',
      tags: ['OAuth'],
      security: [],
      parameters: [
        'response_type',
        'client_id',
        'redirect_uri',
        'code_challenge',
        'code_challenge_method',
        'scope',
        'state',
        'resource',
      ].map((name) => ({
        name,
        in: 'query',
        required: ['response_type', 'client_id', 'redirect_uri', 'code_challenge', 'code_challenge_method'].includes(
          name,
        ),
        schema: str,
      })),
      responses: {
        '302': { description: 'Redirect to sign-in, consent or the client' },
        '400': { description: 'Invalid authorization request' },
      },
    },
  },
  '/oauth/token': {
    post: {
      operationId: 'oauth_token',
      summary: 'Token endpoint: authorization_code (with code_verifier) and refresh_token grants',
      tags: ['OAuth'],
      security: [],
      requestBody: form(
        {
          grant_type: str,
          code: str,
          redirect_uri: str,
          code_verifier: str,
          refresh_token: str,
          client_id: str,
          resource: str,
        },
        ['grant_type'],
      ),
      responses: {
        '200': { description: 'Tokens', ...jsonBody({ type: 'object' }) },
        '400': { description: 'OAuth error (RFC 6749)' },
        '429': { description: 'Too many requests' },
      },
    },
  },
  '/oauth/register': {
    post: {
      operationId: 'oauth_register',
      summary: 'Dynamic client registration (RFC 7591) for public clients',
      tags: ['OAuth'],
      security: [],
      requestBody: { required: true, ...jsonBody({ type: 'object', required: ['redirect_uris'] }) },
      responses: {
        '201': { description: 'The registered client', ...jsonBody({ type: 'object' }) },
        '400': { description: 'Invalid client metadata' },
        '429': { description: 'Too many requests' },
      },
    },
  },
  '/oauth/revoke': {
    post: {
      operationId: 'oauth_revoke',
      summary: 'Token revocation (RFC 7009)',
      tags: ['OAuth'],
      security: [],
      requestBody: form({ token: str, token_type_hint: str, client_id: str }, ['token']),
      responses: { '200': { description: 'Revoked (or unknown)' } },
    },
  },
  '/oauth/jwks': {
    get: {
      operationId: 'oauth_jwks',
      summary: "The built-in issuer's public signing keys (JWKS)",
      tags: ['OAuth'],
      security: [],
      responses: { '200': { description: 'JSON Web Key Set', ...jsonBody({ type: 'object' }) } },
    },
  },
};

export function buildOpenApi(routes: Route[]): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = `/api/v1${route.path}`;
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operationFor(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Promptloop API',
      version: '1.0.0-draft.1',
      description:
        'Prompt management, retrieval and trace ingestion. Management operations need an OAuth access token with scope `management`.',
    },
    servers: [{ url: '/' }],
    paths: { ...paths, ...outsidePaths },
    components: {
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'Makes a write safe to retry for 24 hours: the same key and body replay the first response (header Idempotency-Replayed: true); a different body fails with idempotency_conflict.',
          schema: idempotencyKeySchema,
        },
      },
      responses: {
        Error: {
          description: 'Error',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        },
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message', 'details', 'requestId'],
              properties: {
                code: { type: 'string', enum: Object.keys(errorCodes) },
                message: { type: 'string' },
                details: { type: 'object', additionalProperties: true },
                requestId: { type: 'string' },
              },
            },
          },
        },
      },
      securitySchemes: {
        ManagementOAuth: {
          type: 'oauth2',
          description: 'User-based OAuth 2.1 access token (JWT, typ at+jwt) with scope management.',
          flows: {
            authorizationCode: {
              authorizationUrl: '/oauth/authorize',
              tokenUrl: '/oauth/token',
              refreshUrl: '/oauth/token',
              scopes: { management: 'Manage organizations, prompts, datasets, evaluations and keys' },
            },
          },
        },
        RetrievalKey: { type: 'http', scheme: 'bearer', description: 'Prompt-scoped retrieval key (plr_…).' },
        IngestionKey: { type: 'http', scheme: 'bearer', description: 'Organization ingestion key (plt_…).' },
      },
    },
  };
}
