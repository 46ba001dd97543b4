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
  ['GET', '/openapi.json'],
  ['GET', '/organizations/{organizationId}/ingestion-keys'],
  ['POST', '/organizations/{organizationId}/ingestion-keys'],
  ['DELETE', '/organizations/{organizationId}/ingestion-keys/{keyId}'],
  ['GET', '/organizations/{organizationId}/traces'],
  ['GET', '/organizations/{organizationId}/traces/{traceId}'],
  ['POST', '/traces'],
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
    expect(committed.paths['/api/v1/organizations'].get.parameters.map((p: any) => p.name)).toEqual(['cursor', 'limit']);
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
