import { index, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns';
import { users } from './accounts';

// The built-in authorization server (API.md "Built-in authorization server"). Secrets (codes,
// refresh tokens) are stored only as SHA-256 digests; signing keys' private halves are encrypted.

// Clients registered with RFC 7591 dynamic registration. The pre-registered `promptloop-cli` lives in
// code (server/oauth/clients.ts), not here.
export const oauthClients = pgTable('oauth_clients', {
  id: text().primaryKey(),
  name: text(),
  redirectUris: jsonb().$type<string[]>().notNull(),
  // The registration as answered (client_uri, logo_uri and the like), for the RFC 7591 response.
  metadata: jsonb().$type<Record<string, unknown>>().notNull().default({}),
  createdAt: createdAt(),
});

// A person's remembered consent to a client, until they revoke it in the dashboard.
export const oauthConsents = pgTable(
  'oauth_consents',
  {
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    clientId: text().notNull(),
    scope: text().notNull(),
    createdAt: createdAt(),
    lastUsedAt: ts('last_used_at'),
  },
  (t) => [primaryKey({ columns: [t.userId, t.clientId] })],
);

// One authorization (a redeemed code) and everything issued from it: the refresh-token family and
// its access tokens (which carry the grant's id). Revoking the grant refuses all of them.
export const oauthGrants = pgTable(
  'oauth_grants',
  {
    id: text().primaryKey(),
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    clientId: text().notNull(),
    scope: text().notNull(),
    // The resource the authorization named (RFC 8707); null: either protected resource.
    resource: text(),
    createdAt: createdAt(),
    lastUsedAt: ts('last_used_at'),
    revokedAt: ts('revoked_at'),
    revokedReason: text(),
  },
  (t) => [index('oauth_grants_user_client_idx').on(t.userId, t.clientId)],
);

// Authorization codes: single use, 60 seconds. `grantId` is set by the redemption, so a second
// redemption can revoke what the first issued.
export const oauthCodes = pgTable(
  'oauth_codes',
  {
    codeDigest: text().primaryKey(),
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    clientId: text().notNull(),
    redirectUri: text().notNull(),
    scope: text().notNull(),
    resource: text(),
    codeChallenge: text().notNull(),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
    grantId: text(),
    // Set by a second redemption: a first one still issuing sees it and issues nothing.
    reusedAt: ts('reused_at'),
    createdAt: createdAt(),
  },
  (t) => [index('oauth_codes_expires_idx').on(t.expiresAt)],
);

// Rotating refresh tokens: each use marks the token used and issues the next one in the same grant.
export const oauthRefreshTokens = pgTable(
  'oauth_refresh_tokens',
  {
    tokenDigest: text().primaryKey(),
    grantId: text()
      .notNull()
      .references(() => oauthGrants.id, { onDelete: 'cascade' }),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
    createdAt: createdAt(),
  },
  (t) => [
    index('oauth_refresh_tokens_grant_idx').on(t.grantId),
    index('oauth_refresh_tokens_expires_idx').on(t.expiresAt),
  ],
);

// ES256 signing keys. The newest signs; older ones stay published until every token they signed
// has expired. The private key is AES-256-GCM encrypted with a key derived from the server secret.
export const oauthSigningKeys = pgTable(
  'oauth_signing_keys',
  {
    kid: text().primaryKey(),
    alg: text().notNull(),
    publicJwk: jsonb().$type<Record<string, unknown>>().notNull(),
    privateJwkEncrypted: text().notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('oauth_signing_keys_created_idx').on(t.createdAt)],
);
