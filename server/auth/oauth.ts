import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import type { Db } from '@/db/client';
import { config } from '../config';
import { AppError } from '../errors';
import { log } from '../log';
import { hygieneIssues } from '../input-hygiene';
import type { Actor } from '../context';
import { provisionOAuthUser } from '../account/service';
import { grantClaim, grantIsLive } from '../oauth/grants';
import { isBuiltInIssuer, managementScope } from '../oauth/issuer';

import { publishedKeys } from '../oauth/keys';
import { liveServiceAccount } from '../credentials/service-accounts';
import { isId } from '../ids';
import { cliClientId } from '../oauth/clients';

// Asymmetric algorithms only: "none" and shared-secret HMAC tokens are never accepted.
const allowedAlgorithms = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

// The two protected resources: the management API and the MCP endpoint. A token names one of them
// in `aud` and is refused by the other (API.md "Built-in authorization server").
export type Audience = 'api' | 'mcp';

function audienceUrl(audience: Audience): string {
  const cfg = config();
  return audience === 'mcp' ? `${cfg.appUrl}/mcp` : cfg.oauthAudience;
}

function resourceMetadataUrl(audience: Audience = 'api'): string {
  return `${config().appUrl}/.well-known/oauth-protected-resource${audience === 'mcp' ? '/mcp' : ''}`;
}

function challenge(audience: Audience, extra?: string): Record<string, string> {
  const parts = [extra, `resource_metadata="${resourceMetadataUrl(audience)}"`].filter(Boolean);
  return { 'www-authenticate': `Bearer ${parts.join(', ')}` };
}

const missingToken = (audience: Audience = 'api') =>
  new AppError('unauthorized', 'Send an OAuth access token as Authorization: Bearer <token>.', {}, challenge(audience));
const invalidToken = (why: string, audience: Audience = 'api') =>
  new AppError(
    'unauthorized',
    `The access token is not valid: ${why}.`,
    {},
    challenge(audience, 'error="invalid_token"'),
  );
const insufficientScope = (audience: Audience) =>
  new AppError(
    'insufficient_scope',
    'The access token lacks the management scope.',
    { requiredScope: managementScope },
    challenge(audience, `error="insufficient_scope", scope="${managementScope}"`),
  );

// RFC 8414 section 3.1: the well-known segment goes between the host and the issuer's path, with a
// terminating "/" of the path removed; then OpenID Connect discovery, which appends it to the path.
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, '');
  return [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}${path}/.well-known/openid-configuration`,
  ];
}

// Signing keys are fetched by us and verified locally. A provider that cannot be reached (refused,
// timeout, non-200, not JSON, no keys) is 503 unavailable with Retry-After, never 401: the token
// may be perfectly good, and a client told 401 throws it away. A failure is remembered for
// `failureCacheMs`, so an outage costs one outbound attempt per window, not one per request.
// A token whose key we do not know makes us fetch the keys again (the provider may have rotated):
// at most once per `unknownKeyCooldownMs`. A request that arrives within it waits for the next
// fetch instead of being refused, so a valid token signed with a just-published key always passes,
// and a flood of made-up key ids costs the provider one fetch a second.
const keysTtlMs = 10 * 60_000;
const unknownKeyCooldownMs = 1_000;
const failureCacheMs = 10_000;

type KeyCache = { keySet: ReturnType<typeof createLocalJWKSet>; fetchedAt: number };
let keys: KeyCache | undefined;
let discoveredJwksUrl: string | undefined; // from the metadata: read again with every full refresh
let lastAttemptAt = 0;
let attempts = 0; // fetches started: tells a waiting request whether another fetched meanwhile
let failedUntil = 0;
let loading: Promise<KeyCache> | undefined;

class ProviderFailure extends Error {}

function providerUnavailable(now = Date.now()): AppError {
  const seconds = Math.max(1, Math.ceil((failedUntil - now) / 1000));
  return new AppError(
    'unavailable',
    'The identity provider cannot be reached to check the access token. Retry shortly.',
    { retryAfterSeconds: seconds },
    { 'retry-after': String(seconds) },
  );
}

async function fetchJson(url: string): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(config().oauthFetchTimeoutMs),
    });
  } catch (error) {
    throw new ProviderFailure(
      `${url}: ${(error as Error).name === 'TimeoutError' ? 'timed out' : 'could not connect'}`,
      { cause: error },
    );
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => {});
    throw new ProviderFailure(`${url}: status ${response.status}`);
  }
  try {
    return await response.json();
  } catch (error) {
    throw new ProviderFailure(`${url}: not JSON`, { cause: error });
  }
}

async function discoverJwksUrl(issuer: string): Promise<string> {
  const problems: string[] = [];
  for (const url of metadataUrls(issuer)) {
    try {
      const metadata = (await fetchJson(url)) as { issuer?: unknown; jwks_uri?: unknown } | null;
      // RFC 8414 section 3.3: the metadata must name exactly the issuer it was fetched for.
      if (metadata?.issuer !== undefined && metadata.issuer !== issuer)
        problems.push(`${url}: issuer ${JSON.stringify(metadata.issuer)} is not ${JSON.stringify(issuer)}`);
      else if (typeof metadata?.jwks_uri === 'string') return metadata.jwks_uri;
      else problems.push(`${url}: no jwks_uri`);
    } catch (error) {
      problems.push((error as Error).message);
    }
  }
  throw new ProviderFailure(`metadata of ${issuer} could not be read (${problems.join('; ')})`);
}

async function fetchKeys(rediscover: boolean): Promise<KeyCache> {
  lastAttemptAt = Date.now();
  attempts += 1;
  const cfg = config();
  try {
    if (rediscover) discoveredJwksUrl = undefined;
    const jwksUrl =
      cfg.oauthJwksUrl ?? discoveredJwksUrl ?? (discoveredJwksUrl = await discoverJwksUrl(cfg.oauthIssuer));
    const body = (await fetchJson(jwksUrl)) as { keys?: unknown } | null;
    if (!Array.isArray(body?.keys) || body.keys.length === 0) throw new ProviderFailure(`${jwksUrl}: no keys`);
    let keySet: KeyCache['keySet'];
    try {
      keySet = createLocalJWKSet(body as never);
    } catch (error) {
      throw new ProviderFailure(`${jwksUrl}: not a JWK set`, { cause: error });
    }
    keys = { keySet, fetchedAt: Date.now() };
    failedUntil = 0;
    return keys;
  } catch (error) {
    failedUntil = Date.now() + failureCacheMs;
    log.warn({ err: error, issuer: cfg.oauthIssuer, retryInMs: failureCacheMs }, 'identity provider keys unavailable');
    throw providerUnavailable();
  }
}

// One load at a time per process; concurrent requests wait for it. An unknown kid refetches only
// the JWKS; an expired cache reads the metadata again too.
function loadKeys(rediscover: boolean): Promise<KeyCache> {
  loading ??= fetchKeys(rediscover).finally(() => {
    loading = undefined;
  });
  return loading;
}

// Keys fetched after this call began: the next fetch, waiting out the cooldown of the last one, or
// the fetch another request started meanwhile.
async function keysFetchedFromNow(): Promise<KeyCache> {
  const before = attempts;
  const wait = lastAttemptAt + unknownKeyCooldownMs - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(wait, unknownKeyCooldownMs)));
  if (attempts !== before) {
    if (loading) return loading;
    if (Date.now() < failedUntil) throw providerUnavailable();
    if (keys && failedUntil === 0) return keys;
  }
  return loadKeys(false);
}

async function currentKeys(): Promise<KeyCache> {
  const now = Date.now();
  if (keys && now - keys.fetchedAt < keysTtlMs) return keys;
  if (now < failedUntil) throw providerUnavailable(now);
  return loadKeys(true);
}

function bearerToken(request: Request): string | null {
  const header = request.headers.get('authorization');
  if (!header) return null;
  const match = /^Bearer(?:\s+(.*))?$/i.exec(header.trim());
  if (!match) return null;
  return match[1]?.trim() ?? '';
}

function tokenProblem(error: unknown, audience: Audience): AppError {
  if (error instanceof errors.JWTExpired) return invalidToken('it has expired', audience);
  if (error instanceof errors.JWTClaimValidationFailed && error.claim === 'aud' && error.reason !== 'missing')
    return invalidToken(
      `it was issued for another resource; request a token with resource=${audienceUrl(audience)}`,
      audience,
    );
  if (error instanceof errors.JWTClaimValidationFailed)
    return invalidToken(
      `claim "${error.claim}" ${error.reason === 'missing' ? 'is missing' : 'is not accepted'}`,
      audience,
    );
  if (error instanceof errors.JOSEAlgNotAllowed) return invalidToken('its signing algorithm is not allowed', audience);
  if (error instanceof errors.JWKSNoMatchingKey) return invalidToken('its signing key is not known', audience);
  if (error instanceof errors.JOSEError) return invalidToken('its signature or format is wrong', audience);
  throw error;
}

async function verify(token: string, audience: Audience): Promise<JWTPayload> {
  const cfg = config();
  const options = {
    issuer: cfg.oauthIssuer,
    audience: audienceUrl(audience),
    typ: 'at+jwt',
    algorithms: allowedAlgorithms,
    requiredClaims: ['sub', 'exp', 'iat', 'client_id'],
  };
  // Something that is not a JWT at all is refused without the provider: an outage makes it no better.
  try {
    decodeProtectedHeader(token);
    decodeJwt(token);
  } catch {
    throw invalidToken('it is not a JWT', audience);
  }
  // The built-in issuer's keys are read from our own database: no HTTP round trip to ourselves.
  if (isBuiltInIssuer()) return verifyBuiltIn(token, options, audience);
  const cache = await currentKeys();
  try {
    return (await jwtVerify(token, cache.keySet, options)).payload;
  } catch (error) {
    if (!(error instanceof errors.JWKSNoMatchingKey)) throw tokenProblem(error, audience);
    // A key we do not know: the provider may have rotated. After a failed fetch, its failure window
    // (the Retry-After the 503 gave) holds; a client that waited as told is not refused.
    const now = Date.now();
    if (now < failedUntil) throw providerUnavailable(now);
  }
  const fresh = await keysFetchedFromNow();
  try {
    return (await jwtVerify(token, fresh.keySet, options)).payload;
  } catch (error) {
    throw tokenProblem(error, audience);
  }
}

async function verifyBuiltIn(
  token: string,
  options: Parameters<typeof jwtVerify>[2],
  audience: Audience,
): Promise<JWTPayload> {
  try {
    return (await jwtVerify(token, (await publishedKeys()).keySet, options)).payload;
  } catch (error) {
    if (!(error instanceof errors.JWKSNoMatchingKey)) throw tokenProblem(error, audience);
  }
  // A key made by another process since this one last read the key table.
  try {
    return (await jwtVerify(token, (await publishedKeys({ fresh: true })).keySet, options)).payload;
  } catch (error) {
    throw tokenProblem(error, audience);
  }
}

// A verified token becomes an Actor; membership and role are checked by each service call.
export async function authenticateManagement(db: Db, request: Request, audience: Audience = 'api'): Promise<Actor> {
  const token = bearerToken(request);
  if (token === null) throw missingToken(audience);
  if (token === '') throw invalidToken('it is empty', audience);
  const payload = await verify(token, audience);
  if (typeof payload.sub !== 'string' || !payload.sub || typeof payload.client_id !== 'string' || !payload.client_id) {
    throw invalidToken('sub and client_id must be strings', audience);
  }
  // A token issued in the future (beyond five minutes of clock skew) was not issued by a working issuer.
  if (typeof payload.iat === 'number' && payload.iat > Date.now() / 1000 + 300)
    throw invalidToken('it was issued in the future (iat)', audience);
  // Claims that cannot be stored (U+0000, a lone surrogate) make a bad credential, not a bad request.
  if (
    hygieneIssues({ sub: payload.sub, client_id: payload.client_id, email: payload.email, name: payload.name }).length
  )
    throw invalidToken('a claim holds characters that cannot be stored', audience);
  const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ') : [];
  if (!scopes.includes(managementScope)) throw insufficientScope(audience);
  const cfg = config();
  // A built-in token is refused once its authorization is revoked (the person revoked the app, the
  // client revoked its refresh token, or a code or refresh token was reused): one primary-key read.
  // A service account's token (sub sac_…) lives as long as the account: its row is read on every
  // request, so a revocation counts on the next call. Such a subject exists only with the built-in issuer.
  if (isBuiltInIssuer() && isId('sac', payload.sub)) {
    const account = await liveServiceAccount(db, payload.sub, payload.client_id);
    if (!account) throw invalidToken('its service account has been revoked', audience);
    return { userId: account.id, clientId: account.clientId, human: false, serviceAccount: true };
  }
  if (isBuiltInIssuer()) {
    const grantId = payload[grantClaim];
    if (typeof grantId !== 'string' || !(await grantIsLive(db, grantId, payload.sub, payload.client_id)))
      throw invalidToken('it has been revoked', audience);
  }
  const userId = await provisionOAuthUser(db, {
    issuer: cfg.oauthIssuer,
    subject: payload.sub,
    email: typeof payload.email === 'string' ? payload.email : undefined,
    emailVerified: payload.email_verified === true,
    name: typeof payload.name === 'string' ? payload.name : undefined,
    builtInIssuer: cfg.oauthIssuer === cfg.appUrl,
  }).catch((error: unknown) => {
    throw error instanceof AppError && error.code === 'unauthorized'
      ? invalidToken('its subject is unknown', audience)
      : error;
  });
  // A person is the CLI (the `promptloop-cli` client) on /api/v1 (API.md: `review.human` is true only for a
  // person in the dashboard or CLI). Every other client acts as an agent: on /mcp, and a client that
  // registered itself (RFC 7591) or another issuer's client even on /api/v1.
  return { userId, clientId: payload.client_id, human: audience === 'api' && payload.client_id === cliClientId };
}
