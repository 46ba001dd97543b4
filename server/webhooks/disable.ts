import { and, eq } from 'drizzle-orm';
import { webhookDeliveries, webhooks } from '@/db/schema';
import type { DbContext } from '../context';

// Turning an endpoint off, by an admin (reason null) or by the worker (a 410, or 24 hours of
// failures): its pending deliveries fail at once, so re-enabling never sends what was missed.
export async function disableWebhook(
  ctx: DbContext,
  webhookId: string,
  reason: string | null,
  at: Date = new Date(),
): Promise<void> {
  await ctx.db
    .update(webhooks)
    .set({ enabled: false, disabledReason: reason, failingSince: null, updatedAt: at })
    .where(eq(webhooks.id, webhookId));
  await ctx.db
    .update(webhookDeliveries)
    .set({
      status: 'failed',
      nextAttemptAt: null,
      lastError: reason ? `Not sent: the webhook was disabled (${reason}).` : 'Not sent: the webhook was disabled.',
    })
    .where(and(eq(webhookDeliveries.webhookId, webhookId), eq(webhookDeliveries.status, 'pending')));
}
