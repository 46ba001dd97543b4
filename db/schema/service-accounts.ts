import { index, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns';
import { organizations } from './orgs';

// Machine credentials for CI (API.md "Service accounts"): one organization, one role, a client id
// (sa_…) and a secret (pls_…) of which only the SHA-256 digest is stored and looked up. An access
// token's `sub` is the account's id (sac_…); `createdBy` names a person (or the service account
// that created it), with no foreign key, like every other actor column.
export const serviceAccounts = pgTable(
  'service_accounts',
  {
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    id: text().primaryKey(),
    clientId: text().notNull(),
    name: text().notNull(),
    role: text({ enum: ['admin', 'editor', 'viewer'] }).notNull(),
    secretDigest: text().notNull(),
    createdBy: text().notNull(),
    createdAt: createdAt(),
    lastUsedAt: ts('last_used_at'),
    revokedAt: ts('revoked_at'),
  },
  (t) => [
    uniqueIndex('service_accounts_client_id_idx').on(t.clientId),
    uniqueIndex('service_accounts_digest_idx').on(t.secretDigest),
    index('service_accounts_org_idx').on(t.organizationId, t.id),
  ],
);
