import { z } from 'zod';
import type { Route } from './define';
import { errorCodes } from '../errors';
import { jsonSchemaOf } from '../numbers';
import { idempotencyKeySchema } from './idempotency';
import { errorResponseRef, outsidePaths } from './openapi-outside-paths';

type JsonSchema = Record<string, unknown>;

export function schemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  return jsonSchemaOf(schema, io);
}

const standardErrors = ['400', '401', '403', '404', '409', '422', '429', '503'];

function operationFor(route: Route): JsonSchema {
  const parameters: JsonSchema[] = [];
  const addParams = (schema: z.ZodType | undefined, where: 'path' | 'query' | 'header') => {
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
  addParams(route.headers, 'header');
  const isWrite = route.method !== 'GET';
  if (isWrite && route.auth === 'management') parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });

  const responses: Record<string, unknown> = {};
  const headers = route.responseHeaders
    ? Object.fromEntries(
        Object.entries(route.responseHeaders).map(([name, description]) => [
          name,
          { description, schema: { type: 'string' } },
        ]),
      )
    : undefined;
  responses[String(route.status)] = {
    ...(route.status === 204 || !route.response
      ? { description: 'Success, no content' }
      : { description: 'Success', content: { 'application/json': { schema: schemaOf(route.response, 'output') } } }),
    ...(headers ? { headers } : {}),
  };
  if (route.notModified) responses['304'] = { description: route.notModified, ...(headers ? { headers } : {}) };
  if (route.dryRunField && route.response)
    responses['200'] = {
      description: `Dry run (\`${route.dryRunField}: true\`): the same answer, nothing written`,
      content: { 'application/json': { schema: schemaOf(route.response, 'output') } },
    };
  // A management write with a body also answers 413 for a body over its limit (1 MiB unless declared).
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
  return route.openapi ? { ...operation, ...route.openapi } : operation;
}

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
          description:
            'OAuth 2.1 access token (JWT, typ at+jwt) with scope management: a person’s (authorization code with PKCE), or a service account’s (client credentials, for CI).',
          flows: {
            authorizationCode: {
              authorizationUrl: '/oauth/authorize',
              tokenUrl: '/oauth/token',
              refreshUrl: '/oauth/token',
              scopes: { management: 'Manage organizations, prompts, datasets, evaluations and keys' },
            },
            clientCredentials: {
              tokenUrl: '/oauth/token',
              scopes: { management: 'Act in the service account’s one organization, with its role' },
            },
          },
        },
        ClientSecretBasic: {
          type: 'http',
          scheme: 'basic',
          description: 'A service account’s client id and secret at the token endpoint (client_secret_basic).',
        },
        RetrievalKey: { type: 'http', scheme: 'bearer', description: 'Prompt-scoped retrieval key (plr_…).' },
        IngestionKey: { type: 'http', scheme: 'bearer', description: 'Organization ingestion key (plt_…).' },
      },
    },
  };
}
