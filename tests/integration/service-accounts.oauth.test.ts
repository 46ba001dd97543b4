import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { Issuer } from 'openid-client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { serviceAccounts } from '@/db/schema';
import { tokenRoute } from '@/server/oauth/endpoints';
import { form, register } from '../helpers/oauth';
import {
  basic,
  builtInTeam,
  http,
  newServiceAccount,
  startStack,
  tokenRequest,
  type Stack,
} from '../helpers/service-accounts';
import type { TestUser } from '../helpers/api';

// The client_credentials grant at /oauth/token over real HTTP: form fields and HTTP Basic, the
// refusals (wrong, missing or revoked secret, public clients, both methods at once, scope and
// resource), the token's claims, the metadata, and the two audiences (/api/v1 and /mcp, the latter
// through the MCP SDK's own client_credentials provider). Also with an official OAuth client library.

let stack: Stack;
let url: string;
let admin: TestUser;
let org: { id: string };

beforeAll(async () => {
  stack = await startStack();
  url = stack.url;
  ({ admin, org } = await builtInTeam(url));
}, 120_000);
afterAll(() => stack?.stop());

const grant = (clientId: string, clientSecret?: string, extra: Record<string, string> = {}) => ({
  grant_type: 'client_credentials',
  client_id: clientId,
  client_secret: clientSecret,
  ...extra,
});

describe('POST /oauth/token grant_type=client_credentials', () => {
  it('form fields → 200 Bearer token (no refresh token, no-store) whose sub is the sac_ id and client_id the sa_ client id', async () => {
    const account = await newServiceAccount(url, admin, org.id, 'editor');
    const reply = await tokenRequest(url, grant(account.serviceAccount.clientId, account.clientSecret));
    expect(reply.status).toBe(200);
    expect(reply.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(reply.body).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type']);
    expect(reply.body).toMatchObject({ token_type: 'Bearer', scope: 'management', expires_in: 3600 });
    expect(decodeProtectedHeader(reply.body.access_token)).toMatchObject({ typ: 'at+jwt', alg: 'ES256' });
    const claims = decodeJwt(reply.body.access_token);
    expect(claims).toMatchObject({
      iss: url,
      sub: account.serviceAccount.id,
      aud: `${url}/api/v1`,
      client_id: account.serviceAccount.clientId,
      scope: 'management',
    });
    expect(claims.sub).toMatch(/^sac_/);
    expect(claims.client_id).toMatch(/^sa_/);
    expect(claims.exp! - claims.iat!).toBeLessThanOrEqual(3600);
    expect(typeof claims.jti).toBe('string');

    const me = await http(url, 'GET', '/me', { token: reply.body.access_token });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({
      id: account.serviceAccount.id,
      email: null,
      name: 'CI editor',
      defaultOrganizationId: org.id,
      kind: 'service_account',
    });
  });

  it('HTTP Basic (RFC 6749 2.3.1, form-urlencoded then base64) → 200; scope=management and resource are accepted', async () => {
    const account = await newServiceAccount(url, admin, org.id, 'viewer');
    const { clientId } = account.serviceAccount;
    const reply = await tokenRequest(
      url,
      { grant_type: 'client_credentials', scope: 'management', resource: `${url}/api/v1` },
      { authorization: basic(clientId, account.clientSecret) },
    );
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(decodeJwt(reply.body.access_token)).toMatchObject({ sub: account.serviceAccount.id, client_id: clientId });
    // The client_id may be repeated in the form when it is the same one.
    const repeated = await tokenRequest(
      url,
      { grant_type: 'client_credentials', client_id: clientId },
      { authorization: basic(clientId, account.clientSecret) },
    );
    expect(repeated.status).toBe(200);
    // The scheme is case-insensitive.
    const lower = await tokenRequest(
      url,
      { grant_type: 'client_credentials' },
      { authorization: basic(clientId, account.clientSecret).replace('Basic', 'basic') },
    );
    expect(lower.status).toBe(200);
  });

  it('with an official OAuth client library (openid-client): discovery, client_secret_basic and client_secret_post', async () => {
    const account = await newServiceAccount(url, admin, org.id, 'viewer');
    const issuer = await Issuer.discover(`${url}/.well-known/oauth-authorization-server`);
    expect(issuer.metadata.token_endpoint).toBe(`${url}/oauth/token`);
    for (const method of ['client_secret_basic', 'client_secret_post'] as const) {
      const client = new issuer.Client({
        client_id: account.serviceAccount.clientId,
        client_secret: account.clientSecret,
        token_endpoint_auth_method: method,
      });
      const tokens = await client.grant({ grant_type: 'client_credentials', scope: 'management' });
      expect(tokens.token_type?.toLowerCase()).toBe('bearer');
      expect(tokens.refresh_token).toBeUndefined();
      expect((await http(url, 'GET', `/organizations/${org.id}`, { token: tokens.access_token })).status).toBe(200);
    }
  });

  it('a wrong, missing or revoked secret, an unknown client id or no client at all → 401 invalid_client; Basic gets a Basic challenge', async () => {
    const account = await newServiceAccount(url, admin, org.id, 'viewer');
    const { clientId, id } = account.serviceAccount;
    const other = await newServiceAccount(url, admin, org.id, 'viewer', 'Other');
    const refusals = [
      await tokenRequest(url, grant(clientId, `pls_${'A'.repeat(43)}`)),
      await tokenRequest(url, grant(clientId, 'not-even-the-format')),
      await tokenRequest(url, grant(clientId)),
      await tokenRequest(url, grant(clientId, '')),
      // Another account's secret with this client id.
      await tokenRequest(url, grant(clientId, other.clientSecret)),
      await tokenRequest(url, grant('sa_00000000000000000000000000', account.clientSecret)),
      await tokenRequest(url, { grant_type: 'client_credentials', client_secret: account.clientSecret }),
    ];
    for (const reply of refusals) {
      expect(reply.status, JSON.stringify(reply.body)).toBe(401);
      expect(reply.body.error).toBe('invalid_client');
      expect(reply.headers.get('www-authenticate')).toBeNull();
    }
    const wrongBasic = await tokenRequest(
      url,
      { grant_type: 'client_credentials' },
      { authorization: basic(clientId, `pls_${'B'.repeat(43)}`) },
    );
    expect(wrongBasic.status).toBe(401);
    expect(wrongBasic.body.error).toBe('invalid_client');
    expect(wrongBasic.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
    for (const header of [
      'Basic',
      'Basic !!!',
      `Basic ${Buffer.from('no-colon').toString('base64')}`,
      `Basic ${Buffer.from(`${clientId}:%zz`).toString('base64')}`,
    ]) {
      const malformed = await tokenRequest(url, { grant_type: 'client_credentials' }, { authorization: header });
      expect(malformed.status, header).toBe(401);
      expect(malformed.body.error).toBe('invalid_client');
      expect(malformed.headers.get('www-authenticate')).toMatch(/^Basic /);
    }

    // Revoked: no new token, and the one already issued is refused on its next request.
    const before = await tokenRequest(url, grant(clientId, account.clientSecret));
    expect(before.status).toBe(200);
    expect((await admin.call('DELETE', `/organizations/${org.id}/service-accounts/${id}`)).status).toBe(200);
    const after = await tokenRequest(url, grant(clientId, account.clientSecret));
    expect(after.status).toBe(401);
    expect(after.body.error).toBe('invalid_client');
    const refused = await http(url, 'GET', '/me', { token: before.body.access_token });
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('unauthorized');
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('a public client asking for the grant → 400 unauthorized_client', async () => {
    const registered = await register({ redirect_uris: ['https://app.example/cb'], client_name: 'A registered app' });
    expect(registered.status).toBe(201);
    for (const clientId of ['promptloop-cli', registered.body.client_id]) {
      const reply = await tokenRequest(url, grant(clientId, 'whatever'));
      expect(reply.status).toBe(400);
      expect(reply.body.error).toBe('unauthorized_client');
      const bare = await tokenRequest(url, { grant_type: 'client_credentials', client_id: clientId });
      expect(bare.status).toBe(400);
      expect(bare.body.error).toBe('unauthorized_client');
    }
  });

  it('both Basic and a form client_secret, another client_id in the form, a wider scope or a foreign resource → 400, no token', async () => {
    const account = await newServiceAccount(url, admin, org.id, 'viewer');
    const { clientId } = account.serviceAccount;
    const auth = { authorization: basic(clientId, account.clientSecret) };
    const both = await tokenRequest(
      url,
      { grant_type: 'client_credentials', client_secret: account.clientSecret },
      auth,
    );
    expect([both.status, both.body.error]).toEqual([400, 'invalid_request']);
    const otherId = await tokenRequest(
      url,
      { grant_type: 'client_credentials', client_id: 'sa_11111111111111111111111111' },
      auth,
    );
    expect([otherId.status, otherId.body.error]).toEqual([400, 'invalid_request']);
    for (const scope of ['admin', 'management admin', '']) {
      const reply = await tokenRequest(url, grant(clientId, account.clientSecret, { scope }));
      expect([reply.status, reply.body.error], scope).toEqual([400, 'invalid_scope']);
    }
    for (const resource of ['https://elsewhere.example/api/v1', `${url}/api`, `${url}/mcp/`]) {
      const reply = await tokenRequest(url, grant(clientId, account.clientSecret, { resource }));
      expect([reply.status, reply.body.error], resource).toEqual([400, 'invalid_target']);
    }
    const duplicated = await fetch(`${url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=client_credentials&client_id=${clientId}&client_secret=${account.clientSecret}&client_secret=${account.clientSecret}`,
    });
    expect(duplicated.status).toBe(400);
    expect((await duplicated.json()).error).toBe('invalid_request');
  });

  it('resource=/mcp: the token is refused by /api/v1 and accepted by /mcp (the MCP SDK’s client_credentials provider)', async () => {
    const account = await newServiceAccount(url, admin, org.id, 'viewer');
    const { clientId } = account.serviceAccount;
    const mcpToken = await tokenRequest(url, grant(clientId, account.clientSecret, { resource: `${url}/mcp` }));
    expect(mcpToken.status).toBe(200);
    expect(decodeJwt(mcpToken.body.access_token).aud).toBe(`${url}/mcp`);
    const refused = await http(url, 'GET', '/me', { token: mcpToken.body.access_token });
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toContain(
      `issued for another resource; request a token with resource=${url}/api/v1`,
    );
    // The /api/v1 token is refused by /mcp.
    const apiToken = await tokenRequest(url, grant(clientId, account.clientSecret));
    const wrong = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiToken.body.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(wrong.status).toBe(401);
    await wrong.body?.cancel();

    // The SDK discovers the resource metadata, asks /oauth/token with Basic and resource=/mcp.
    const provider = new ClientCredentialsProvider({
      clientId,
      clientSecret: account.clientSecret,
      scope: 'management',
      expectedIssuer: url,
    });
    const client = new Client({ name: 'ci-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { authProvider: provider }));
    try {
      const result = await client.callTool({ name: 'get_profile', arguments: {} });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({
        id: account.serviceAccount.id,
        kind: 'service_account',
        defaultOrganizationId: org.id,
      });
      expect(decodeJwt(provider.tokens()!.access_token).aud).toBe(`${url}/mcp`);
    } finally {
      await client.close();
    }
  });

  it('lastUsedAt is set by the token request and kept current by API calls', async () => {
    const account = await newServiceAccount(url, admin, org.id, 'viewer');
    const { id } = account.serviceAccount;
    const db = await getDb();
    const [afterToken] = await db
      .select({ lastUsedAt: serviceAccounts.lastUsedAt })
      .from(serviceAccounts)
      .where(eq(serviceAccounts.id, id));
    expect(afterToken.lastUsedAt).toBeInstanceOf(Date);
    // Pretend the last use was an hour ago: the next call brings it up to date.
    await db
      .update(serviceAccounts)
      .set({ lastUsedAt: new Date(Date.now() - 3600_000) })
      .where(eq(serviceAccounts.id, id));
    const me = await account.actor.call('GET', '/me');
    expect(me.status).toBe(200);
    const listed = await admin.call('GET', `/organizations/${org.id}/service-accounts/${id}`);
    expect(Date.now() - Date.parse(listed.body.lastUsedAt)).toBeLessThan(60_000);
  });

  it('the authorization server metadata lists the grant and the two client authentication methods', async () => {
    const metadata = await (await fetch(`${url}/.well-known/oauth-authorization-server`)).json();
    expect(metadata.grant_types_supported).toEqual(
      expect.arrayContaining(['authorization_code', 'refresh_token', 'client_credentials']),
    );
    expect(metadata.token_endpoint_auth_methods_supported).toEqual(
      expect.arrayContaining(['none', 'client_secret_basic', 'client_secret_post']),
    );
  });

  it('the token endpoint’s rate limit applies to client_credentials too (429 with Retry-After)', async () => {
    const account = await newServiceAccount(url, admin, org.id, 'viewer');
    process.env.OAUTH_TOKEN_RATE_LIMIT_PER_MINUTE = '2';
    try {
      const ask = () => form(tokenRoute, grant(account.serviceAccount.clientId, account.clientSecret), 'sa-rate-limit');
      expect((await ask()).status).toBe(200);
      expect((await ask()).status).toBe(200);
      const limited = await ask();
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      delete process.env.OAUTH_TOKEN_RATE_LIMIT_PER_MINUTE;
    }
  });
});
