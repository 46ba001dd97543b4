import { and, eq, isNull, sql } from 'drizzle-orm';
import { SignJWT } from 'jose';
import type { Db } from '@/db/client';
import { oauthCodes, oauthConsents, oauthGrants, oauthRefreshTokens } from '@/db/schema';
import { accessTokenTtlSeconds, endpoints, refreshTokenTtlMs } from './issuer';
import { signingAlg, type SigningKey } from './keys';
import { digest, newOpaqueId, newSecret } from './secrets';

// A grant is one authorization (a redeemed code): its refresh-token family and its access tokens,
// which carry the grant's id in `grant_id` so revoking the grant refuses them too.
export const grantClaim = 'grant_id';

export type Grant = { id: string; userId: string; clientId: string; scope: string; resource: string | null };
export type TokenResponse = {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
};

// Whom an access token is for: a person through a grant, or a service account (no grant: its
// tokens are checked against the account's own row instead, server/auth/oauth.ts).
export type TokenSubject = { subject: string; clientId: string; grantId?: string };

// The key is loaded by the caller before its transaction (currentSigningKey reads through the
// process's database handle, which on the embedded single-connection PGlite would wait for that
// transaction forever).
export async function signAccessToken(
  key: SigningKey,
  who: TokenSubject,
  audience: string,
  scope: string,
): Promise<string> {
  return new SignJWT({ client_id: who.clientId, scope, ...(who.grantId ? { [grantClaim]: who.grantId } : {}) })
    .setProtectedHeader({ alg: signingAlg, kid: key.kid, typ: 'at+jwt' })
    .setIssuer(endpoints().issuer)
    .setSubject(who.subject)
    .setAudience(audience)
    .setJti(newOpaqueId(''))
    .setIssuedAt()
    .setExpirationTime(`${accessTokenTtlSeconds}s`)
    .sign(key.key);
}

async function newRefreshToken(db: Db, grantId: string): Promise<string> {
  const token = newSecret('plrt_');
  await db
    .insert(oauthRefreshTokens)
    .values({ tokenDigest: digest(token), grantId, expiresAt: new Date(Date.now() + refreshTokenTtlMs) });
  return token;
}

export async function tokenResponse(
  db: Db,
  key: SigningKey,
  grant: Grant,
  audience: string,
  scope: string,
): Promise<TokenResponse> {
  const access = await signAccessToken(
    key,
    { subject: grant.userId, clientId: grant.clientId, grantId: grant.id },
    audience,
    scope,
  );
  const refresh = await newRefreshToken(db, grant.id);
  return {
    access_token: access,
    token_type: 'Bearer',
    expires_in: accessTokenTtlSeconds,
    refresh_token: refresh,
    scope,
  };
}

export async function createGrant(db: Db, values: Omit<Grant, 'id'>): Promise<Grant> {
  const grant = { id: newOpaqueId('grt_'), ...values };
  await db.insert(oauthGrants).values({ ...grant, lastUsedAt: new Date() });
  await db
    .update(oauthConsents)
    .set({ lastUsedAt: new Date() })
    .where(and(eq(oauthConsents.userId, values.userId), eq(oauthConsents.clientId, values.clientId)));
  return grant;
}

// Revokes a grant: its refresh tokens and access tokens are refused from now on.
export async function revokeGrant(db: Db, grantId: string, reason: string): Promise<void> {
  await db
    .update(oauthGrants)
    .set({ revokedAt: new Date(), revokedReason: reason })
    .where(and(eq(oauthGrants.id, grantId), isNull(oauthGrants.revokedAt)));
}

// Every grant of one person to one client (the dashboard's Revoke), and the remembered consent.
export async function revokeClientForUser(db: Db, userId: string, clientId: string): Promise<number> {
  await db.delete(oauthConsents).where(and(eq(oauthConsents.userId, userId), eq(oauthConsents.clientId, clientId)));
  // Codes handed out and not yet redeemed go too: one redeemed after this would be a grant the
  // person never sees under Authorized applications (it is invalid_grant instead).
  await db
    .delete(oauthCodes)
    .where(and(eq(oauthCodes.userId, userId), eq(oauthCodes.clientId, clientId), isNull(oauthCodes.usedAt)));
  const revoked = await db
    .update(oauthGrants)
    .set({ revokedAt: new Date(), revokedReason: 'revoked_by_user' })
    .where(and(eq(oauthGrants.userId, userId), eq(oauthGrants.clientId, clientId), isNull(oauthGrants.revokedAt)))
    .returning({ id: oauthGrants.id });
  return revoked.length;
}

// The check every built-in access token gets after its signature: one primary-key read. Also notes
// when the grant was last used, at most once a minute per grant per process.
const touched = new Map<string, number>();
export async function grantIsLive(db: Db, grantId: string, userId: string, clientId: string): Promise<boolean> {
  const [row] = await db
    .select({ revokedAt: oauthGrants.revokedAt, userId: oauthGrants.userId, clientId: oauthGrants.clientId })
    .from(oauthGrants)
    .where(eq(oauthGrants.id, grantId));
  if (!row || row.revokedAt || row.userId !== userId || row.clientId !== clientId) return false;
  const now = Date.now();
  if ((touched.get(grantId) ?? 0) < now - 60_000) {
    touched.set(grantId, now);
    if (touched.size > 10_000) touched.clear();
    await db
      .update(oauthGrants)
      .set({ lastUsedAt: sql`now()` })
      .where(eq(oauthGrants.id, grantId));
  }
  return true;
}
