import { z } from 'zod';

// Billing shapes (API.md "Billing (configuration and contract)"). Pure: the operation table and
// the dashboard import them.

export const plans = ['free', 'pro'] as const;
export type Plan = (typeof plans)[number];

// Subscription statuses under which the organization is on Pro (a past_due one until it is deleted).
export const entitlingStatuses = ['active', 'trialing', 'past_due'] as const;
export const isEntitling = (status: string): boolean => (entitlingStatuses as readonly string[]).includes(status);

export const billingStateSchema = z.object({
  plan: z.enum(plans),
  status: z.string().nullable().describe("The subscription's Stripe status (active, trialing, past_due…), or null on Free."),
  renewsAt: z.string().nullable().describe('When the plan renews: periodEnd, or null once renewal is cancelled.'),
  periodStart: z.string().describe('Start of the current billing period (the calendar month, UTC, on Free).'),
  periodEnd: z.string().describe("End of the current period: the subscription's period end, or the end of the calendar month (UTC) on Free."),
  cancelAtPeriodEnd: z.boolean(),
  creditsRemaining: z.number().int().describe('Evaluation credits left in the current credit period (one per case executed on one side).'),
  creditsUsed: z.number().int(),
  creditsPerPeriod: z.number().int(),
  datasetCapacity: z.number().int().describe('Cases per dataset on this plan (Free 10, Pro 500).'),
  paymentMethodManageable: z.boolean().describe('True when a Stripe customer exists, so an admin can open the customer portal.'),
});
export type BillingState = z.infer<typeof billingStateSchema>;

export const checkoutBody = z.strictObject({
  plan: z.literal('pro').describe('The plan to buy; only `pro` can be bought.'),
});

const dateOnly = /^\d{4}-\d{2}-\d{2}$/;
const dateTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

// `periodEnd` is the instant (compared to the second) or its UTC date `YYYY-MM-DD`.
export const cancelRenewalBody = z.strictObject({
  organizationName: z.string().min(1).max(160).describe("The organization's exact name."),
  periodEnd: z
    .string()
    .min(1)
    .max(64)
    .refine((v) => (dateOnly.test(v) || dateTime.test(v)) && !Number.isNaN(Date.parse(v)), 'Must be an ISO 8601 date-time with a time zone, or a YYYY-MM-DD date.')
    .describe('The current period end as shown by the billing state: the same instant (to the second), or its UTC date (YYYY-MM-DD).'),
});
export type CancelRenewalInput = z.infer<typeof cancelRenewalBody>;

export const redirectUrlSchema = z.object({ url: z.string().describe('Where to send the browser (Stripe Checkout or the customer portal).') });
export type RedirectUrl = z.infer<typeof redirectUrlSchema>;
