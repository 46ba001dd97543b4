import { sql } from 'drizzle-orm';
import { index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns';
import { organizations } from './orgs';

export const users = pgTable(
  'users',
  {
    id: text().primaryKey(),
    email: text(),
    name: text(),
    passwordHash: text(),
    // Set for users provisioned by an external OAuth issuer: keyed by (issuer, sub).
    issuer: text(),
    subject: text(),
    defaultOrganizationId: text().references(() => organizations.id, { onDelete: 'set null' }),
    // When the address in `email` was proven to belong to this user (link clicked, or an issuer's email_verified).
    emailVerifiedAt: ts('email_verified_at'),
    // Dashboard sessions issued before this instant are no longer accepted (set by a password reset).
    sessionsValidAfter: ts('sessions_valid_after'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('users_email_key')
      .on(t.email)
      .where(sql`${t.email} is not null`),
    uniqueIndex('users_identity_key')
      .on(t.issuer, t.subject)
      .where(sql`${t.issuer} is not null`),
  ],
);

// Single-use emailed links (verify an address, reset a password): only the SHA-256 digest is stored.
export const emailTokens = pgTable(
  'email_tokens',
  {
    tokenDigest: text().primaryKey(),
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    purpose: text({ enum: ['verify_email', 'reset_password'] }).notNull(),
    // The address the link was sent to: a verification counts only while the account still has it.
    email: text().notNull(),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
    createdAt: createdAt(),
  },
  (t) => [index('email_tokens_user_idx').on(t.userId, t.purpose), index('email_tokens_expires_idx').on(t.expiresAt)],
);

// Fixed-window counters shared by every process (sign-in, sign-up, password reset, playground).
export const rateLimits = pgTable(
  'rate_limits',
  {
    key: text().primaryKey(),
    windowStartedAt: ts('window_started_at').notNull(),
    hits: integer().notNull(),
  },
  (t) => [index('rate_limits_window_idx').on(t.windowStartedAt)],
);

// Dashboard sessions ended by "Sign out": a copy of the session cookie is refused from then on. A
// row is kept until the session could no longer be accepted anyway (30 days after its sign-in).
export const endedSessions = pgTable(
  'ended_sessions',
  {
    sessionId: text().primaryKey(),
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    expiresAt: ts('expires_at').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('ended_sessions_expires_idx').on(t.expiresAt)],
);
