import { z } from 'zod';
import { pageQuery } from '../paging';

// ---- Webhooks (M11, API.md "Webhooks") ----

// What an endpoint may subscribe to; `webhook.test` is sent by POST …/test only.
export const webhookEventTypes = [
  'prompt.version.created',
  'prompt.label.moved',
  'evaluation.completed',
  'evaluation.failed',
  'warning.opened',
] as const;
export type WebhookEventType = (typeof webhookEventTypes)[number] | 'webhook.test';

export const webhookLimits = {
  urlChars: 2000,
  descriptionChars: 500,
  maxEvents: 10,
  responseExcerptBytes: 4096,
} as const;

const webhookUrl = z
  .string()
  .trim()
  .min(1)
  .max(webhookLimits.urlChars)
  .describe(
    'https:// (http:// only with WEBHOOK_ALLOW_HTTP); a host on a private address is refused unless WEBHOOK_ALLOW_PRIVATE.',
  );
const webhookEvents = z
  .array(z.enum(webhookEventTypes))
  .min(1)
  .max(webhookLimits.maxEvents)
  .refine((events) => new Set(events).size === events.length, 'List each event type once.')
  .describe(
    `The event types to send, 1 to ${webhookLimits.maxEvents}, each once (webhook.test is sent by POST …/test only).`,
  );
// Empty is refused like every empty field (API.md conventions): leave it out, or null on update.
const webhookDescription = z
  .string()
  .min(1, 'Leave the description out (null on update) for none.')
  .max(webhookLimits.descriptionChars);
const aboutDescription = `A note about the webhook, 1 to ${webhookLimits.descriptionChars} characters`;

export const createWebhookInput = z.strictObject({
  url: webhookUrl,
  events: webhookEvents,
  description: webhookDescription.optional().describe(`${aboutDescription}.`),
});
export const updateWebhookInput = z.strictObject({
  url: webhookUrl.optional(),
  events: webhookEvents.optional(),
  enabled: z.boolean().optional().describe('Re-enabling clears disabledReason and does not send what was missed.'),
  description: webhookDescription.nullable().optional().describe(`${aboutDescription}; null removes it.`),
});

export const webhookSchema = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  enabled: z.boolean(),
  description: z.string().nullable(),
  createdAt: z.string(),
  disabledReason: z.string().nullable(),
});
export type Webhook = z.infer<typeof webhookSchema>;

export const createdWebhookSchema = z.object({
  webhook: webhookSchema,
  secret: z.string().describe('whsec_ + base64 of 32 random bytes: shown once.'),
});

const deliveryStatuses = ['pending', 'delivered', 'failed'] as const;
export const webhookDeliverySchema = z.object({
  id: z.string(),
  eventId: z.string().describe('The `webhook-id` header: the same on every retry and redelivery.'),
  type: z.string(),
  status: z.enum(deliveryStatuses),
  attempts: z.number().int(),
  lastStatusCode: z.number().int().nullable(),
  lastError: z.string().nullable(),
  nextAttemptAt: z.string().nullable(),
  deliveredAt: z.string().nullable(),
  createdAt: z.string(),
  lastAttemptAt: z.string().nullable(),
});
export type WebhookDelivery = z.infer<typeof webhookDeliverySchema>;

// One delivery with what was sent and the start of what came back.
export const webhookDeliveryDetailSchema = webhookDeliverySchema.extend({
  payload: z.string().describe('The JSON body as sent.'),
  responseExcerpt: z.string().nullable().describe('The first 4 KiB of the last response body.'),
});

export const deliveryIdSchema = z.object({ deliveryId: z.string() });
export const listDeliveriesQuery = pageQuery;
