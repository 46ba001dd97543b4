import { createHash, randomBytes } from 'node:crypto';
import { getDb } from '@/db/client';
import { users } from '@/db/schema';
import { newId } from '@/server/ids';
import { consentToken } from '@/server/oauth/authorize';
import { authorizeRoute, decisionRoute, registerRoute, revokeRoute, tokenRoute } from '@/server/oauth/endpoints';

// The built-in authorization server, driven in-process with real Requests (as Next calls the
// route handlers). Test files that use it call useBuiltInIssuer() at the top, before any config().
export const appUrl = 'http://localhost:3999';
export const apiResource = `${appUrl}/api/v1`;
export const mcpResource = `${appUrl}/mcp`;
export const cliRedirect = 'http://127.0.0.1:53682/callback';

export function useBuiltInIssuer(): void {
  process.env.OAUTH_ISSUER = appUrl;
  delete process.env.OAUTH_JWKS_URL;
}

export function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export async function newBuiltInUser(): Promise<string> {
  const id = newId('usr');
  await (await getDb()).insert(users).values({ id, email: `${id}@example.test`, name: 'OAuth Tester' });
  return id;
}

export function authorizeUrl(params: Record<string, string | undefined>): string {
  const url = new URL(`${appUrl}/oauth/authorize`);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return url.toString();
}

export function cliParams(challenge: string, extra: Record<string, string | undefined> = {}) {
  return {
    response_type: 'code',
    client_id: 'promptloop-cli',
    redirect_uri: cliRedirect,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'st-123',
    scope: 'management',
    ...extra,
  };
}

export async function authorize(url: string, userId: string | null): Promise<Response> {
  return authorizeRoute(await getDb(), new Request(url), userId);
}

// The consent page's form as the browser posts it.
export async function decide(
  params: Record<string, string | undefined>,
  userId: string,
  decision: 'allow' | 'deny',
  headers: Record<string, string> = {},
): Promise<Response> {
  const all = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined));
  const body = new URLSearchParams(all);
  body.set('consent_token', consentToken(userId, all));
  body.set('decision', decision);
  return decisionRoute(
    await getDb(),
    new Request(`${appUrl}/oauth/authorize`, {
      method: 'POST',
      headers: { origin: appUrl, 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body,
    }),
    userId,
  );
}

export function location(response: Response): URL {
  const value = response.headers.get('location');
  if (!value) throw new Error(`no redirect (status ${response.status})`);
  return new URL(value);
}

// Authorize + Allow: the code from the redirect.
export async function codeFor(userId: string, params: Record<string, string | undefined>): Promise<string> {
  const first = await authorize(authorizeUrl(params), userId);
  const response = location(first).pathname === '/oauth/consent' ? await decide(params, userId, 'allow') : first;
  const code = location(response).searchParams.get('code');
  if (!code) throw new Error(`no code: ${response.headers.get('location')}`);
  return code;
}

export type TokenReply = { status: number; headers: Headers; body: any };

export async function form(
  route: typeof tokenRoute,
  params: Record<string, string | undefined>,
  ip = 'test-oauth',
): Promise<TokenReply> {
  const body = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined));
  const response = await route(
    await getDb(),
    new Request(`${appUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-promptloop-client-ip': ip },
      body,
    }),
  );
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

export const token = (params: Record<string, string | undefined>, ip?: string) => form(tokenRoute, params, ip);
export const revoke = (params: Record<string, string | undefined>, ip?: string) => form(revokeRoute, params, ip);

export async function register(
  body: unknown,
  ip = 'test-register',
  contentType = 'application/json',
): Promise<TokenReply> {
  const response = await registerRoute(
    await getDb(),
    new Request(`${appUrl}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': contentType, 'x-promptloop-client-ip': ip },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }),
  );
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

// The whole flow for the CLI client: tokens for a user.
export async function cliTokens(userId: string, extra: Record<string, string | undefined> = {}) {
  const { verifier, challenge } = pkce();
  const code = await codeFor(userId, cliParams(challenge, extra));
  const reply = await token({
    grant_type: 'authorization_code',
    code,
    redirect_uri: cliRedirect,
    client_id: 'promptloop-cli',
    code_verifier: verifier,
    resource: extra.resource,
  });
  if (reply.status !== 200) throw new Error(`token: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body as {
    access_token: string;
    refresh_token: string;
    expires_in: number;
    scope: string;
    token_type: string;
  };
}
