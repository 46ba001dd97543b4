import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAccount, expect, test } from './fixtures';

// The whole login of a tool, as the CLI does it: a loopback listener, the browser for sign-in and
// consent, and a plain HTTP client for the token endpoint and the management API.
const appUrl = 'http://localhost:3100';

type Callback = { code: string | null; state: string | null; iss: string | null; error: string | null };

async function loopback(): Promise<{ redirectUri: string; next: () => Promise<Callback>; close: () => Promise<void> }> {
  const waiting: ((c: Callback) => void)[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Signed in</h1><p>You can close this tab.</p>');
    const p = url.searchParams;
    waiting.shift()?.({ code: p.get('code'), state: p.get('state'), iss: p.get('iss'), error: p.get('error') });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    redirectUri: `http://127.0.0.1:${port}/callback`,
    next: () => new Promise((resolve) => waiting.push(resolve)),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

function authorizeUrl(redirectUri: string, challenge: string, state: string): string {
  const url = new URL(`${appUrl}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: 'promptloop-cli',
    redirect_uri: redirectUri,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
    scope: 'management',
    resource: `${appUrl}/api/v1`,
  }))
    url.searchParams.set(k, v);
  return url.toString();
}

async function tokenRequest(params: Record<string, string>) {
  const response = await fetch(`${appUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params),
  });
  return { status: response.status, cacheControl: response.headers.get('cache-control'), body: await response.json() };
}

const me = (accessToken: string) =>
  fetch(`${appUrl}/api/v1/me`, { headers: { authorization: `Bearer ${accessToken}` } });

test.describe('signing a tool in with OAuth', () => {
  test('metadata is served from APP_URL', async ({ request }) => {
    const as = await (await request.get('/.well-known/oauth-authorization-server')).json();
    expect(as).toMatchObject({
      issuer: appUrl,
      authorization_endpoint: `${appUrl}/oauth/authorize`,
      token_endpoint: `${appUrl}/oauth/token`,
      code_challenge_methods_supported: ['S256'],
    });
    const mcp = await (await request.get('/.well-known/oauth-protected-resource/mcp')).json();
    expect(mcp).toMatchObject({ resource: `${appUrl}/mcp`, authorization_servers: [appUrl] });
    expect((await (await request.get('/oauth/jwks')).json()).keys.length).toBeGreaterThan(0);
  });

  test('authorize → sign in → Deny, then Allow → code → token → refresh → API; revoking in the dashboard stops the token', async ({
    browser,
    request,
  }) => {
    const account = await createAccount(request, 'oauth');
    const listener = await loopback();
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      // Deny first: the application hears access_denied with its state and our issuer.
      const denied = pkce();
      let callback = listener.next();
      await page.goto(authorizeUrl(listener.redirectUri, denied.challenge, 'deny-state'));
      await expect(page).toHaveURL(/\/sign-in\?/);
      await page.getByLabel('Email').fill(account.email);
      await page.getByLabel('Password').fill(account.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect(page.getByRole('heading', { level: 1 })).toHaveText('Promptloop CLI');
      await page.getByRole('button', { name: 'Deny', exact: true }).click();
      expect(await callback).toEqual({ code: null, state: 'deny-state', iss: appUrl, error: 'access_denied' });

      // Allow: a code at the loopback listener.
      const allowed = pkce();
      callback = listener.next();
      await page.goto(authorizeUrl(listener.redirectUri, allowed.challenge, 'allow-state'));
      await expect(page.getByRole('heading', { level: 1 })).toHaveText('Promptloop CLI');
      await page.getByRole('button', { name: 'Allow', exact: true }).click();
      const result = await callback;
      expect(result).toMatchObject({ state: 'allow-state', iss: appUrl, error: null });
      await expect(page.getByRole('heading', { name: 'Signed in' })).toBeVisible();

      const tokens = await tokenRequest({
        grant_type: 'authorization_code',
        code: result.code!,
        redirect_uri: listener.redirectUri,
        client_id: 'promptloop-cli',
        code_verifier: allowed.verifier,
      });
      expect(tokens.status).toBe(200);
      expect(tokens.cacheControl).toBe('no-store');
      const refreshed = await tokenRequest({
        grant_type: 'refresh_token',
        refresh_token: tokens.body.refresh_token,
        client_id: 'promptloop-cli',
      });
      expect(refreshed.status).toBe(200);
      const profile = await me(refreshed.body.access_token);
      expect(profile.status).toBe(200);
      expect((await profile.json()).email).toBe(account.email);

      // Revoke from Account → Authorized applications: the API refuses the token at once.
      await page.goto('/organizations');
      await page.getByRole('link', { name: 'Authorized applications' }).click();
      await expect(page).toHaveURL(/\/account\/applications$/);
      const row = page.getByRole('row', { name: /Promptloop CLI/ });
      await expect(row).toBeVisible();
      await row.getByRole('button', { name: 'Revoke Promptloop CLI' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Revoke access' }).click();
      await expect(page.getByText('No authorized applications')).toBeVisible();
      expect((await me(refreshed.body.access_token)).status).toBe(401);
      const again = await tokenRequest({
        grant_type: 'refresh_token',
        refresh_token: refreshed.body.refresh_token,
        client_id: 'promptloop-cli',
      });
      expect(again.status).toBe(400);
      expect(again.body.error).toBe('invalid_grant');
    } finally {
      await context.close();
      await listener.close();
    }
  });

  test('an unregistered redirect URI gets an error page, never a redirect', async ({ page }) => {
    const response = await page.goto(authorizeUrl('https://evil.example/callback', pkce().challenge, 's'));
    expect(response?.status()).toBe(400);
    expect(new URL(page.url()).origin).toBe(appUrl);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Invalid redirect');
  });
});

test('a browser client on another origin reads the discovery documents with the MCP SDK headers', async ({ page }) => {
  // The MCP SDK sends MCP-Protocol-Version with its discovery requests, which makes the browser
  // ask a preflight first: the documents must answer it, or the request fails before it is sent.
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Agent</h1>'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    const statuses = await page.evaluate(async (base) => {
      const headers = { 'MCP-Protocol-Version': '2025-06-18', Accept: 'application/json' };
      const results: Record<string, number | string> = {};
      for (const path of [
        '/.well-known/oauth-protected-resource/mcp',
        '/.well-known/oauth-protected-resource',
        '/.well-known/oauth-authorization-server',
        '/oauth/jwks',
      ])
        results[path] = await fetch(`${base}${path}`, { headers }).then(
          (response) => response.status,
          (error: Error) => error.message,
        );
      results['/oauth/token'] = await fetch(`${base}/oauth/token`, {
        method: 'POST',
        headers: { ...headers, 'Content-Type': 'application/json' },
        body: '{}',
      }).then(
        (response) => response.status,
        (error: Error) => error.message,
      );
      return results;
    }, appUrl);
    expect(statuses).toEqual({
      '/.well-known/oauth-protected-resource/mcp': 200,
      '/.well-known/oauth-protected-resource': 200,
      '/.well-known/oauth-authorization-server': 200,
      '/oauth/jwks': 200,
      '/oauth/token': 400,
    });
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
