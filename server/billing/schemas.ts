import { z } from 'zod';

// Billing shapes (API.md "Billing (configuration and contract)"). Pure: the operation table and
// the dashboard import them.

const plans = ['free', 'pro'] as const;
export type Plan = (typeof plans)[number];

// Subscription statuses under which the organization is on Pro (a past_due one until it is deleted).
export const entitlingStatuses = ['active', 'trialing', 'past_due'] as const;
export const isEntitling = (status: string): boolean => (entitlingStatuses as readonly string[]).includes(status);

export const billingStateSchema = z.object({
  plan: z.enum(plans),
  status: z
    .string()
    .nullable()
    .describe("The subscription's Stripe status (active, trialing, past_due…), or null on Free."),
  renewsAt: z.string().nullable().describe('When the plan renews: periodEnd, or null once renewal is cancelled.'),
  periodStart: z.string().describe('Start of the current billing period (the calendar month, UTC, on Free).'),
  periodEnd: z
    .string()
    .describe(
      "End of the current period: the subscription's period end, or the end of the calendar month (UTC) on Free.",
    ),
  cancelAtPeriodEnd: z.boolean(),
  creditsRemaining: z
    .number()
    .int()
    .describe('Evaluation credits left in the current credit period (one per case executed on one side).'),
  creditsUsed: z.number().int(),
  creditsPerPeriod: z.number().int(),
  datasetCapacity: z.number().int().describe('Cases per dataset on this plan (Free 10, Pro 500).'),
  traceRetentionDays: z
    .number()
    .int()
    .describe(
      'Days a trace first stored now is kept on this plan (TRACE_RETENTION_DAYS_FREE / _PRO, default 30 / 90); it is removed within the week after.',
    ),
  paymentMethodManageable: z
    .boolean()
    .describe('True when a Stripe customer exists, so an admin can open the customer portal.'),
});
export type BillingState = z.infer<typeof billingStateSchema>;

export const checkoutBody = z.strictObject({
  plan: z.literal('pro').describe('The plan to buy; only `pro` can be bought.'),
});

// `periodEnd` is the instant (compared to the second) or its UTC date `YYYY-MM-DD`: these two
// patterns are the whole rule, so the document states exactly what is accepted.
const date = '[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])';
const time = '([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,9})?)?';
const periodEndPatterns = [`^${date}$`, `^${date}[Tt]${time}([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`];
export const cancelRenewalBody = z.strictObject({
  organizationName: z.string().min(1).max(160).describe("The organization's exact name."),
  periodEnd: z
    .string()
    .min(1)
    .max(64)
    .refine(
      (v) => periodEndPatterns.some((pattern) => new RegExp(pattern).test(v)),
      'Must be an ISO 8601 date-time with a time zone, or a YYYY-MM-DD date.',
    )
    .meta({ anyOf: periodEndPatterns.map((pattern) => ({ pattern })) })
    .describe(
      'The current period end as shown by the billing state: the same instant (to the second), or its UTC date (YYYY-MM-DD).',
    ),
});

export const redirectUrlSchema = z.object({
  url: z.string().describe('Where to send the browser (Stripe Checkout or the customer portal).'),
});
export type RedirectUrl = z.infer<typeof redirectUrlSchema>;
