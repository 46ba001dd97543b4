import { expect, test } from './fixtures';

// The management API and its OAuth metadata, served by the production entry over real HTTP.
test.describe('management API on the production server', () => {
  test('serves the OpenAPI document without credentials', async ({ request }) => {
    const response = await request.get('/api/v1/openapi.json');
    expect(response.status()).toBe(200);
    const doc = await response.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.paths['/api/v1/organizations'].post.operationId).toBe('create_organization');
  });

  test('the API root and unknown routes answer in the JSON envelope, never the HTML page', async ({ request }) => {
    for (const path of ['/api/v1', '/api/v1?x=1', '/api/v1/no-such-thing']) {
      const response = await request.post(path, { data: {} });
      expect(response.status(), path).toBe(404);
      expect(response.headers()['content-type']).toContain('application/json');
      expect((await response.json()).error).toMatchObject({ code: 'not_found', message: 'No such API route.' });
    }
  });

  test('challenges a caller without a token and points at the resource metadata', async ({ request }) => {
    const response = await request.get('/api/v1/me');
    expect(response.status()).toBe(401);
    expect(response.headers()['www-authenticate']).toBe(
      'Bearer resource_metadata="http://localhost:3100/.well-known/oauth-protected-resource"',
    );
    const body = await response.json();
    expect(body.error).toMatchObject({ code: 'unauthorized', details: {} });
    expect(body.error.requestId).toBe(response.headers()['x-request-id']);

    const metadata = await (await request.get('/.well-known/oauth-protected-resource')).json();
    expect(metadata).toMatchObject({ resource: 'http://localhost:3100/api/v1', scopes_supported: ['management'] });
  });

  test('a dashboard session never authorizes /api/v1', async ({ adminPage }) => {
    await adminPage.goto('/organizations');
    const response = await adminPage.request.get('/api/v1/me');
    expect(response.status()).toBe(401);
    expect((await response.json()).error.code).toBe('unauthorized');
  });

  test('signed-out page requests are redirected to sign-in with the way back', async ({ request }) => {
    const response = await request.get('/organizations/org_x/members?tab=1', { maxRedirects: 0 });
    expect(response.status()).toBe(307);
    const location = new URL(response.headers()['location'], 'http://localhost:3100');
    expect(location.pathname).toBe('/sign-in');
    expect(location.searchParams.get('callbackUrl')).toBe('/organizations/org_x/members?tab=1');
    expect((await request.get('/account', { maxRedirects: 0 })).status()).toBe(307);
    expect((await request.get('/sign-in', { maxRedirects: 0 })).status()).toBe(200);
  });
});
