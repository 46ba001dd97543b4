import { createHmac, timingSafeEqual } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { oauthCodes, oauthConsents } from '@/db/schema';
import { sessionSecret } from '../credentials/session-secret';
import { stringProblem } from '../input-hygiene';
import { findClient, redirectUriAllowed, type Client } from './clients';
import type { OAuthErrorCode } from './errors';
import { codeTtlMs, endpoints, isKnownResource, supportedScopes } from './issuer';
import { digest, newSecret } from './secrets';

// GET /oauth/authorize (RFC 6749 section 4.1.1 with PKCE, RFC 7636, and RFC 8707 `resource`).
// The client and its redirect URI are checked first: when either is wrong the person sees an error
// page and is never sent anywhere (section 4.1.2.1). Every later problem goes back to the client as
// an error redirect with `state` and `iss` (RFC 9207).
export type AuthorizeRequest = {
  client: Client;
  redirectUri: string;
  state: string | null;
  scope: string;
  resource: string | null;
  codeChallenge: string;
};

export type AuthorizeCheck =
  | { kind: 'error_page'; title: string; message: string }
  | { kind: 'error_redirect'; location: string }
  | { kind: 'ok'; request: AuthorizeRequest };

export const authorizeParams = [
  'response_type',
  'client_id',
  'redirect_uri',
  'code_challenge',
  'code_challenge_method',
  'state',
  'scope',
  'resource',
] as const;

// Only one value per parameter and only storable strings; a parameter that is wrong here is treated
// as absent by the caller's checks.
function single(all: URLSearchParams, name: string): { value: string | null; problem: string | null } {
  const values = all.getAll(name);
  if (values.length === 0) return { value: null, problem: null };
  if (values.length > 1) return { value: null, problem: `Parameter "${name}" is given more than once.` };
  if (stringProblem(values[0]) || values[0].length > 4096)
    return { value: null, problem: `Parameter "${name}" contains characters that are not allowed or is too long.` };
  return { value: values[0], problem: null };
}

function redirectWith(redirectUri: string, params: Record<string, string | null>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== null) url.searchParams.set(name, value);
  url.searchParams.set('iss', endpoints().issuer);
  return url.toString();
}

export function errorRedirect(
  request: Pick<AuthorizeRequest, 'redirectUri' | 'state'>,
  error: OAuthErrorCode,
  description: string,
): string {
  return redirectWith(request.redirectUri, { error, error_description: description, state: request.state });
}

const challengePattern = /^[A-Za-z0-9_-]{43}$/;

export async function checkAuthorizeRequest(db: Db, all: URLSearchParams): Promise<AuthorizeCheck> {
  const clientId = single(all, 'client_id');
  const redirect = single(all, 'redirect_uri');
  if (!clientId.value)
    return {
      kind: 'error_page',
      title: 'Unknown application',
      message: clientId.problem ?? 'The request does not say which application is asking (client_id is missing).',
    };
  const client = await findClient(db, clientId.value);
  if (!client)
    return {
      kind: 'error_page',
      title: 'Unknown application',
      message: 'The application asking for access is not registered with Promptloop.',
    };
  if (!redirect.value)
    return {
      kind: 'error_page',
      title: 'Invalid redirect',
      message: redirect.problem ?? 'The request does not say where to return (redirect_uri is missing).',
    };
  if (!redirectUriAllowed(client, redirect.value)) {
    return {
      kind: 'error_page',
      title: 'Invalid redirect',
      message: `The return address is not registered for ${client.name}, so Promptloop will not send you there.`,
    };
  }

  const state = single(all, 'state');
  const base = { redirectUri: redirect.value, state: state.value };
  const fail = (error: OAuthErrorCode, description: string): AuthorizeCheck => ({
    kind: 'error_redirect',
    location: errorRedirect(base, error, description),
  });
  for (const name of authorizeParams) {
    const { problem } = single(all, name);
    if (problem) return fail('invalid_request', problem);
  }
  const responseType = all.get('response_type');
  if (!responseType) return fail('invalid_request', 'Parameter "response_type" is required.');
  if (responseType !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported.');
  const challenge = all.get('code_challenge');
  const method = all.get('code_challenge_method');
  if (!challenge)
    return fail('invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256.');
  if (method !== 'S256')
    return fail('invalid_request', 'PKCE with code_challenge_method=S256 is required; "plain" is not accepted.');
  if (!challengePattern.test(challenge))
    return fail('invalid_request', 'code_challenge must be the 43-character base64url SHA-256 of the code verifier.');
  const scopes = (all.get('scope') ?? 'management').split(' ').filter(Boolean);
  if (scopes.length === 0 || scopes.some((s) => !supportedScopes.includes(s)))
    return fail('invalid_scope', `The only scope is "${supportedScopes.join(' ')}".`);
  const resource = all.get('resource');
  if (resource !== null && !isKnownResource(resource))
    return fail('invalid_target', "resource must be this service's /api/v1 or /mcp URL.");
  return {
    kind: 'ok',
    request: {
      client,
      redirectUri: redirect.value,
      state: state.value,
      scope: [...new Set(scopes)].join(' '),
      resource,
      codeChallenge: challenge,
    },
  };
}

export async function hasConsent(db: Db, userId: string, request: AuthorizeRequest): Promise<boolean> {
  const [row] = await db
    .select({ scope: oauthConsents.scope })
    .from(oauthConsents)
    .where(and(eq(oauthConsents.userId, userId), eq(oauthConsents.clientId, request.client.id)));
  if (!row) return false;
  const granted = row.scope.split(' ');
  return request.scope.split(' ').every((s) => granted.includes(s));
}

export async function rememberConsent(db: Db, userId: string, request: AuthorizeRequest): Promise<void> {
  await db
    .insert(oauthConsents)
    .values({ userId, clientId: request.client.id, scope: request.scope })
    .onConflictDoUpdate({ target: [oauthConsents.userId, oauthConsents.clientId], set: { scope: request.scope } });
}

// A single-use code that lives 60 seconds; the redirect that carries it.
export async function issueCode(db: Db, userId: string, request: AuthorizeRequest): Promise<string> {
  const code = newSecret('plc_');
  await db.insert(oauthCodes).values({
    codeDigest: digest(code),
    userId,
    clientId: request.client.id,
    redirectUri: request.redirectUri,
    scope: request.scope,
    resource: request.resource,
    codeChallenge: request.codeChallenge,
    expiresAt: new Date(Date.now() + codeTtlMs),
  });
  return redirectWith(request.redirectUri, { code, state: request.state });
}

// The consent form's anti-forgery token: an HMAC over the person and the exact request, valid for
// 10 minutes. The decision handler also requires a same-origin Origin header.
const consentTtlMs = 10 * 60_000;

function consentMac(userId: string, issuedAt: number, query: string): string {
  const secret = process.env.OAUTH_KEY_SECRET || sessionSecret() || '';
  return createHmac('sha256', secret).update(`consent\n${userId}\n${issuedAt}\n${query}`).digest('base64url');
}

// The request's parameters in a fixed order, so the token does not depend on how they were written.
export function canonicalQuery(all: URLSearchParams): string {
  const out = new URLSearchParams();
  for (const name of authorizeParams) {
    const value = all.get(name);
    if (value !== null) out.set(name, value);
  }
  return out.toString();
}

export function consentToken(userId: string, all: URLSearchParams, now = Date.now()): string {
  return `${now}.${consentMac(userId, now, canonicalQuery(all))}`;
}

export function consentTokenValid(token: string, userId: string, all: URLSearchParams, now = Date.now()): boolean {
  const [issued, mac] = token.split('.');
  const issuedAt = Number(issued);
  if (!Number.isSafeInteger(issuedAt) || !mac || now - issuedAt > consentTtlMs || issuedAt > now + 60_000) return false;
  const expected = Buffer.from(consentMac(userId, issuedAt, canonicalQuery(all)));
  const given = Buffer.from(mac);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
