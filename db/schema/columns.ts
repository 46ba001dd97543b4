import { timestamp } from 'drizzle-orm/pg-core';

// Millisecond precision keeps keyset cursors exact when they round-trip through JS Dates.
export const ts = (name: string) => timestamp(name, { withTimezone: true, precision: 3 });
export const createdAt = () => ts('created_at').notNull().defaultNow();
