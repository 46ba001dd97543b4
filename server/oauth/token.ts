import { and, eq, isNull } from 'drizzle-orm';
import { decodeJwt, jwtVerify } from 'jose';
import type { Db } from '@/db/client';
import { oauthCodes, oauthGrants, oauthRefreshTokens } from '@/db/schema';
import { findClient, type Client } from './clients';
import { OAuthError, oauthJson } from './errors';
import { authenticateClientSecret } from '../credentials/service-accounts';
import { invalidClient, presentedClient } from './client-auth';
import { createGrant, grantClaim, revokeGrant, signAccessToken, tokenResponse, type Grant } from './grants';
import { required } from './http';
import { accessTokenTtlSeconds, endpoints, isKnownResource, managementScope, resources } from './issuer';
import { currentSigningKey, publishedKeys } from './keys';
import { digest, s256 } from './secrets';

// POST /oauth/token (RFC 6749 sections 4.1.3 and 6, RFC 7636, RFC 8707). Public clients: the
// client is identified by client_id and proven by the PKCE verifier and the refresh token.
const verifierPattern = /^[A-Za-z0-9._~-]{43,128}$/;

const invalidGrant = (description: string) => new OAuthError('invalid_grant', description);

async function clientOf(db: Db, params: Map<string, string>): Promise<Client> {
  const clientId = required(params, 'client_id');
  const client = await findClient(db, clientId);
  if (!client) throw new OAuthError('invalid_client', 'Unknown client_id.');
  return client;
}

// The audience of the token: the resource the authorization named, else the management API (an
// authorization asked without `resource` is for /api/v1: RFC 8707 binds the whole grant to it). A
// requested resource must be that one.
function audienceFor(params: Map<string, string>, authorized: string | null): string {
  const granted = authorized ?? resources().api;
  const asked = params.get('resource');
  if (asked !== undefined) {
    if (!isKnownResource(asked))
      throw new OAuthError('invalid_target', "resource must be this service's /api/v1 or /mcp URL.");
    if (asked !== granted)
      throw new OAuthError('invalid_target', 'resource is not the one this authorization was granted for.');
  }
  return granted;
}

async function redeemCode(db: Db, params: Map<string, string>): Promise<Response> {
  const client = await clientOf(db, params);
  const code = required(params, 'code');
  const redirectUri = required(params, 'redirect_uri');
  const verifier = required(params, 'code_verifier');
  if (!verifierPattern.test(verifier))
    throw new OAuthError(
      'invalid_request',
      'code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9, "-", ".", "_" and "~".',
    );
  const codeDigest = digest(code);
  // Claimed in one statement: of two concurrent redemptions exactly one gets the row.
  const [claimed] = await db
    .update(oauthCodes)
    .set({ usedAt: new Date() })
    .where(and(eq(oauthCodes.codeDigest, codeDigest), isNull(oauthCodes.usedAt)))
    .returning();
  // The client, its redirect URI and the PKCE verifier are checked before anything else: a request
  // that fails them learns nothing and, holding a leaked code alone, revokes nothing (RFC 6749 4.1.3).
  const checkRedemption = (row: typeof oauthCodes.$inferSelect) => {
    if (row.clientId !== client.id) throw invalidGrant('The authorization code was issued to another client.');
    if (row.redirectUri !== redirectUri)
      throw invalidGrant('redirect_uri does not match the one of the authorization request.');
    if (s256(verifier) !== row.codeChallenge) throw invalidGrant('code_verifier does not match the code_challenge.');
  };
  if (!claimed) {
    const [used] = await db.select().from(oauthCodes).where(eq(oauthCodes.codeDigest, codeDigest));
    if (!used) throw invalidGrant('The authorization code is not valid.');
    checkRedemption(used);
    // A second redemption: what the first issued is revoked (RFC 6749 section 4.1.2). A first one
    // still issuing waits on this row, then sees `reusedAt` and issues nothing.
    const [marked] = await db
      .update(oauthCodes)
      .set({ reusedAt: new Date() })
      .where(eq(oauthCodes.codeDigest, codeDigest))
      .returning({ grantId: oauthCodes.grantId });
    if (marked?.grantId) await revokeGrant(db, marked.grantId, 'code_reused');
    throw invalidGrant('The authorization code was already used.');
  }
  if (claimed.expiresAt.getTime() <= Date.now()) throw invalidGrant('The authorization code has expired.');
  checkRedemption(claimed);
  const audience = audienceFor(params, claimed.resource);
  const key = await currentSigningKey(); // before the transaction: see signAccessToken
  const body = await db.transaction(async (tx) => {
    const grant = await createGrant(tx, {
      userId: claimed.userId,
      clientId: client.id,
      scope: claimed.scope,
      resource: claimed.resource,
    });
    const [linked] = await tx
      .update(oauthCodes)
      .set({ grantId: grant.id })
      .where(eq(oauthCodes.codeDigest, codeDigest))
      .returning({ reusedAt: oauthCodes.reusedAt });
    if (linked?.reusedAt) throw invalidGrant('The authorization code was already used.');
    return tokenResponse(tx, key, grant, audience, grant.scope);
  });
  return oauthJson(200, body);
}

async function refresh(db: Db, params: Map<string, string>): Promise<Response> {
  const client = await clientOf(db, params);
  const token = required(params, 'refresh_token');
  const tokenDigest = digest(token);
  const [row] = await db
    .select({ usedAt: oauthRefreshTokens.usedAt, expiresAt: oauthRefreshTokens.expiresAt, grant: oauthGrants })
    .from(oauthRefreshTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthRefreshTokens.grantId))
    .where(eq(oauthRefreshTokens.tokenDigest, tokenDigest));
  if (!row) throw invalidGrant('The refresh token is not valid.');
  // Another client's token changes nothing: it is refused and left as it is.
  if (row.grant.clientId !== client.id) throw invalidGrant('The refresh token was issued to another client.');
  if (row.grant.revokedAt) throw invalidGrant('The refresh token has been revoked.');
  const reused = async () => {
    await revokeGrant(db, row.grant.id, 'refresh_token_reused');
    return invalidGrant('The refresh token was already used; every token of this authorization is now revoked.');
  };
  if (row.usedAt) throw await reused();
  if (row.expiresAt.getTime() <= Date.now()) throw invalidGrant('The refresh token has expired.');
  // The scope may narrow, never grow (RFC 6749 section 6).
  const asked = params.get('scope');
  const granted = row.grant.scope.split(' ');
  let scope = row.grant.scope;
  if (asked !== undefined) {
    const wanted = [...new Set(asked.split(' ').filter(Boolean))];
    if (wanted.length === 0)
      throw new OAuthError('invalid_scope', 'The scope parameter is empty: leave it out to keep the granted scope.');
    if (wanted.some((s) => !granted.includes(s)))
      throw new OAuthError('invalid_scope', 'The requested scope is wider than the one granted.');
    scope = wanted.join(' ');
  }
  const audience = audienceFor(params, row.grant.resource);
  const grant: Grant = {
    id: row.grant.id,
    userId: row.grant.userId,
    clientId: row.grant.clientId,
    scope: row.grant.scope,
    resource: row.grant.resource,
  };
  // The old token is spent and the next one issued together, or neither.
  const key = await currentSigningKey(); // before the transaction: see signAccessToken
  const body = await db.transaction(async (tx) => {
    const [claimed] = await tx
      .update(oauthRefreshTokens)
      .set({ usedAt: new Date() })
      .where(and(eq(oauthRefreshTokens.tokenDigest, tokenDigest), isNull(oauthRefreshTokens.usedAt)))
      .returning({ grantId: oauthRefreshTokens.grantId });
    if (!claimed) return null; // a concurrent use won the race
    await tx.update(oauthGrants).set({ lastUsedAt: new Date() }).where(eq(oauthGrants.id, grant.id));
    return tokenResponse(tx, key, grant, audience, scope);
  });
  if (!body) throw await reused();
  return oauthJson(200, body);
}

// client_credentials (RFC 6749 section 4.4) for service accounts: an access token for the account
// itself, no refresh token (it asks again with its secret). Public clients have no secret to prove.
async function clientCredentials(db: Db, params: Map<string, string>, authorization: string | null): Promise<Response> {
  const client = presentedClient(params, authorization);
  if (await findClient(db, client.clientId)) {
    throw new OAuthError(
      'unauthorized_client',
      'This is a public client: client_credentials is only for service accounts (client ids sa_…).',
    );
  }
  if (!client.secret) throw invalidClient('client_secret is required.', client.basic);
  const account = await authenticateClientSecret(db, client.clientId, client.secret);
  if (!account)
    throw invalidClient('The client credentials are not valid, or the service account was revoked.', client.basic);
  const asked = params.get('scope')?.split(' ').filter(Boolean);
  if (asked && (asked.length === 0 || asked.some((s) => s !== managementScope)))
    throw new OAuthError('invalid_scope', `The only scope is "${managementScope}".`);
  // No authorization came before: the client names its resource here (/api/v1 by default).
  const audience = audienceFor(params, params.get('resource') ?? null);
  const accessToken = await signAccessToken(
    await currentSigningKey(),
    { subject: account.id, clientId: account.clientId },
    audience,
    managementScope,
  );
  return oauthJson(200, {
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: accessTokenTtlSeconds,
    scope: managementScope,
  });
}

export async function tokenEndpoint(
  db: Db,
  params: Map<string, string>,
  authorization: string | null = null,
): Promise<Response> {
  const grantType = required(params, 'grant_type');
  if (grantType === 'authorization_code') return redeemCode(db, params);
  if (grantType === 'refresh_token') return refresh(db, params);
  if (grantType === 'client_credentials') return clientCredentials(db, params, authorization);
  throw new OAuthError(
    'unsupported_grant_type',
    'grant_type must be authorization_code, refresh_token or client_credentials.',
  );
}

// POST /oauth/revoke (RFC 7009): a refresh token or an access token of ours revokes its whole grant.
// Unknown, expired or foreign tokens are answered 200 too (section 2.2), and change nothing.
export async function revokeEndpoint(db: Db, params: Map<string, string>): Promise<Response> {
  const client = await clientOf(db, params);
  const token = required(params, 'token');
  const hint = params.get('token_type_hint');
  const grantId =
    hint === 'access_token'
      ? ((await accessTokenGrant(db, token)) ?? (await refreshTokenGrant(db, token)))
      : ((await refreshTokenGrant(db, token)) ?? (await accessTokenGrant(db, token)));
  if (grantId) {
    const [grant] = await db
      .select({ clientId: oauthGrants.clientId })
      .from(oauthGrants)
      .where(eq(oauthGrants.id, grantId));
    // RFC 7009 2.1: a token issued to another client is refused, not silently kept.
    if (grant && grant.clientId !== client.id)
      throw new OAuthError('invalid_grant', 'The token was issued to another client.');
    if (grant) await revokeGrant(db, grantId, 'revoked_by_client');
  }
  return new Response(null, { status: 200, headers: { 'cache-control': 'no-store' } });
}

async function refreshTokenGrant(db: Db, token: string): Promise<string | null> {
  const [row] = await db
    .select({ grantId: oauthRefreshTokens.grantId })
    .from(oauthRefreshTokens)
    .where(eq(oauthRefreshTokens.tokenDigest, digest(token)));
  return row?.grantId ?? null;
}

async function accessTokenGrant(db: Db, token: string): Promise<string | null> {
  try {
    decodeJwt(token);
    const { payload } = await jwtVerify(token, (await publishedKeys()).keySet, {
      issuer: endpoints().issuer,
      typ: 'at+jwt',
    });
    const grantId = payload[grantClaim];
    return typeof grantId === 'string' ? grantId : null;
  } catch {
    return null;
  }
}
