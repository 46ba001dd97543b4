import { index, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { ts } from './columns';
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
