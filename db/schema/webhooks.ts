import { sql } from 'drizzle-orm';
import { boolean, index, integer, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns';
import { organizations } from './orgs';

// Outgoing webhooks (API.md "Webhooks"): endpoints per organization, an outbox of events written in
// the same transaction as the change, and one delivery row per (event, endpoint) that the worker
// posts after the commit, at least once, with backoff.

export const webhooks = pgTable(
  'webhooks',
  {
    id: text().primaryKey(), // whk_…
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    url: text().notNull(),
    events: text().array().notNull(),
    enabled: boolean().notNull().default(true),
    description: text(),
    // The signing secret (`whsec_…`), sealed with AES-256-GCM under a key derived from the server's
    // secret (server/credentials/sealed.ts): the worker must read it to sign, so it cannot be a digest.
    secretSealed: text().notNull(),
    disabledReason: text(),
    // When the current run of failed deliveries began (null while deliveries succeed): 24 hours of
    // failures disable the endpoint.
    failingSince: ts('failing_since'),
    createdBy: text().notNull(),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [index('webhooks_org_idx').on(t.organizationId, t.id)],
);

// The outbox: one row per event, written by the transaction that made the change (only when some
// enabled endpoint of the organization subscribes to its type).
export const webhookEvents = pgTable(
  'webhook_events',
  {
    id: text().primaryKey(), // evt_…: the `webhook-id` header, the same on every retry
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    type: text().notNull(),
    // The JSON body as it is sent: { type, timestamp, organizationId, data }.
    payload: text().notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('webhook_events_org_idx').on(t.organizationId, t.createdAt)],
);

export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: text().primaryKey(), // whd_…
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    webhookId: text()
      .notNull()
      .references(() => webhooks.id, { onDelete: 'cascade' }),
    eventId: text()
      .notNull()
      .references(() => webhookEvents.id, { onDelete: 'cascade' }),
    type: text().notNull(),
    status: text({ enum: ['pending', 'delivered', 'failed'] })
      .notNull()
      .default('pending'),
    attempts: integer().notNull().default(0),
    lastStatusCode: integer(),
    lastError: text(),
    // Due time of the next attempt; while an attempt is in flight, the end of its lease (a worker
    // killed mid-delivery leaves it due again then). Null once delivered or failed.
    nextAttemptAt: ts('next_attempt_at'),
    deliveredAt: ts('delivered_at'),
    // The first 4 KiB of the last response body, as text.
    lastResponseExcerpt: text(),
    lastAttemptAt: ts('last_attempt_at'),
    createdAt: createdAt(),
  },
  (t) => [
    index('webhook_deliveries_webhook_idx').on(t.webhookId, t.createdAt, t.id),
    index('webhook_deliveries_due_idx')
      .on(t.nextAttemptAt)
      .where(sql`status = 'pending'`),
  ],
);
