import { sql } from 'drizzle-orm';
import { pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt } from './columns';
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
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('users_email_key').on(t.email).where(sql`${t.email} is not null`),
    uniqueIndex('users_identity_key').on(t.issuer, t.subject).where(sql`${t.issuer} is not null`),
  ],
);
