import { getDb } from '@/db/client';
import { consentToken } from '@/server/oauth/authorize';
import {
  authorizeRoute,
  decisionRoute,
  metadataResponse,
  protectedResourceResponse,
  tokenRoute,
  jwksResponse,
} from '@/server/oauth/endpoints';
import { handleMcp } from '@/server/mcp/server';
import { startAppServer, type AppServer } from './cli';
import { closedPort } from './net';
import { cliParams, cliRedirect, newBuiltInUser, pkce } from './oauth';
import { apiRequest, apiResult, createdOrganizations, type ApiResult, type CallOptions, type TestUser } from './api';

// The whole app with the built-in authorization server behind a real node:http listener whose
// origin is APP_URL (so the issuer, the audiences and the resource metadata all name it): /api/v1,
// /oauth/token, the metadata documents and /mcp. Call startStack() in beforeAll, before any config().

export type Stack = AppServer & { url: string };

export async function startStack(): Promise<Stack> {
  const port = await closedPort();
  const url = `http://127.0.0.1:${port}`;
  process.env.APP_URL = url;
  process.env.OAUTH_ISSUER = url;
  process.env.OAUTH_AUDIENCE = `${url}/api/v1`;
  delete process.env.OAUTH_JWKS_URL;
  const db = await getDb();
  const extra = async (request: Request): Promise<Response | null> => {
    const { pathname } = new URL(request.url);
    if (pathname === '/.well-known/oauth-authorization-server') return metadataResponse();
    if (pathname === '/.well-known/oauth-protected-resource') return protectedResourceResponse('api');
    if (pathname === '/.well-known/oauth-protected-resource/mcp') return protectedResourceResponse('mcp');
    if (pathname === '/oauth/jwks') return jwksResponse();
    if (pathname === '/oauth/token' && request.method === 'POST') return tokenRoute(db, request);
    if (pathname === '/mcp') return handleMcp(request);
    return null;
  };
  const app = await startAppServer([extra], { port, origin: url });
  return { ...app, url };
}

/** A call to /api/v1 over real HTTP. */
export async function http<T = any>(
  url: string,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<ApiResult<T>> {
  return apiResult<T>(await fetch(apiRequest(url, method, path, options)));
}

/** POST /oauth/token over real HTTP. */
export async function tokenRequest(
  url: string,
  form: Record<string, string | undefined>,
  headers: Record<string, string> = {},
) {
  const body = new URLSearchParams(Object.entries(form).filter((e): e is [string, string] => e[1] !== undefined));
  const response = await fetch(`${url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body,
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

/** RFC 6749 section 2.3.1: each part form-urlencoded, then base64 of `id:secret`. */
export function basic(clientId: string, secret: string): string {
  const encode = (value: string) => new URLSearchParams({ v: value }).toString().slice(2);
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(secret)}`).toString('base64')}`;
}

/** A service account's access token through client_credentials (form fields). */
export async function serviceAccountToken(
  url: string,
  clientId: string,
  clientSecret: string,
  resource?: string,
): Promise<string> {
  const reply = await tokenRequest(url, {
    grant_type: 'client_credentials',
    client_id: clientId,
    client_secret: clientSecret,
    resource,
  });
  if (reply.status !== 200) throw new Error(`client_credentials: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body.access_token;
}

/** A person of the built-in issuer with an access token from the real flow (authorize, Allow, code). */
export async function builtInUser(url: string): Promise<TestUser> {
  const id = await newBuiltInUser();
  const db = await getDb();
  const { verifier, challenge } = pkce();
  const params = new URLSearchParams(cliParams(challenge, { resource: `${url}/api/v1` }));
  const first = await authorizeRoute(db, new Request(`${url}/oauth/authorize?${params}`), id);
  const form = new URLSearchParams(params);
  form.set('consent_token', consentToken(id, params));
  form.set('decision', 'allow');
  const decided = new URL(first.headers.get('location')!).pathname.startsWith('/oauth/consent')
    ? await decisionRoute(
        db,
        new Request(`${url}/oauth/authorize`, {
          method: 'POST',
          headers: { origin: url, 'content-type': 'application/x-www-form-urlencoded' },
          body: form,
        }),
        id,
      )
    : first;
  const code = new URL(decided.headers.get('location')!).searchParams.get('code');
  if (!code) throw new Error(`no code: ${decided.headers.get('location')}`);
  const reply = await tokenRequest(url, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: cliRedirect,
    client_id: 'promptloop-cli',
    code_verifier: verifier,
  });
  if (reply.status !== 200) throw new Error(`token: ${reply.status} ${JSON.stringify(reply.body)}`);
  const token = reply.body.access_token as string;
  return {
    sub: id,
    id,
    email: `${id}@example.test`,
    token,
    call: (method, path, rest = {}) => http(url, method, path, { ...rest, token }),
  };
}

/** An organization with a built-in admin, editor and viewer. */
export async function builtInTeam(url: string) {
  const [admin, editor, viewer] = [await builtInUser(url), await builtInUser(url), await builtInUser(url)];
  const created = await admin.call('POST', '/organizations', { body: { name: `SA org ${admin.id.slice(-6)}` } });
  if (created.status !== 201) throw new Error(`create org: ${created.status} ${JSON.stringify(created.body)}`);
  const org = created.body as { id: string; name: string };
  createdOrganizations.add(org.id);
  for (const [user, role] of [
    [editor, 'editor'],
    [viewer, 'viewer'],
  ] as const) {
    const added = await admin.call('POST', `/organizations/${org.id}/members`, { body: { email: user.email, role } });
    if (added.status !== 201) throw new Error(`add member: ${added.status} ${JSON.stringify(added.body)}`);
  }
  return { org, admin, editor, viewer };
}

export type CreatedAccount = {
  serviceAccount: {
    id: string;
    clientId: string;
    name: string;
    role: string;
    lastUsedAt: string | null;
    revokedAt: string | null;
  };
  clientSecret: string;
};

/** Creates a service account as `admin` and returns it with a token and a TestUser-like caller. */
export async function newServiceAccount(
  url: string,
  admin: TestUser,
  organizationId: string,
  role: 'admin' | 'editor' | 'viewer',
  name = `CI ${role}`,
) {
  const created = await admin.call<CreatedAccount>('POST', `/organizations/${organizationId}/service-accounts`, {
    body: { name, role },
  });
  if (created.status !== 201)
    throw new Error(`create service account: ${created.status} ${JSON.stringify(created.body)}`);
  const { serviceAccount, clientSecret } = created.body;
  const token = await serviceAccountToken(url, serviceAccount.clientId, clientSecret);
  const actor: TestUser = {
    sub: serviceAccount.id,
    id: serviceAccount.id,
    email: '',
    token,
    call: (method, path, rest = {}) => http(url, method, path, { ...rest, token }),
  };
  return { ...created.body, token, actor };
}
