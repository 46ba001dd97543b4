import { eq } from 'drizzle-orm';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { oauthCodes } from '@/db/schema';
import { digest } from '@/server/oauth/secrets';
import { jwksResponse, metadataResponse, protectedResourceResponse } from '@/server/oauth/endpoints';
import { rotateSigningKey } from '@/server/oauth/keys';
import { call } from '../helpers/api';
import { caller } from '../helpers/trpc';
import {
  apiResource,
  appUrl,
  authorize,
  authorizeUrl,
  cliParams,
  cliRedirect,
  cliTokens,
  codeFor,
  decide,
  location,
  mcpResource,
  newBuiltInUser,
  pkce,
  register,
  revoke,
  token,
  useBuiltInIssuer,
} from '../helpers/oauth';

useBuiltInIssuer();

const me = (accessToken: string) => call('GET', '/me', { token: accessToken });

function expectOAuthError(reply: { status: number; headers: Headers; body: any }, status: number, error: string) {
  expect(reply.status, JSON.stringify(reply.body)).toBe(status);
  expect(reply.body.error).toBe(error);
  expect(typeof reply.body.error_description).toBe('string');
  expect(reply.headers.get('cache-control')).toBe('no-store');
}

let userId: string;
beforeAll(async () => {
  userId = await newBuiltInUser();
});

// A fresh code for promptloop-cli and the token request that redeems it.
async function redemption() {
  const { verifier, challenge } = pkce();
  const code = await codeFor(userId, cliParams(challenge));
  return {
    grant_type: 'authorization_code',
    code,
    redirect_uri: cliRedirect,
    client_id: 'promptloop-cli',
    code_verifier: verifier,
  };
}

const refreshWith = (refreshToken: string, extra: Record<string, string> = {}) =>
  token({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: 'promptloop-cli', ...extra });

describe('metadata', () => {
  it('RFC 8414 authorization server metadata names every endpoint from APP_URL', async () => {
    const body = await metadataResponse().json();
    expect(body).toMatchObject({
      issuer: appUrl,
      authorization_endpoint: `${appUrl}/oauth/authorize`,
      token_endpoint: `${appUrl}/oauth/token`,
      registration_endpoint: `${appUrl}/oauth/register`,
      revocation_endpoint: `${appUrl}/oauth/revoke`,
      jwks_uri: `${appUrl}/oauth/jwks`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
      code_challenge_methods_supported: ['S256'],
      scopes_supported: ['management'],
      authorization_response_iss_parameter_supported: true,
    });
    expect(body.token_endpoint_auth_methods_supported).toEqual(['none', 'client_secret_basic', 'client_secret_post']);
  });

  it('RFC 9728 protected resource metadata for /api/v1 and /mcp', async () => {
    expect(await protectedResourceResponse('api').json()).toMatchObject({
      resource: apiResource,
      authorization_servers: [appUrl],
      scopes_supported: ['management'],
    });
    expect(await protectedResourceResponse('mcp').json()).toMatchObject({
      resource: mcpResource,
      authorization_servers: [appUrl],
      scopes_supported: ['management'],
    });
  });

  it('the 401 challenge of /api/v1 points at the metadata', async () => {
    const result = await call('GET', '/me');
    expect(result.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${appUrl}/.well-known/oauth-protected-resource"`,
    );
  });
});

describe('authorization endpoint', () => {
  it('signed out → sign-in with a same-origin callback to the consent page', async () => {
    const { challenge } = pkce();
    const response = await authorize(authorizeUrl(cliParams(challenge)), null);
    expect(response.status).toBe(302);
    const target = location(response);
    expect(target.origin + target.pathname).toBe(`${appUrl}/sign-in`);
    const callback = target.searchParams.get('callbackUrl')!;
    expect(callback.startsWith('/oauth/consent?')).toBe(true);
    expect(new URLSearchParams(callback.split('?')[1]).get('code_challenge')).toBe(challenge);
  });

  it('signed in without consent → the consent page; Allow → code with state and iss; any loopback port', async () => {
    const user = await newBuiltInUser();
    const { challenge } = pkce();
    const params = cliParams(challenge, { redirect_uri: 'http://localhost:61001/callback' });
    const first = await authorize(authorizeUrl(params), user);
    expect(first.status).toBe(302);
    expect(location(first).pathname).toBe('/oauth/consent');
    const allowed = await decide(params, user, 'allow');
    expect(allowed.status).toBe(302);
    const back = location(allowed);
    expect(`${back.origin}${back.pathname}`).toBe('http://localhost:61001/callback');
    expect(back.searchParams.get('code')).toBeTruthy();
    expect(back.searchParams.get('state')).toBe('st-123');
    expect(back.searchParams.get('iss')).toBe(appUrl);
    // Consent is remembered: the next authorization goes straight back with a code.
    const again = await authorize(authorizeUrl(cliParams(pkce().challenge)), user);
    expect(location(again).searchParams.get('code')).toBeTruthy();
  });

  it('Deny → access_denied with state and iss, no code', async () => {
    const user = await newBuiltInUser();
    const params = cliParams(pkce().challenge);
    const response = await decide(params, user, 'deny');
    const back = location(response);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('st-123');
    expect(back.searchParams.get('iss')).toBe(appUrl);
    expect(back.searchParams.get('code')).toBeNull();
  });

  it('the consent form is refused from another origin or with a forged token', async () => {
    const user = await newBuiltInUser();
    const params = cliParams(pkce().challenge);
    const foreign = await decide(params, user, 'allow', { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('location')).toBeNull();
    const other = await newBuiltInUser();
    const { decisionRoute } = await import('@/server/oauth/endpoints');
    const body = new URLSearchParams({ ...params, decision: 'allow', consent_token: `${Date.now()}.forged` });
    const forged = await decisionRoute(
      await getDb(),
      new Request(`${appUrl}/oauth/authorize`, {
        method: 'POST',
        headers: { origin: appUrl, 'content-type': 'application/x-www-form-urlencoded' },
        body,
      }),
      other,
    );
    expect(forged.status).toBe(400);
    expect(forged.headers.get('location')).toBeNull();
  });

  it.each([
    ['unknown client', { client_id: 'client_nobody' }],
    ['missing client', { client_id: undefined }],
    ['redirect URI not registered', { redirect_uri: 'https://evil.example/callback' }],
    ['loopback with another path', { redirect_uri: 'http://127.0.0.1:5000/other' }],
    ['missing redirect URI', { redirect_uri: undefined }],
  ])('%s → an error page, never a redirect', async (_name, extra) => {
    const response = await authorize(
      authorizeUrl(cliParams(pkce().challenge, extra as Record<string, string | undefined>)),
      userId,
    );
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it.each([
    ['missing PKCE', { code_challenge: undefined, code_challenge_method: undefined }, 'invalid_request'],
    ['plain PKCE', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['method without challenge', { code_challenge: undefined }, 'invalid_request'],
    ['challenge without method', { code_challenge_method: undefined }, 'invalid_request'],
    ['response_type token', { response_type: 'token' }, 'unsupported_response_type'],
    ['unknown scope', { scope: 'management admin' }, 'invalid_scope'],
    ['foreign resource', { resource: 'https://other.example/api' }, 'invalid_target'],
  ])('%s → redirect with error, state and iss', async (_name, extra, error) => {
    const response = await authorize(
      authorizeUrl(cliParams(pkce().challenge, extra as Record<string, string | undefined>)),
      userId,
    );
    expect(response.status).toBe(302);
    const back = location(response);
    expect(`${back.origin}${back.pathname}`).toBe(cliRedirect);
    expect(back.searchParams.get('error')).toBe(error);
    expect(back.searchParams.get('state')).toBe('st-123');
    expect(back.searchParams.get('iss')).toBe(appUrl);
    expect(back.searchParams.get('code')).toBeNull();
  });

  it('a duplicated parameter is invalid_request', async () => {
    const url = `${authorizeUrl(cliParams(pkce().challenge))}&scope=management`;
    expect(location(await authorize(url, userId)).searchParams.get('error')).toBe('invalid_request');
  });
});

describe('token endpoint', () => {
  it('code → RFC 9068 access token and refresh token, no-store; the API accepts it', async () => {
    const { verifier, challenge } = pkce();
    const code = await codeFor(userId, cliParams(challenge));
    const reply = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: cliRedirect,
      client_id: 'promptloop-cli',
      code_verifier: verifier,
    });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('cache-control')).toBe('no-store');
    expect(reply.body).toMatchObject({ token_type: 'Bearer', scope: 'management' });
    expect(reply.body.expires_in).toBeLessThanOrEqual(3600);
    expect(typeof reply.body.refresh_token).toBe('string');
    const header = decodeProtectedHeader(reply.body.access_token);
    expect(header).toMatchObject({ typ: 'at+jwt', alg: 'ES256' });
    const claims = decodeJwt(reply.body.access_token);
    expect(claims).toMatchObject({
      iss: appUrl,
      sub: userId,
      aud: apiResource,
      client_id: 'promptloop-cli',
      scope: 'management',
    });
    expect(typeof claims.jti).toBe('string');
    expect(claims.exp! - claims.iat!).toBeLessThanOrEqual(3600);
    const profile = await me(reply.body.access_token);
    expect(profile.status).toBe(200);
    expect(profile.body.id).toBe(userId);
  });

  it('a wrong verifier is invalid_grant', async () => {
    const { challenge } = pkce();
    const code = await codeFor(userId, cliParams(challenge));
    expectOAuthError(
      await token({
        grant_type: 'authorization_code',
        code,
        redirect_uri: cliRedirect,
        client_id: 'promptloop-cli',
        code_verifier: pkce().verifier,
      }),
      400,
      'invalid_grant',
    );
  });

  it('a redirect URI other than the authorization request’s is invalid_grant', async () => {
    const { verifier, challenge } = pkce();
    const code = await codeFor(userId, cliParams(challenge));
    const reply = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'http://127.0.0.1:1/callback',
      client_id: 'promptloop-cli',
      code_verifier: verifier,
    });
    expectOAuthError(reply, 400, 'invalid_grant');
  });

  it('a second redemption is refused and revokes what the first issued', async () => {
    const { verifier, challenge } = pkce();
    const code = await codeFor(userId, cliParams(challenge));
    const redeem = () =>
      token({
        grant_type: 'authorization_code',
        code,
        redirect_uri: cliRedirect,
        client_id: 'promptloop-cli',
        code_verifier: verifier,
      });
    const first = await redeem();
    expect(first.status).toBe(200);
    expect((await me(first.body.access_token)).status).toBe(200);
    expectOAuthError(await redeem(), 400, 'invalid_grant');
    expect((await me(first.body.access_token)).status).toBe(401);
    expectOAuthError(
      await token({
        grant_type: 'refresh_token',
        refresh_token: first.body.refresh_token,
        client_id: 'promptloop-cli',
      }),
      400,
      'invalid_grant',
    );
  });

  it('redemptions at the same moment: one wins, the rest are refused, and what the winner got is revoked', async () => {
    const base = await redemption();
    const replies = await Promise.all(Array.from({ length: 6 }, () => token(base)));
    const won = replies.filter((r) => r.status === 200);
    expect(replies.filter((r) => r.status === 400 && r.body.error === 'invalid_grant')).toHaveLength(
      replies.length - won.length,
    );
    expect(won.length).toBeLessThanOrEqual(1);
    for (const winner of won) {
      expect((await me(winner.body.access_token)).status).toBe(401);
      expect((await refreshWith(winner.body.refresh_token)).status).toBe(400);
    }
  });

  it('a used code with a wrong verifier, client or redirect URI is refused and revokes nothing', async () => {
    const base = await redemption();
    const first = await token(base);
    expect(first.status).toBe(200);
    const other = await register({ client_name: 'Someone else', redirect_uris: ['http://127.0.0.1:9/callback'] });
    for (const wrong of [
      { code_verifier: pkce().verifier },
      { redirect_uri: 'http://127.0.0.1:1/callback' },
      { client_id: other.body.client_id },
    ])
      expectOAuthError(await token({ ...base, ...wrong }), 400, 'invalid_grant');
    expect((await me(first.body.access_token)).status).toBe(200);
    // The real client's own replay still revokes.
    expectOAuthError(await token(base), 400, 'invalid_grant');
    expect((await me(first.body.access_token)).status).toBe(401);
  });

  it('an expired code is invalid_grant', async () => {
    const { verifier, challenge } = pkce();
    const code = await codeFor(userId, cliParams(challenge));
    const [row] = await (
      await getDb()
    )
      .select({ expiresAt: oauthCodes.expiresAt, createdAt: oauthCodes.createdAt })
      .from(oauthCodes)
      .where(eq(oauthCodes.codeDigest, digest(code)));
    expect(row.expiresAt.getTime() - row.createdAt.getTime()).toBeLessThanOrEqual(60_000);
    await (
      await getDb()
    )
      .update(oauthCodes)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(oauthCodes.codeDigest, digest(code)));
    expectOAuthError(
      await token({
        grant_type: 'authorization_code',
        code,
        redirect_uri: cliRedirect,
        client_id: 'promptloop-cli',
        code_verifier: verifier,
      }),
      400,
      'invalid_grant',
    );
  });

  it('unknown client → 401 invalid_client; unknown grant type; missing parameters; not form-encoded', async () => {
    expectOAuthError(
      await token({
        grant_type: 'authorization_code',
        code: 'x',
        redirect_uri: cliRedirect,
        client_id: 'client_nobody',
        code_verifier: pkce().verifier,
      }),
      401,
      'invalid_client',
    );
    expectOAuthError(
      await token({ grant_type: 'password', client_id: 'promptloop-cli' }),
      400,
      'unsupported_grant_type',
    );
    expectOAuthError(
      await token({ grant_type: 'authorization_code', client_id: 'promptloop-cli' }),
      400,
      'invalid_request',
    );
    expectOAuthError(await token({ client_id: 'promptloop-cli' }), 400, 'invalid_request');
    expectOAuthError(
      await token({ grant_type: 'refresh_token', refresh_token: 'a\u0000b', client_id: 'promptloop-cli' }),
      400,
      'invalid_request',
    );
    const { tokenRoute } = await import('@/server/oauth/endpoints');
    const json = await tokenRoute(
      await getDb(),
      new Request(`${appUrl}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'refresh_token' }),
      }),
    );
    expect(json.status).toBe(400);
    expect((await json.json()).error).toBe('invalid_request');
  });

  it('refresh rotates; reusing a spent refresh token revokes the whole family, access tokens included', async () => {
    const first = await cliTokens(userId);
    const second = await token({
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: 'promptloop-cli',
    });
    expect(second.status).toBe(200);
    expect(second.headers.get('cache-control')).toBe('no-store');
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expect((await me(second.body.access_token)).status).toBe(200);
    // The spent token again: refused, and everything of this authorization is revoked.
    expectOAuthError(
      await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: 'promptloop-cli' }),
      400,
      'invalid_grant',
    );
    expectOAuthError(
      await token({
        grant_type: 'refresh_token',
        refresh_token: second.body.refresh_token,
        client_id: 'promptloop-cli',
      }),
      400,
      'invalid_grant',
    );
    const refused = await me(second.body.access_token);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect((await me(first.access_token)).status).toBe(401);
    // Another authorization of the same person and client is untouched.
    expect((await me((await cliTokens(userId)).access_token)).status).toBe(200);
  });

  it('scope never grows on refresh', async () => {
    const tokens = await cliTokens(userId);
    expectOAuthError(
      await token({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: 'promptloop-cli',
        scope: 'management admin',
      }),
      400,
      'invalid_scope',
    );
    const same = await token({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: 'promptloop-cli',
      scope: 'management',
    });
    expect(same.status).toBe(200);
    expect(same.body.scope).toBe('management');
  });

  it('a refresh token of another client is refused and left usable', async () => {
    const tokens = await cliTokens(userId);
    const client = await register({ redirect_uris: ['https://app.example/cb'], client_name: 'Other' });
    expectOAuthError(
      await token({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: client.body.client_id,
      }),
      400,
      'invalid_grant',
    );
    expect(
      (await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: 'promptloop-cli' }))
        .status,
    ).toBe(200);
  });

  it('resource → aud; anything but /api/v1 or /mcp is invalid_target', async () => {
    const base = await redemption();
    expectOAuthError(await token({ ...base, resource: 'https://other.example/api' }), 400, 'invalid_target');
    const mcp = await cliTokens(userId, { resource: mcpResource });
    expect(decodeJwt(mcp.access_token).aud).toBe(mcpResource);
    const tokens = await cliTokens(userId);
    expectOAuthError(
      await token({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: 'promptloop-cli',
        resource: `${appUrl}/other`,
      }),
      400,
      'invalid_target',
    );
    // An authorization asked without `resource` is for /api/v1 only (RFC 8707: the whole grant).
    expectOAuthError(
      await token({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: 'promptloop-cli',
        resource: mcpResource,
      }),
      400,
      'invalid_target',
    );
    expectOAuthError(await token({ ...(await redemption()), resource: mcpResource }), 400, 'invalid_target');
    // An authorization bound to /mcp cannot be turned into an /api/v1 token.
    expectOAuthError(
      await token({
        grant_type: 'refresh_token',
        refresh_token: mcp.refresh_token,
        client_id: 'promptloop-cli',
        resource: apiResource,
      }),
      400,
      'invalid_target',
    );
  });

  it('audience separation: an /mcp token is refused by /api/v1', async () => {
    const mcp = await cliTokens(userId, { resource: mcpResource });
    const refused = await me(mcp.access_token);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const { authenticateManagement } = await import('@/server/auth/oauth');
    const api = await cliTokens(userId);
    const asMcp = (t: string) =>
      authenticateManagement(
        getDbSync(),
        new Request(mcpResource, { headers: { authorization: `Bearer ${t}` } }),
        'mcp',
      );
    await expect(asMcp(mcp.access_token)).resolves.toMatchObject({ userId, clientId: 'promptloop-cli' });
    await expect(asMcp(api.access_token)).rejects.toMatchObject({ code: 'unauthorized' });
  });
});

let dbHandle: Awaited<ReturnType<typeof getDb>>;
beforeAll(async () => {
  dbHandle = await getDb();
});
const getDbSync = () => dbHandle;

describe('revocation (RFC 7009)', () => {
  it('revoking a refresh token refuses it and the access tokens of its family', async () => {
    const tokens = await cliTokens(userId);
    const reply = await revoke({ token: tokens.refresh_token, client_id: 'promptloop-cli' });
    expect(reply.status).toBe(200);
    expect((await me(tokens.access_token)).status).toBe(401);
    expectOAuthError(
      await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: 'promptloop-cli' }),
      400,
      'invalid_grant',
    );
  });

  it('revoking an access token revokes its authorization; unknown tokens answer 200', async () => {
    const tokens = await cliTokens(userId);
    expect(
      (await revoke({ token: tokens.access_token, client_id: 'promptloop-cli', token_type_hint: 'access_token' }))
        .status,
    ).toBe(200);
    expect((await me(tokens.access_token)).status).toBe(401);
    expect((await revoke({ token: 'no-such-token', client_id: 'promptloop-cli' })).status).toBe(200);
    expectOAuthError(await revoke({ client_id: 'promptloop-cli' }), 400, 'invalid_request');
  });
  it('revoking with another client_id is refused (RFC 7009 2.1) and the tokens stay live', async () => {
    const tokens = await cliTokens(userId);
    const other = await register({ redirect_uris: ['https://other.example/cb'], client_name: 'Other' });
    for (const t of [tokens.refresh_token, tokens.access_token])
      expectOAuthError(await revoke({ token: t, client_id: other.body.client_id }), 400, 'invalid_grant');
    expect((await me(tokens.access_token)).status).toBe(200);
    expect((await refreshWith(tokens.refresh_token)).status).toBe(200);
  });
});

describe('signing keys', () => {
  it('JWKS publishes the ES256 keys; after rotation the old key stays and its tokens still verify', async () => {
    const before = await cliTokens(userId);
    const oldKid = decodeProtectedHeader(before.access_token).kid;
    await rotateSigningKey();
    const after = await cliTokens(userId);
    expect(decodeProtectedHeader(after.access_token).kid).not.toBe(oldKid);
    const jwks = await (await jwksResponse()).json();
    const kids = jwks.keys.map((k: { kid: string }) => k.kid);
    expect(kids).toContain(oldKid);
    expect(kids).toContain(decodeProtectedHeader(after.access_token).kid);
    for (const key of jwks.keys) {
      expect(key).not.toHaveProperty('d');
      expect(key.alg).toBe('ES256');
    }
    expect((await me(before.access_token)).status).toBe(200);
    expect((await me(after.access_token)).status).toBe(200);
  });
});

describe('dynamic client registration (RFC 7591)', () => {
  it('registers a public client: 201 with client_id; its name is on the consent page; redirect URIs match exactly', async () => {
    const reply = await register({
      redirect_uris: ['https://agent.example/oauth/callback', 'http://127.0.0.1/cb'],
      client_name: 'Agent Studio',
      software_id: 'ignored?',
    });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({
      client_name: 'Agent Studio',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
    expect(typeof reply.body.client_id).toBe('string');
    const clientId = reply.body.client_id;
    const { challenge, verifier } = pkce();
    const params = {
      ...cliParams(challenge),
      client_id: clientId,
      redirect_uri: 'https://agent.example/oauth/callback',
      resource: mcpResource,
    };
    const user = await newBuiltInUser();
    expect(location(await authorize(authorizeUrl(params), user)).pathname).toBe('/oauth/consent');
    // Exact match for https, any port for loopback.
    expect(
      (await authorize(authorizeUrl({ ...params, redirect_uri: 'https://agent.example/oauth/callback2' }), user))
        .status,
    ).toBe(400);
    expect((await authorize(authorizeUrl({ ...params, redirect_uri: 'http://127.0.0.1:8123/cb' }), user)).status).toBe(
      302,
    );
    const code = location(await decide(params, user, 'allow')).searchParams.get('code')!;
    const tokens = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: params.redirect_uri,
      client_id: clientId,
      code_verifier: verifier,
      resource: mcpResource,
    });
    expect(tokens.status).toBe(200);
    expect(decodeJwt(tokens.body.access_token)).toMatchObject({ client_id: clientId, aud: mcpResource, sub: user });
  });

  it('a loopback redirect URI without a path (as many MCP clients register it) registers and matches on any port', async () => {
    const reply = await register({
      redirect_uris: ['http://127.0.0.1:33418', 'http://localhost'],
      client_name: 'Editor',
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    const { challenge } = pkce();
    const params = { ...cliParams(challenge), client_id: reply.body.client_id, resource: mcpResource };
    const user = await newBuiltInUser();
    for (const redirect_uri of [
      'http://127.0.0.1:33418',
      'http://127.0.0.1:5555',
      'http://127.0.0.1:5555/',
      'http://localhost:7000',
    ])
      expect((await authorize(authorizeUrl({ ...params, redirect_uri }), user)).status, redirect_uri).toBe(302);
    // Another path, or the other loopback name, is not what was registered.
    for (const redirect_uri of ['http://127.0.0.1:5555/cb', 'http://[::1]:33418'])
      expect((await authorize(authorizeUrl({ ...params, redirect_uri }), user)).status, redirect_uri).toBe(400);
  });

  it.each([
    ['no redirect_uris', { client_name: 'x' }, 'invalid_redirect_uri'],
    ['empty redirect_uris', { redirect_uris: [] }, 'invalid_redirect_uri'],
    ['http on a public host', { redirect_uris: ['http://agent.example/cb'] }, 'invalid_redirect_uri'],
    ['custom scheme', { redirect_uris: ['myapp://cb'] }, 'invalid_redirect_uri'],
    ['fragment', { redirect_uris: ['https://agent.example/cb#x'] }, 'invalid_redirect_uri'],
    ['not a URL', { redirect_uris: ['not a url'] }, 'invalid_redirect_uri'],
    ['not a string', { redirect_uris: [42] }, 'invalid_redirect_uri'],
    ['javascript:', { redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri'],
    ['user info', { redirect_uris: ['https://user:pw@agent.example/cb'] }, 'invalid_redirect_uri'],
    [
      'too many',
      { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://agent.example/${i}`) },
      'invalid_redirect_uri',
    ],
    [
      'confidential client',
      { redirect_uris: ['https://agent.example/cb'], token_endpoint_auth_method: 'client_secret_basic' },
      'invalid_client_metadata',
    ],
    [
      'implicit grant',
      { redirect_uris: ['https://agent.example/cb'], grant_types: ['implicit'] },
      'invalid_client_metadata',
    ],
    // The consent page's heading must not pass for ours.
    [
      'our CLI’s name',
      { redirect_uris: ['https://agent.example/cb'], client_name: 'Promptloop CLI' },
      'invalid_client_metadata',
    ],
    [
      'our name in full width',
      { redirect_uris: ['https://agent.example/cb'], client_name: 'ＰＲＯＭＰＴＬＯＯＰ' },
      'invalid_client_metadata',
    ],
    [
      'a bidi override',
      { redirect_uris: ['https://agent.example/cb'], client_name: 'Agent \u202eoiduts' },
      'invalid_client_metadata',
    ],
    [
      'a zero-width space',
      { redirect_uris: ['https://agent.example/cb'], client_name: 'Prompt\u200bloop CLI' },
      'invalid_client_metadata',
    ],
    [
      'token response type',
      { redirect_uris: ['https://agent.example/cb'], response_types: ['token'] },
      'invalid_client_metadata',
    ],
    ['unknown scope', { redirect_uris: ['https://agent.example/cb'], scope: 'admin' }, 'invalid_client_metadata'],
    [
      'name not a string',
      { redirect_uris: ['https://agent.example/cb'], client_name: { a: 1 } },
      'invalid_client_metadata',
    ],
    [
      'name too long',
      { redirect_uris: ['https://agent.example/cb'], client_name: 'x'.repeat(500) },
      'invalid_client_metadata',
    ],
    [
      'U+0000 in the name',
      { redirect_uris: ['https://agent.example/cb'], client_name: 'a\u0000b' },
      'invalid_client_metadata',
    ],
    [
      'lone surrogate in an unknown field',
      { redirect_uris: ['https://agent.example/cb'], x: 'a\ud800b' },
      'invalid_client_metadata',
    ],
    ['an array body', [1, 2], 'invalid_client_metadata'],
  ])('%s → 400 %s, nothing stored', async (_name, body, error) => {
    const reply = await register(body);
    expect(reply.status, JSON.stringify(reply.body)).toBe(400);
    expect(reply.body.error).toBe(error);
    expect(reply.body.client_id).toBeUndefined();
  });

  it('malformed, deep, huge and non-JSON bodies are clear 4xx', async () => {
    expect((await register('{"redirect_uris": [')).body.error).toBe('invalid_client_metadata');
    expect((await register('['.repeat(5000) + ']'.repeat(5000))).status).toBe(400);
    expect((await register({ redirect_uris: ['https://a.example/cb'], pad: 'x'.repeat(64 * 1024) })).status).toBe(413);
    expect((await register('redirect_uris=x', 'test-register', 'application/x-www-form-urlencoded')).status).toBe(400);
  });
});

describe('rate limits', () => {
  it('token endpoint: 429 with Retry-After past the per-address limit', async () => {
    process.env.OAUTH_TOKEN_RATE_LIMIT_PER_MINUTE = '5';
    try {
      const ip = `rl-token-${Date.now()}`;
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++)
        statuses.push(
          (await token({ grant_type: 'refresh_token', refresh_token: 'x', client_id: 'promptloop-cli' }, ip)).status,
        );
      expect(statuses.slice(0, 5)).toEqual([400, 400, 400, 400, 400]);
      const limited = await token({ grant_type: 'refresh_token', refresh_token: 'x', client_id: 'promptloop-cli' }, ip);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      // Another address is not affected.
      expect(
        (await token({ grant_type: 'refresh_token', refresh_token: 'x', client_id: 'promptloop-cli' }, `${ip}-other`))
          .status,
      ).toBe(400);
    } finally {
      delete process.env.OAUTH_TOKEN_RATE_LIMIT_PER_MINUTE;
    }
  });

  it('registration: 429 with Retry-After past the per-address limit', async () => {
    process.env.OAUTH_REGISTER_RATE_LIMIT_PER_HOUR = '3';
    try {
      const ip = `rl-register-${Date.now()}`;
      for (let i = 0; i < 3; i++)
        expect((await register({ redirect_uris: ['https://a.example/cb'] }, ip)).status).toBe(201);
      const limited = await register({ redirect_uris: ['https://a.example/cb'] }, ip);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      delete process.env.OAUTH_REGISTER_RATE_LIMIT_PER_HOUR;
    }
  });
});

describe('authorized applications (dashboard)', () => {
  it('lists the apps a person allowed and Revoke refuses their tokens at once', async () => {
    const user = await newBuiltInUser();
    const tokens = await cliTokens(user);
    expect((await me(tokens.access_token)).status).toBe(200);
    const dashboard = await caller(user);
    const { items } = await dashboard.authorizedApps.list();
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ clientId: 'promptloop-cli', name: 'Promptloop CLI', scopes: ['management'] });
    expect(items[0].lastUsedAt).not.toBeNull();
    await dashboard.authorizedApps.revoke({ clientId: 'promptloop-cli' });
    expect((await me(tokens.access_token)).status).toBe(401);
    expectOAuthError(
      await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: 'promptloop-cli' }),
      400,
      'invalid_grant',
    );
    expect((await dashboard.authorizedApps.list()).items).toEqual([]);
    // A code handed out before the revocation and not redeemed yet is refused afterwards.
    const early = pkce();
    const before = await cliTokens(user);
    const pending = await codeFor(user, cliParams(early.challenge));
    await dashboard.authorizedApps.revoke({ clientId: 'promptloop-cli' });
    expect((await me(before.access_token)).status).toBe(401);
    expectOAuthError(
      await token({
        grant_type: 'authorization_code',
        code: pending,
        redirect_uri: cliRedirect,
        client_id: 'promptloop-cli',
        code_verifier: early.verifier,
      }),
      400,
      'invalid_grant',
    );
    expect((await dashboard.authorizedApps.list()).items).toEqual([]);
    // Consent is forgotten: the next authorization asks again.
    expect(location(await authorize(authorizeUrl(cliParams(pkce().challenge)), user)).pathname).toBe('/oauth/consent');
    // Another person cannot revoke what they never allowed.
    await expect(
      (await caller(await newBuiltInUser())).authorizedApps.revoke({ clientId: 'promptloop-cli' }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('CORS for browser-based public clients', () => {
  it('token, revocation and registration answer any origin, errors included, and the preflight', async () => {
    const refused = await token({ grant_type: 'password', client_id: 'promptloop-cli' });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    expect(
      (await revoke({ token: 'plrt_nothing', client_id: 'promptloop-cli' })).headers.get('access-control-allow-origin'),
    ).toBe('*');
    const registered = await register(
      {
        client_name: 'Browser MCP',
        redirect_uris: ['https://inspector.example/callback'],
        token_endpoint_auth_method: 'none',
      },
      'test-cors',
    );
    expect(registered.status).toBe(201);
    expect(registered.headers.get('access-control-allow-origin')).toBe('*');
    for (const route of ['token', 'revoke', 'register'] as const) {
      const { OPTIONS } = await import(`@/app/oauth/${route}/route`);
      const preflight: Response = OPTIONS();
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
      expect(preflight.headers.get('access-control-allow-methods')).toBe('POST');
      expect(preflight.headers.get('access-control-allow-headers')).toContain('content-type');
    }
  });

  it('the discovery documents and the JWKS answer the preflight of a request carrying MCP-Protocol-Version', async () => {
    // The MCP SDK sends MCP-Protocol-Version with its discovery requests: in a browser, a preflight
    // without the CORS headers failed them (e2e/oauth.spec.ts runs the same from another origin).
    for (const route of [
      'oauth/jwks',
      '.well-known/oauth-protected-resource',
      '.well-known/oauth-protected-resource/mcp',
      '.well-known/oauth-authorization-server',
    ]) {
      const { OPTIONS, GET } = await import(`@/app/${route}/route`);
      const preflight: Response = OPTIONS();
      expect(preflight.status, route).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin'), route).toBe('*');
      expect(preflight.headers.get('access-control-allow-methods'), route).toContain('GET');
      expect(preflight.headers.get('access-control-allow-headers'), route).toContain('mcp-protocol-version');
      const document: Response = await GET();
      expect(document.status, route).toBe(200);
      expect(document.headers.get('access-control-allow-origin'), route).toBe('*');
    }
  });
});
