import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns';
import { organizations } from './orgs';

// Billing state, written only from verified Stripe webhooks (and Stripe's own replies to our calls):
// the organization's `plan` column is derived from these rows in the same transaction.

// Stripe customers recorded from checkout.session.completed: how a subscription without
// metadata.organizationId finds its organization.
export const billingCustomers = pgTable(
  'billing_customers',
  {
    customerId: text().primaryKey(),
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
  },
  (t) => [index('billing_customers_org_idx').on(t.organizationId)],
);

// One row per Stripe subscription, as the latest applied event described it. `organizationId` is
// null while the subscription cannot be tied to an organization yet (its checkout.session.completed
// has not arrived); the checkout event adopts it. `lastEventCreated` is the `created` (Unix seconds)
// of the last subscription event applied: an older one never rolls the row back.
// `paymentEventCreated` does the same for invoice events (payment_failed / paid).
export const billingSubscriptions = pgTable(
  'billing_subscriptions',
  {
    id: text().primaryKey(),
    organizationId: text().references(() => organizations.id, { onDelete: 'cascade' }),
    customerId: text(),
    status: text().notNull(),
    priceId: text(),
    currentPeriodStart: ts('current_period_start'),
    currentPeriodEnd: ts('current_period_end'),
    cancelAtPeriodEnd: boolean().notNull().default(false),
    lastEventCreated: bigint({ mode: 'number' }),
    lastEventId: text(),
    paymentEventCreated: bigint({ mode: 'number' }),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    index('billing_subscriptions_org_idx').on(t.organizationId),
    index('billing_subscriptions_customer_idx').on(t.customerId),
  ],
);

// Every verified webhook event id, inserted in the transaction that applies it: a redelivery finds
// its id here and changes nothing. Purged by housekeeping long after Stripe stops retrying.
export const billingEvents = pgTable(
  'billing_events',
  {
    id: text().primaryKey(),
    type: text().notNull(),
    created: bigint({ mode: 'number' }).notNull(),
    organizationId: text(),
    subscriptionId: text(),
    customerId: text(),
    outcome: text().notNull(),
    // Kept only while an invoice event waits for its organization (outcome unlinked): it is applied
    // when its subscription or customer is tied to one.
    payload: jsonb(),
    receivedAt: ts('received_at').notNull().defaultNow(),
  },
  (t) => [
    index('billing_events_received_idx').on(t.receivedAt),
    index('billing_events_unlinked_idx')
      .on(t.subscriptionId, t.customerId)
      .where(sql`outcome = 'unlinked'`),
  ],
);

// Evaluation credits: one row per organization and credit period (a calendar month on Free, the
// subscription's period on Pro), created by the first charge of the period. `used` only grows, and
// never past `allowance` (db/functions/billing.sql).
export const creditPeriods = pgTable(
  'credit_periods',
  {
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    periodStart: ts('period_start').notNull(),
    periodEnd: ts('period_end').notNull(),
    allowance: integer().notNull(),
    used: integer().notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.periodStart] })],
);
