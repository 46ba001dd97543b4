import { boolean, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns';

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
