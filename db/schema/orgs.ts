import { boolean, index, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns';
import { users } from './accounts';

export const organizations = pgTable('organizations', {
  id: text().primaryKey(),
  name: text().notNull(),
  plan: text({ enum: ['free', 'pro'] })
    .notNull()
    .default('free'),
  readOnly: boolean().notNull().default(false),
  createdBy: text().notNull(),
  createdAt: createdAt(),
});

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
  (t) => [primaryKey({ columns: [t.organizationId, t.userId] }), index('memberships_user_idx').on(t.userId, t.organizationId)],
);

// One-time dashboard destinations where an admin finishes deleting an organization.
export const deletionLinks = pgTable('organization_deletion_links', {
  tokenDigest: text().primaryKey(),
  organizationId: text()
    .notNull()
    .references(() => organizations.id, { onDelete: 'cascade' }),
  createdBy: text().notNull(),
  expiresAt: ts('expires_at').notNull(),
  createdAt: createdAt(),
});
