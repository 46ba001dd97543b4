import { index, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns';
import { users } from './accounts';
import { organizations } from './orgs';

// Who belongs to which organization, with what role. Its own file because it joins the two owners
// (users reference their default organization, so accounts.ts already imports orgs.ts).
export const memberships = pgTable(
  'memberships',
  {
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    role: text({ enum: ['admin', 'editor', 'viewer'] }).notNull(),
    joinedAt: ts('joined_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.userId] }),
    index('memberships_user_idx').on(t.userId, t.organizationId),
  ],
);

// An emailed invitation for an address no account uses yet (or not yet verified): whoever signs in
// with that address and opens the link joins with the role. One open invitation per address and
// organization (a new one replaces it); the link is stored as a digest, like the email tokens.
export const invitations = pgTable(
  'invitations',
  {
    id: text().primaryKey(),
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    email: text().notNull(),
    role: text({ enum: ['admin', 'editor', 'viewer'] }).notNull(),
    tokenDigest: text().notNull(),
    invitedBy: text().references(() => users.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
    expiresAt: ts('expires_at').notNull(),
    // Set when its email could not be handed to the SMTP server (the members page says so: resend).
    emailFailedAt: ts('email_failed_at'),
  },
  (t) => [
    uniqueIndex('invitations_org_email_idx').on(t.organizationId, t.email),
    uniqueIndex('invitations_token_idx').on(t.tokenDigest),
    index('invitations_expires_idx').on(t.expiresAt),
  ],
);
