import { and, eq, sql } from 'drizzle-orm';
import { webhookDeliveries, webhookEvents, webhooks } from '@/db/schema';
import type { DbContext } from '../context';
import { newId } from '../ids';
import type { WebhookEventType } from './schemas';

// The outbox (API.md "Webhooks"): an event is written by the transaction that made the change, with
// one pending delivery per enabled endpoint of the organization that subscribes to its type, so a
// rolled-back change has no event and a committed one is never lost. Nothing is written when no
// endpoint listens. After the commit the deliveries are handed to the worker (a doorbell only: the
// worker's sweep finds every due delivery anyway).

export type OutboxEvent = {
  organizationId: string;
  type: WebhookEventType;
  // The resource as the API returns it (Version, Label history item, Evaluation, Warning, …).
  data: unknown;
  at?: Date;
};

type DeliveryNotifier = (deliveryIds: string[]) => void;
let notifier: DeliveryNotifier | null = null;

// The delivery worker registers how to be told of new deliveries (server/webhooks/worker.ts).
export function registerDeliveryNotifier(notify: DeliveryNotifier | null): void {
  notifier = notify;
}

function eventPayload(event: OutboxEvent & { at: Date }): string {
  return JSON.stringify({
    type: event.type,
    timestamp: event.at.toISOString(),
    organizationId: event.organizationId,
    data: event.data,
  });
}

/**
 * Writes the event and its deliveries in the caller's transaction. `webhookIds` narrows the
 * endpoints (a test event goes to one, even though nobody subscribes to `webhook.test`).
 * Returns the delivery ids (empty when no endpoint listens).
 */
export async function emitEvent(ctx: DbContext, event: OutboxEvent, webhookIds?: string[]): Promise<string[]> {
  return emitEvents(ctx, event.organizationId, [event], webhookIds);
}

// Rows per INSERT statement (far below Postgres's 65,535 parameters per statement).
const rowsPerStatement = 1_000;

/**
 * Writes many events of one organization (an import's versions and label moves) with their
 * deliveries: one read of the endpoints, then one insert per table (per 1,000 rows). Events that no
 * endpoint listens to are not written.
 */
export async function emitEvents(
  ctx: DbContext,
  organizationId: string,
  events: OutboxEvent[],
  webhookIds?: string[],
): Promise<string[]> {
  if (!events.length) return [];
  const targets = await ctx.db
    .select({ id: webhooks.id, events: webhooks.events })
    .from(webhooks)
    .where(
      and(
        eq(webhooks.organizationId, organizationId),
        eq(webhooks.enabled, true),
        webhookIds ? sql`${webhooks.id} = any(${sql.param(webhookIds)}::text[])` : undefined,
      ),
    )
    // Held until the commit: an endpoint deleted meanwhile is waited for and then skipped, never a
    // delivery whose endpoint is gone (a foreign key failure that would undo the caller's write).
    .for('key share');
  if (!targets.length) return [];
  const eventRows: (typeof webhookEvents.$inferInsert)[] = [];
  const deliveryRows: (typeof webhookDeliveries.$inferInsert)[] = [];
  for (const event of events) {
    const listening = webhookIds ? targets : targets.filter((target) => target.events.includes(event.type));
    if (!listening.length) continue;
    const at = event.at ?? new Date();
    const eventId = newId('evt', at.getTime());
    eventRows.push({
      id: eventId,
      organizationId,
      type: event.type,
      payload: eventPayload({ ...event, at }),
      createdAt: at,
    });
    for (const target of listening)
      deliveryRows.push({
        id: newId('whd', at.getTime()),
        organizationId,
        webhookId: target.id,
        eventId,
        type: event.type,
        status: 'pending' as const,
        nextAttemptAt: at,
        createdAt: at,
      });
  }
  for (let i = 0; i < eventRows.length; i += rowsPerStatement)
    await ctx.db.insert(webhookEvents).values(eventRows.slice(i, i + rowsPerStatement));
  for (let i = 0; i < deliveryRows.length; i += rowsPerStatement)
    await ctx.db.insert(webhookDeliveries).values(deliveryRows.slice(i, i + rowsPerStatement));
  const ids = deliveryRows.map((row) => row.id!);
  if (ids.length) ringDoorbell(ctx, ids);
  return ids;
}

/**
 * Sends an event again to one endpoint (redeliver): a new pending delivery, due now, for the same
 * event id (so the same `webhook-id` header), in the caller's transaction. Returns its id.
 */
export async function deliverAgain(
  ctx: DbContext,
  delivery: { organizationId: string; webhookId: string; eventId: string; type: string },
  at: Date = new Date(),
): Promise<string> {
  const id = newId('whd', at.getTime());
  await ctx.db.insert(webhookDeliveries).values({
    id,
    organizationId: delivery.organizationId,
    webhookId: delivery.webhookId,
    eventId: delivery.eventId,
    type: delivery.type,
    status: 'pending',
    nextAttemptAt: at,
    createdAt: at,
  });
  ringDoorbell(ctx, [id]);
  return id;
}

// Tells the worker of new deliveries once they are committed (at once outside a transaction).
function ringDoorbell(ctx: DbContext, ids: string[]): void {
  const notify = () => notifier?.(ids);
  if (ctx.afterCommit) ctx.afterCommit(notify);
  else notify();
}
