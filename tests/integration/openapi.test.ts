import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openApiDocument, routes, matchRoute } from '@/server/api/router';
import { call } from '../helpers/api';

const committed = JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8'));

// API.md's account and organization rows; later milestones extend this list.
const contract: [string, string][] = [
  ['GET', '/me'],
  ['PUT', '/me/default-organization'],
  ['GET', '/me/default-organization'],
  ['GET', '/organizations'],
  ['POST', '/organizations'],
  ['GET', '/organizations/{organizationId}'],
  ['PATCH', '/organizations/{organizationId}'],
  ['POST', '/organizations/{organizationId}/deletion-link'],
  ['GET', '/organizations/{organizationId}/members'],
  ['POST', '/organizations/{organizationId}/members'],
  ['PATCH', '/organizations/{organizationId}/members/{userId}'],
  ['DELETE', '/organizations/{organizationId}/members/{userId}'],
  ['GET', '/organizations/{organizationId}/model-routes'],
  ['GET', '/organizations/{organizationId}/prompts'],
  ['POST', '/organizations/{organizationId}/prompts'],
  ['GET', '/organizations/{organizationId}/prompts/{promptId}'],
  ['PATCH', '/organizations/{organizationId}/prompts/{promptId}'],
  ['POST', '/organizations/{organizationId}/prompts/{promptId}/archive'],
  ['GET', '/organizations/{organizationId}/prompts/{promptId}/draft'],
  ['PUT', '/organizations/{organizationId}/prompts/{promptId}/draft'],
  ['POST', '/organizations/{organizationId}/prompts/{promptId}/draft/discard'],
  ['GET', '/organizations/{organizationId}/prompts/{promptId}/dataset'],
  ['POST', '/organizations/{organizationId}/prompts/{promptId}/dataset/cases'],
  ['PUT', '/organizations/{organizationId}/prompts/{promptId}/dataset/cases/{caseId}'],
  ['DELETE', '/organizations/{organizationId}/prompts/{promptId}/dataset/cases/{caseId}'],
  ['PUT', '/organizations/{organizationId}/prompts/{promptId}/dataset/order'],
  ['POST', '/organizations/{organizationId}/prompts/{promptId}/dataset/import'],
  ['GET', '/openapi.json'],
  ['GET', '/organizations/{organizationId}/ingestion-keys'],
  ['POST', '/organizations/{organizationId}/ingestion-keys'],
  ['DELETE', '/organizations/{organizationId}/ingestion-keys/{keyId}'],
  ['GET', '/organizations/{organizationId}/prompts/{promptId}/keys'],
  ['POST', '/organizations/{organizationId}/prompts/{promptId}/keys'],
  ['DELETE', '/organizations/{organizationId}/prompts/{promptId}/keys/{keyId}'],
  ['GET', '/organizations/{organizationId}/traces'],
  ['GET', '/organizations/{organizationId}/traces/{traceId}'],
  ['POST', '/traces'],
  ['POST', '/otel/v1/traces'],
  ['GET', '/organizations/{organizationId}/prompts/{promptId}/versions'],
  ['POST', '/organizations/{organizationId}/prompts/{promptId}/versions'],
  ['GET', '/organizations/{organizationId}/prompts/{promptId}/versions/{number}'],
  ['GET', '/organizations/{organizationId}/prompts/{promptId}/labels'],
  ['PUT', '/organizations/{organizationId}/prompts/{promptId}/labels/{label}'],
  ['DELETE', '/organizations/{organizationId}/prompts/{promptId}/labels/{label}'],
  ['GET', '/organizations/{organizationId}/prompts/{promptId}/label-history'],
  ['GET', '/organizations/{organizationId}/prompts/{promptId}/scoring'],
  ['PUT', '/organizations/{organizationId}/prompts/{promptId}/scoring'],
  ['POST', '/organizations/{organizationId}/prompts/{promptId}/initialize'],
  ['GET', '/organizations/{organizationId}/prompts/{promptId}/evals'],
  ['POST', '/organizations/{organizationId}/prompts/{promptId}/evals'],
  ['GET', '/organizations/{organizationId}/evals/{evaluationId}'],
  ['GET', '/organizations/{organizationId}/evals/{evaluationId}/results'],
  ['POST', '/organizations/{organizationId}/evals/{evaluationId}/cancel'],
  ['POST', '/organizations/{organizationId}/evals/{evaluationId}/resume'],
  ['POST', '/organizations/{organizationId}/evals/{evaluationId}/retry'],
  ['POST', '/organizations/{organizationId}/evals/{evaluationId}/reviews'],
  ['GET', '/organizations/{organizationId}/warnings'],
  ['POST', '/organizations/{organizationId}/warnings/{warningId}/resolve'],
  ['GET', '/prompts/{promptId}'],
  ['GET', '/organizations/{organizationId}/billing'],
  ['POST', '/organizations/{organizationId}/billing/checkout'],
  ['POST', '/organizations/{organizationId}/billing/portal'],
  ['POST', '/organizations/{organizationId}/billing/cancel-renewal'],
];

describe('OpenAPI document', () => {
  it('matches the committed docs/openapi.json (run `npm run openapi` after changing a route)', () => {
    expect(openApiDocument()).toEqual(committed);
  });

  it('describes every route the router serves', () => {
    for (const route of routes) {
      const operation = committed.paths[`/api/v1${route.path}`]?.[route.method.toLowerCase()];
      expect(operation, `${route.method} ${route.path}`).toBeDefined();
      expect(operation.operationId).toBe(route.operationId);
    }
  });

  it.each(contract)('has %s %s, and the router serves it', (method, path) => {
    expect(committed.paths[`/api/v1${path}`]?.[method.toLowerCase()]).toBeDefined();
    const concrete = `/api/v1${path.replace(/\{\w+\}/g, 'x')}`;
    expect(matchRoute(method, concrete)).toHaveProperty('route');
  });

  it('declares the request body, the error envelope and the Idempotency-Key header on writes', () => {
    const create = committed.paths['/api/v1/organizations'].post;
    const body = create.requestBody.content['application/json'].schema;
    expect(body.properties.name).toMatchObject({ type: 'string', minLength: 1, maxLength: 160 });
    expect(body.additionalProperties).toBe(false);
    expect(create.responses['201']).toBeDefined();
    expect(create.responses['409']).toEqual({ $ref: '#/components/responses/Error' });
    expect(create.parameters).toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' });
    expect(committed.paths['/api/v1/organizations'].get.parameters.map((p: any) => p.name)).toEqual([
      'cursor',
      'limit',
    ]);
  });

  it('documents conditional retrieval: If-None-Match, the 304 and the caching headers', () => {
    const retrieve = committed.paths['/api/v1/prompts/{promptId}'].get;
    expect(retrieve.parameters).toContainEqual(expect.objectContaining({ name: 'If-None-Match', in: 'header' }));
    for (const status of ['200', '304'])
      expect(Object.keys(retrieve.responses[status].headers)).toEqual([
        'ETag',
        'Cache-Control',
        'Vary',
        'Promptloop-Split',
      ]);
    expect(retrieve.responses['304'].content).toBeUndefined();
  });

  it('documents the draft content shape, custom metric items and import rows', () => {
    const put = committed.paths['/api/v1/organizations/{organizationId}/prompts/{promptId}/draft'].put;
    const content = put.requestBody.content['application/json'].schema.properties.content;
    expect(content.required).toEqual(['messages', 'inputType']);
    expect(content.properties.messages.items.properties.role.enum).toEqual(['system', 'user', 'assistant']);
    expect(content.properties.inputType.enum).toEqual(['user_message', 'variables']);
    expect(content.properties.temperature).toMatchObject({ minimum: 0, maximum: 2 });
    const metric = content.properties.customMetrics.items;
    expect(Object.keys(metric.properties)).toEqual(['name', 'type', 'value']);
    expect(metric.properties.type.enum).toEqual([
      'contains',
      'not_contains',
      'matches_regex',
      'is_json',
      'matches_schema',
      'max_chars',
    ]);
    const draft = put.responses['200'].content['application/json'].schema;
    expect(draft.required).toEqual([
      'content',
      'revision',
      'basedOnVersion',
      'latestVersion',
      'updatedAt',
      'variables',
    ]);
    const rows =
      committed.paths['/api/v1/organizations/{organizationId}/prompts/{promptId}/dataset/import'].post.requestBody
        .content['application/json'].schema.properties.rows;
    expect(rows.items).toMatchObject({
      type: 'object',
      required: ['input', 'expectedOutput'],
      additionalProperties: false,
    });
    const remove =
      committed.paths['/api/v1/organizations/{organizationId}/prompts/{promptId}/dataset/cases/{caseId}'].delete;
    expect(remove.parameters.map((p: any) => p.name)).toContain('revision');
  });

  it('describes the routes outside /api/v1: the Stripe webhook, MCP and the OAuth endpoints', () => {
    for (const [path, method] of [
      ['/api/webhooks/stripe', 'post'],
      ['/mcp', 'post'],
      ['/.well-known/oauth-authorization-server', 'get'],
      ['/.well-known/oauth-protected-resource', 'get'],
      ['/.well-known/oauth-protected-resource/mcp', 'get'],
      ['/oauth/authorize', 'get'],
      ['/oauth/token', 'post'],
      ['/oauth/register', 'post'],
      ['/oauth/revoke', 'post'],
      ['/oauth/jwks', 'get'],
    ]) {
      expect(committed.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    }
    expect(committed.paths['/api/webhooks/stripe'].post.parameters).toContainEqual(
      expect.objectContaining({ name: 'Stripe-Signature', in: 'header', required: true }),
    );
  });

  it('describes how a service account gets a token: client_credentials, its secret as a field or HTTP Basic', () => {
    const token = committed.paths['/oauth/token'].post;
    const fields = token.requestBody.content['application/x-www-form-urlencoded'].schema.properties;
    expect(fields.grant_type.enum).toEqual(['authorization_code', 'refresh_token', 'client_credentials']);
    expect(Object.keys(fields)).toEqual(expect.arrayContaining(['client_id', 'client_secret', 'scope', 'resource']));
    expect(token.security).toEqual([{}, { ClientSecretBasic: [] }]);
    expect(token.responses['401'].description).toMatch(/invalid_client/);
    const schemes = committed.components.securitySchemes;
    expect(schemes.ClientSecretBasic).toMatchObject({ type: 'http', scheme: 'basic' });
    expect(schemes.ManagementOAuth.flows.clientCredentials).toEqual({
      tokenUrl: '/oauth/token',
      scopes: { management: expect.any(String) },
    });
  });

  it('operation ids are unique', () => {
    const ids = routes.map((r) => r.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('is served at /api/v1/openapi.json', async () => {
    const served = await call('GET', '/openapi.json');
    expect(served.body).toEqual(committed);
  });
});
