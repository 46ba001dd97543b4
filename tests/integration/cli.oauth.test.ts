import { statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import {
  authorizeRoute,
  decisionRoute,
  jwksResponse,
  metadataResponse,
  protectedResourceResponse,
  revokeRoute,
  tokenRoute,
} from '@/server/oauth/endpoints';
import { consentToken } from '@/server/oauth/authorize';
import {
  newConfigDir,
  seedLogin,
  runCli,
  startAppServer,
  startProxy,
  storedLogin,
  type AppServer,
  type CliResult,
} from '../helpers/cli';
import { newBuiltInUser } from '../helpers/oauth';
import { closedPort } from '../helpers/net';
import { Store } from '@/cli/config';

// `promptloop login` against the built-in authorization server over real HTTP: the CLI prints
// the authorization URL (--no-browser), the test plays the signed-in browser (authorize → consent
// Allow → the redirect to the CLI's loopback listener), and the CLI redeems the code. Then the
// stored tokens: transparent refresh with rotation (also by two processes at once), exit 3 once
// the login is revoked, and logout revoking at the server.

let app: AppServer;
let url: string;

beforeAll(async () => {
  // This file's server is the issuer: APP_URL is where the CLI reaches it.
  const port = await closedPort();
  url = `http://127.0.0.1:${port}`;
  process.env.APP_URL = url;
  process.env.OAUTH_ISSUER = url;
  process.env.OAUTH_AUDIENCE = `${url}/api/v1`;
  delete process.env.OAUTH_JWKS_URL;
  const db = await getDb();
  const oauth = async (request: Request): Promise<Response | null> => {
    const { pathname } = new URL(request.url);
    if (pathname === '/.well-known/oauth-authorization-server') return metadataResponse();
    if (pathname === '/.well-known/oauth-protected-resource') return protectedResourceResponse('api');
    if (pathname === '/oauth/jwks') return jwksResponse();
    if (pathname === '/oauth/token' && request.method === 'POST') return tokenRoute(db, request);
    if (pathname === '/oauth/revoke' && request.method === 'POST') return revokeRoute(db, request);
    return null;
  };
  app = await startAppServer([oauth], { port, origin: url });
}, 120_000);
afterAll(() => app?.stop());

type Login = { result: Promise<CliResult>; authorizeUrl: URL };

/** Starts `promptloop login --no-browser` and resolves once it has printed the authorization URL. */
async function startLogin(configDir: string): Promise<Login> {
  let found: (value: URL) => void;
  const printed = new Promise<URL>((resolve) => (found = resolve));
  const result = runCli(['login', '--no-browser'], {
    configDir,
    url,
    onStdout: (text) => {
      const match = /^(http\S+\/oauth\/authorize\?\S+)$/m.exec(text);
      if (match) found(new URL(match[1]));
    },
  });
  const authorizeUrl = await Promise.race([
    printed,
    result.then((r) => Promise.reject(new Error(`login ended early: ${r.code} ${r.stdout} ${r.stderr}`))),
  ]);
  return { result, authorizeUrl };
}

/** What the browser of a signed-in user does: authorize, then Allow (or Deny) on the consent page. */
async function consent(authorizeUrl: URL, userId: string, decision: 'allow' | 'deny'): Promise<URL> {
  const db = await getDb();
  const first = await authorizeRoute(db, new Request(authorizeUrl), userId);
  expect(first.status).toBe(302);
  expect(new URL(first.headers.get('location')!).pathname).toBe('/oauth/consent');
  const body = new URLSearchParams(authorizeUrl.searchParams);
  body.set('consent_token', consentToken(userId, authorizeUrl.searchParams));
  body.set('decision', decision);
  const decided = await decisionRoute(
    db,
    new Request(`${url}/oauth/authorize`, {
      method: 'POST',
      headers: { origin: url, 'content-type': 'application/x-www-form-urlencoded' },
      body,
    }),
    userId,
  );
  expect(decided.status).toBe(302);
  return new URL(decided.headers.get('location')!);
}

async function logIn(configDir: string, userId: string) {
  const login = await startLogin(configDir);
  const callback = await consent(login.authorizeUrl, userId, 'allow');
  const page = await fetch(callback);
  expect(page.status).toBe(200);
  const result = await login.result;
  expect(result.code, result.stderr).toBe(0);
  return result;
}

const store = (configDir: string) => new Store(url, { PROMPTLOOP_CONFIG_DIR: configDir });

function expire(configDir: string) {
  const tokens = store(configDir).tokens()!;
  store(configDir).saveTokens({ ...tokens, expiresAt: Date.now() - 1000 });
}

async function form(endpoint: string, params: Record<string, string>) {
  const response = await fetch(`${url}${endpoint}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params),
  });
  return { status: response.status, body: await response.json().catch(() => null) };
}

describe('promptloop login', () => {
  it('authorization code + S256 PKCE with a loopback redirect; stores the tokens 0600; a command then works', async () => {
    const userId = await newBuiltInUser();
    const configDir = newConfigDir();
    const login = await startLogin(configDir);
    const q = login.authorizeUrl.searchParams;
    expect(`${login.authorizeUrl.origin}${login.authorizeUrl.pathname}`).toBe(`${url}/oauth/authorize`);
    expect(Object.fromEntries(q)).toMatchObject({
      response_type: 'code',
      client_id: 'promptloop-cli',
      code_challenge_method: 'S256',
      scope: 'management',
      resource: `${url}/api/v1`,
    });
    expect(q.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(q.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get('state')!.length).toBeGreaterThanOrEqual(22);

    const callback = await consent(login.authorizeUrl, userId, 'allow');
    expect(callback.searchParams.get('iss')).toBe(url);
    // A response that does not carry our state is refused and the CLI keeps waiting.
    const forged = new URL(callback);
    forged.searchParams.set('state', 'someone-else');
    expect((await fetch(forged)).status).toBe(400);
    const page = await fetch(callback);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Logged in');
    const result = await login.result;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`Logged in to ${url} as ${userId}@example.test.`);

    const tokens = storedLogin(configDir, url)!;
    expect(tokens).toMatchObject({
      clientId: 'promptloop-cli',
      issuer: url,
      resource: `${url}/api/v1`,
      scope: 'management',
    });
    expect(tokens.refreshToken).toBeTruthy();
    expect(statSync(path.join(configDir, 'credentials.json')).mode & 0o777).toBe(0o600);
    expect(statSync(configDir).mode & 0o777).toBe(0o700);

    const created = await runCli(['orgs', 'create', 'Logged-in org', '--json'], { configDir, url });
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ name: 'Logged-in org', role: 'admin' });

    // Logging in again (consent remembered: straight to the code) replaces and revokes the first login.
    const again = await startLogin(configDir);
    const direct = await authorizeRoute(await getDb(), new Request(again.authorizeUrl), userId);
    expect((await fetch(direct.headers.get('location')!)).status).toBe(200);
    expect((await again.result).code).toBe(0);
    expect(storedLogin(configDir, url)!.refreshToken).not.toBe(tokens.refreshToken);
    const old = await form('/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refreshToken!,
      client_id: 'promptloop-cli',
    });
    expect(old.body.error).toBe('invalid_grant');
  });

  it('Deny in the browser: exit 3 and nothing stored', async () => {
    const userId = await newBuiltInUser();
    const configDir = newConfigDir();
    const login = await startLogin(configDir);
    const callback = await consent(login.authorizeUrl, userId, 'deny');
    expect(callback.searchParams.get('error')).toBe('access_denied');
    const page = await fetch(callback);
    expect(page.status).toBe(400);
    const text = await page.text();
    expect(text).toContain('You can close this window.');
    expect(text).not.toContain('..');
    const result = await login.result;
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('Access was denied');
    expect(storedLogin(configDir, url)).toBeUndefined();
  });

  it('refuses a response from another issuer (iss) and stores nothing', async () => {
    const userId = await newBuiltInUser();
    const configDir = newConfigDir();
    const login = await startLogin(configDir);
    const callback = await consent(login.authorizeUrl, userId, 'allow');
    callback.searchParams.set('iss', 'https://evil.example');
    expect((await fetch(callback)).status).toBe(400);
    const result = await login.result;
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('names issuer https://evil.example');
    expect(storedLogin(configDir, url)).toBeUndefined();
  });
});

describe('stored tokens', () => {
  it('refreshes an expired access token transparently and saves the rotated refresh token', async () => {
    const configDir = newConfigDir();
    await logIn(configDir, await newBuiltInUser());
    const before = storedLogin(configDir, url)!;
    expire(configDir);
    const result = await runCli(['account', 'get', '--json'], { configDir, url });
    expect(result.code, result.stderr).toBe(0);
    const after = storedLogin(configDir, url)!;
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(after.expiresAt).toBeGreaterThan(Date.now() + 30 * 60_000);
    expect(statSync(path.join(configDir, 'credentials.json')).mode & 0o777).toBe(0o600);
    // The old refresh token was spent (rotation): the server refuses it.
    const reuse = await form('/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: before.refreshToken!,
      client_id: 'promptloop-cli',
    });
    expect(reuse.body.error).toBe('invalid_grant');
  });

  it('two processes refreshing at once use the refresh token once (no reuse detection)', async () => {
    const configDir = newConfigDir();
    await logIn(configDir, await newBuiltInUser());
    // A slow token endpoint, so that both processes are refreshing at the same time.
    const proxy = await startProxy(url, (req) => (req.url === '/oauth/token' ? 'slow' : 'pass'));
    try {
      const tokens = store(configDir).tokens()!;
      store(configDir).saveTokens({
        ...tokens,
        tokenEndpoint: `${proxy.url}/oauth/token`,
        expiresAt: Date.now() - 1000,
      });
      const [a, b] = await Promise.all([
        runCli(['orgs', 'list'], { configDir, url }),
        runCli(['orgs', 'list'], { configDir, url }),
      ]);
      expect([a.code, b.code], a.stderr + b.stderr).toEqual([0, 0]);
      expect(proxy.seen.filter((r) => r.path === '/oauth/token')).toHaveLength(1);
      expect((await runCli(['orgs', 'list'], { configDir, url })).code).toBe(0);
    } finally {
      await proxy.stop();
    }
  });

  it('exits 3 and forgets the tokens once the login is revoked at the server', async () => {
    const configDir = newConfigDir();
    await logIn(configDir, await newBuiltInUser());
    const tokens = storedLogin(configDir, url)!;
    const revoked = await form('/oauth/revoke', {
      token: tokens.refreshToken!,
      token_type_hint: 'refresh_token',
      client_id: 'promptloop-cli',
    });
    expect(revoked.status).toBe(200);
    // The access token has not expired, but its grant is gone: 401, the refresh is refused → 3.
    const result = await runCli(['orgs', 'list'], { configDir, url });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/revoked|expired/);
    expect(result.stderr).toContain('promptloop login');
    expect(storedLogin(configDir, url)).toBeUndefined();
    expect((await runCli(['orgs', 'list'], { configDir, url })).code).toBe(3);
  });

  it('logout revokes at the server and deletes the tokens', async () => {
    const configDir = newConfigDir();
    await logIn(configDir, await newBuiltInUser());
    const tokens = storedLogin(configDir, url)!;
    const out = await runCli(['logout'], { configDir, url });
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toBe('');
    expect(out.stdout).toContain(`Logged out of ${url}.`);
    expect(storedLogin(configDir, url)).toBeUndefined();
    const refresh = await form('/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refreshToken!,
      client_id: 'promptloop-cli',
    });
    expect(refresh.body.error).toBe('invalid_grant');
    const me = await fetch(`${url}/api/v1/me`, { headers: { authorization: `Bearer ${tokens.accessToken}` } });
    expect(me.status).toBe(401);
    expect((await runCli(['orgs', 'list'], { configDir, url })).code).toBe(3);
    expect((await runCli(['logout'], { configDir, url })).code).toBe(0);
  });

  it('logout whose revocation the server does not confirm deletes the tokens here and exits 1, saying so', async () => {
    const configDir = newConfigDir();
    seedLogin(configDir, url, {
      accessToken: 'at',
      refreshToken: 'rt',
      revocationEndpoint: 'http://127.0.0.1:1/oauth/revoke',
    });
    const out = await runCli(['logout'], { configDir, url });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain('did not confirm their revocation');
    expect(storedLogin(configDir, url)).toBeUndefined();
  });
});
