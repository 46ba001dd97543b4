import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import type { Db } from '@/db/client';
import { config } from '../config';
import { AppError } from '../errors';
import type { Actor } from '../context';
import { provisionOAuthUser } from '../account/service';

// Asymmetric algorithms only: "none" and shared-secret HMAC tokens are never accepted.
export const allowedAlgorithms = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
export const managementScope = 'management';

export function resourceMetadataUrl(): string {
  return `${config().appUrl}/.well-known/oauth-protected-resource`;
}

function challenge(extra?: string): Record<string, string> {
  const parts = [extra, `resource_metadata="${resourceMetadataUrl()}"`].filter(Boolean);
  return { 'www-authenticate': `Bearer ${parts.join(', ')}` };
}

export const missingToken = () => new AppError('unauthorized', 'Send an OAuth access token as Authorization: Bearer <token>.', {}, challenge());
const invalidToken = (why: string) => new AppError('unauthorized', `The access token is not valid: ${why}.`, {}, challenge('error="invalid_token"'));
const insufficientScope = () =>
  new AppError('insufficient_scope', 'The access token lacks the management scope.', { requiredScope: managementScope }, challenge(`error="insufficient_scope", scope="${managementScope}"`));

// RFC 8414: the well-known segment goes between the host and the issuer's path.
function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  return [`${url.origin}/.well-known/oauth-authorization-server${path}`, `${url.origin}${path}/.well-known/openid-configuration`];
}

let keySet: { url: string; jwks: ReturnType<typeof createRemoteJWKSet> } | undefined;

async function jwksUrl(): Promise<string> {
  const cfg = config();
  if (cfg.oauthJwksUrl) return cfg.oauthJwksUrl;
  for (const url of metadataUrls(cfg.oauthIssuer)) {
    const response = await fetch(url, { signal: AbortSignal.timeout(5000) }).catch(() => null);
    if (!response?.ok) continue;
    const metadata = (await response.json().catch(() => null)) as { jwks_uri?: unknown } | null;
    if (typeof metadata?.jwks_uri === 'string') return metadata.jwks_uri;
  }
  throw new AppError('unavailable', 'The OAuth issuer metadata could not be read.', {}, { 'retry-after': '5' });
}

async function getKeySet() {
  if (!keySet) {
    const url = await jwksUrl();
    keySet = { url, jwks: createRemoteJWKSet(new URL(url), { timeoutDuration: 5000, cooldownDuration: 30_000, cacheMaxAge: 10 * 60_000 }) };
  }
  return keySet.jwks;
}

export function bearerToken(request: Request): string | null {
  const header = request.headers.get('authorization');
  if (!header) return null;
  const match = /^Bearer(?:\s+(.*))?$/i.exec(header.trim());
  if (!match) return null;
  return match[1]?.trim() ?? '';
}

async function verify(token: string): Promise<JWTPayload> {
  const cfg = config();
  try {
    const { payload } = await jwtVerify(token, await getKeySet(), {
      issuer: cfg.oauthIssuer,
      audience: cfg.oauthAudience,
      typ: 'at+jwt',
      algorithms: allowedAlgorithms,
      requiredClaims: ['sub', 'exp', 'iat', 'client_id'],
    });
    return payload;
  } catch (error) {
    if (error instanceof AppError) throw error;
    if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid || error instanceof TypeError) {
      throw new AppError('unavailable', 'The OAuth signing keys could not be fetched.', {}, { 'retry-after': '5' });
    }
    if (error instanceof errors.JWTExpired) throw invalidToken('it has expired');
    if (error instanceof errors.JWTClaimValidationFailed) throw invalidToken(`claim "${error.claim}" ${error.reason === 'missing' ? 'is missing' : 'is not accepted'}`);
    if (error instanceof errors.JOSEAlgNotAllowed) throw invalidToken('its signing algorithm is not allowed');
    if (error instanceof errors.JOSEError) throw invalidToken('its signature or format is wrong');
    throw error;
  }
}

// A verified token becomes an Actor; membership and role are checked by each service call.
export async function authenticateManagement(db: Db, request: Request, audience: 'api' | 'mcp' = 'api'): Promise<Actor> {
  const token = bearerToken(request);
  if (token === null) throw missingToken();
  if (token === '') throw invalidToken('it is empty');
  const payload = await verify(token);
  if (typeof payload.sub !== 'string' || !payload.sub || typeof payload.client_id !== 'string' || !payload.client_id) {
    throw invalidToken('sub and client_id must be strings');
  }
  const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ') : [];
  if (!scopes.includes(managementScope)) throw insufficientScope();
  const cfg = config();
  const userId = await provisionOAuthUser(db, {
    issuer: cfg.oauthIssuer,
    subject: payload.sub,
    email: typeof payload.email === 'string' ? payload.email : undefined,
    emailVerified: payload.email_verified === true,
    name: typeof payload.name === 'string' ? payload.name : undefined,
    builtInIssuer: cfg.oauthIssuer === cfg.appUrl,
  }).catch((error: unknown) => {
    throw error instanceof AppError && error.code === 'unauthorized' ? invalidToken('its subject is unknown') : error;
  });
  // Agents reach us through /mcp; people use the CLI against /api/v1.
  return { userId, clientId: payload.client_id, human: audience === 'api' };
}
