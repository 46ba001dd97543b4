import { randomBytes } from 'node:crypto';
import { and, desc, eq, lt, sql } from 'drizzle-orm';
import { webhookDeliveries, webhookEvents, webhooks } from '@/db/schema';
import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { AppError, invalidRequest, notFound } from '../errors';
import { isId, newId } from '../ids';
import { timeCursor, toPage, type Page } from '../paging';
import { idCursor } from '../id-cursor';
import { authorize } from '../access/permissions';
import { authorizeOrganizationWrite } from '../access/organization';
import { recordAudit } from '../audit/service';
import { seal } from '../credentials/sealed';
import {
  checkTargetUrl,
  resolveTarget,
  systemResolver,
  TargetRefused,
  targetPolicy,
  TargetUnresolved,
  type Resolver,
} from './targets';
import { deliverAgain, emitEvent } from './outbox';
import { disableWebhook } from './disable';
import type { Webhook, WebhookDelivery } from './schemas';

// Webhook endpoints and their delivery log (API.md "Webhooks"): every route is admin-only. The
// secret is sealed (the worker must read it to sign) and shown once, at creation.

type WebhookRow = typeof webhooks.$inferSelect;
type DeliveryRow = typeof webhookDeliveries.$inferSelect;
type WebhookDeliveryDetail = WebhookDelivery & { payload: string; responseExcerpt: string | null };

// The purpose the secrets are sealed under (the delivery worker unseals with the same one).
const webhookSecretPurpose = 'webhook-secrets';

function toWebhook(row: WebhookRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    enabled: row.enabled,
    description: row.description,
    createdAt: row.createdAt.toISOString(),
    disabledReason: row.disabledReason,
  };
}

function toDelivery(row: DeliveryRow): WebhookDelivery {
  const delivered = row.status === 'delivered';
  return {
    id: row.id,
    eventId: row.eventId,
    type: row.type,
    status: row.status,
    attempts: row.attempts,
    lastStatusCode: row.lastStatusCode,
    // Once delivered there is nothing left to try and no error to show.
    lastError: delivered ? null : row.lastError,
    nextAttemptAt: delivered ? null : (row.nextAttemptAt?.toISOString() ?? null),
    deliveredAt: row.deliveredAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    lastAttemptAt: row.lastAttemptAt?.toISOString() ?? null,
  };
}

// A slow resolver must not hold the request (and its transaction) open: give up after 5 s.
const lookupTimeoutMs = 5000;
const boundedResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('DNS lookup timed out')), lookupTimeoutMs);
    systemResolver(hostname)
      .then(resolve, reject)
      .finally(() => clearTimeout(timer));
  });

// The URL rules and where its host resolves (SSRF), as a 400 on the `url` field. A name that does
// not resolve (not yet, or not from this machine) is accepted: only an address can be unsafe, and
// every delivery resolves it again and refuses it then (deliver.ts), so its log shows why it failed.
// With WEBHOOK_ALLOW_PRIVATE no address is refused, so the name is not looked up at all.
async function assertTarget(url: string): Promise<void> {
  try {
    const policy = targetPolicy();
    const target = checkTargetUrl(url, policy);
    if (!policy.allowPrivate) await resolveTarget(target, policy, boundedResolver);
  } catch (error) {
    if (error instanceof TargetUnresolved) return;
    if (!(error instanceof TargetRefused)) throw error;
    throw invalidRequest(`The webhook URL cannot be used: ${error.message}`, [{ path: 'url', message: error.message }]);
  }
}

async function findWebhook(
  ctx: ServiceContext,
  organizationId: string,
  webhookId: string,
  options: { lock?: boolean } = {},
): Promise<WebhookRow> {
  if (!isId('whk', webhookId)) throw notFound('Webhook');
  const query = ctx.db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.organizationId, organizationId), eq(webhooks.id, webhookId)));
  const [row] = options.lock ? await query.for('update') : await query;
  if (!row) throw notFound('Webhook');
  return row;
}

async function findDelivery(ctx: ServiceContext, webhook: WebhookRow, deliveryId: string): Promise<DeliveryRow> {
  if (!isId('whd', deliveryId)) throw notFound('Delivery');
  const [row] = await ctx.db
    .select()
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.organizationId, webhook.organizationId),
        eq(webhookDeliveries.webhookId, webhook.id),
        eq(webhookDeliveries.id, deliveryId),
      ),
    );
  if (!row) throw notFound('Delivery');
  return row;
}

function assertEnabled(webhook: WebhookRow): void {
  if (!webhook.enabled)
    throw new AppError('invalid_state', 'This webhook is disabled; enable it first.', {
      state: 'disabled',
      disabledReason: webhook.disabledReason,
    });
}

// Newest first (ids sort by creation time).
export async function listWebhooks(
  ctx: ServiceContext,
  { organizationId, ...page }: OperationInput<'list_webhooks'>,
): Promise<Page<Webhook>> {
  await authorize(ctx, organizationId, 'webhooks.manage');
  const conditions = [eq(webhooks.organizationId, organizationId)];
  if (page.cursor) conditions.push(lt(webhooks.id, idCursor(page.cursor, 'whk')));
  const rows = await ctx.db
    .select()
    .from(webhooks)
    .where(and(...conditions))
    .orderBy(desc(webhooks.id))
    .limit(page.limit + 1);
  return toPage(rows, page.limit, (r) => [r.id], toWebhook);
}

export async function createWebhook(
  ctx: ServiceContext,
  { organizationId, url, events, description }: OperationInput<'create_webhook'>,
): Promise<{ webhook: Webhook; secret: string }> {
  await authorizeOrganizationWrite(ctx, organizationId, 'webhooks.manage');
  await assertTarget(url);
  // Standard Webhooks: whsec_ + base64 of the key bytes (32 random bytes).
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const [row] = await ctx.db
    .insert(webhooks)
    .values({
      id: newId('whk'),
      organizationId,
      url,
      events,
      enabled: true,
      description: description ?? null,
      secretSealed: seal(webhookSecretPurpose, secret),
      createdBy: ctx.actor.userId,
    })
    .returning();
  await recordAudit(ctx, {
    organizationId,
    operation: 'webhook.create',
    targetType: 'webhook',
    targetId: row.id,
    details: { url, events },
  });
  return { webhook: toWebhook(row), secret };
}

export async function getWebhook(
  ctx: ServiceContext,
  { organizationId, webhookId }: OperationInput<'get_webhook'>,
): Promise<Webhook> {
  await authorize(ctx, organizationId, 'webhooks.manage');
  return toWebhook(await findWebhook(ctx, organizationId, webhookId));
}

/**
 * Changes url, events or description, or turns the endpoint off or on. Turning it off fails its
 * pending deliveries (disableWebhook); turning it on clears disabledReason and the failure run, resolves
 * its webhook_failing warning and sends nothing that was missed. Fields equal to the current values change nothing and an update
 * that changes nothing records no audit entry.
 */
export async function updateWebhook(
  ctx: ServiceContext,
  { organizationId, webhookId, url, events, enabled, description }: OperationInput<'update_webhook'>,
  resolveWarning: ResolveFailingWarning,
): Promise<Webhook> {
  await authorizeOrganizationWrite(ctx, organizationId, 'webhooks.manage');
  const current = await findWebhook(ctx, organizationId, webhookId, { lock: true });
  if (url !== undefined && url !== current.url) await assertTarget(url);

  const changes: Partial<typeof webhooks.$inferInsert> = {};
  if (url !== undefined && url !== current.url) changes.url = url;
  if (events !== undefined && events.join('\n') !== current.events.join('\n')) changes.events = events;
  if (description !== undefined && description !== current.description) changes.description = description;
  const now = new Date();
  if (Object.keys(changes).length)
    await ctx.db
      .update(webhooks)
      .set({ ...changes, updatedAt: now })
      .where(eq(webhooks.id, current.id));
  let toggled: 'enabled' | 'disabled' | null = null;
  if (enabled === false && current.enabled) {
    await disableWebhook(ctx, current.id, null, now);
    toggled = 'disabled';
  } else if (enabled === true && !current.enabled) {
    await ctx.db
      .update(webhooks)
      .set({ enabled: true, disabledReason: null, failingSince: null, updatedAt: now })
      .where(eq(webhooks.id, current.id));
    // An admin turning it back on has dealt with whatever made it fail.
    await resolveWarning(ctx.db, { organizationId, kind: 'webhook_failing', subjectId: current.id, at: now });
    toggled = 'enabled';
  }
  if (!Object.keys(changes).length && !toggled) return toWebhook(current);

  await recordAudit(ctx, {
    organizationId,
    operation: 'webhook.update',
    targetType: 'webhook',
    targetId: current.id,
    details: { ...changes, ...(toggled ? { enabled: toggled === 'enabled' } : {}) },
  });
  return toWebhook(await findWebhook(ctx, organizationId, current.id));
}

// The warnings area's resolveWarning, handed in by the operation's binding (server/api/handlers.ts):
// warnings already depend on webhooks (warning.opened is an event), so webhooks cannot import them.
type ResolveFailingWarning = (
  db: ServiceContext['db'],
  warning: { organizationId: string; kind: 'webhook_failing'; subjectId: string; at: Date },
) => Promise<void>;

// The endpoint and its delivery log; events that no other endpoint's delivery still needs go too.
export async function deleteWebhook(
  ctx: ServiceContext,
  { organizationId, webhookId }: OperationInput<'delete_webhook'>,
): Promise<void> {
  await authorizeOrganizationWrite(ctx, organizationId, 'webhooks.manage');
  const webhook = await findWebhook(ctx, organizationId, webhookId, { lock: true });
  // One statement: its subquery still sees the deleted deliveries, hence "another endpoint's".
  await ctx.db.execute(sql`
    with gone as (delete from webhook_deliveries where webhook_id = ${webhook.id} returning event_id)
    delete from webhook_events e
    where e.id in (select event_id from gone)
      and not exists (select 1 from webhook_deliveries d where d.event_id = e.id and d.webhook_id <> ${webhook.id})`);
  await ctx.db.delete(webhooks).where(eq(webhooks.id, webhook.id));
  await recordAudit(ctx, {
    organizationId,
    operation: 'webhook.delete',
    targetType: 'webhook',
    targetId: webhook.id,
    details: { url: webhook.url, events: webhook.events },
  });
}

// A webhook.test event to this endpoint only (nobody subscribes to it); the endpoint row is locked
// so that it cannot be disabled between the check and the delivery.
export async function testWebhook(
  ctx: ServiceContext,
  { organizationId, webhookId }: OperationInput<'test_webhook'>,
): Promise<{ deliveryId: string }> {
  await authorizeOrganizationWrite(ctx, organizationId, 'webhooks.manage');
  const webhook = await findWebhook(ctx, organizationId, webhookId, { lock: true });
  assertEnabled(webhook);
  const [deliveryId] = await emitEvent(ctx, { organizationId, type: 'webhook.test', data: { webhookId: webhook.id } }, [
    webhook.id,
  ]);
  await recordAudit(ctx, {
    organizationId,
    operation: 'webhook.test',
    targetType: 'webhook',
    targetId: webhook.id,
    details: { deliveryId },
  });
  return { deliveryId };
}

// Newest first: (createdAt, id) descending, the order of the endpoint's delivery index.
export async function listWebhookDeliveries(
  ctx: ServiceContext,
  { organizationId, webhookId, ...page }: OperationInput<'list_webhook_deliveries'>,
): Promise<Page<WebhookDelivery>> {
  await authorize(ctx, organizationId, 'webhooks.manage');
  const webhook = await findWebhook(ctx, organizationId, webhookId);
  const conditions = [eq(webhookDeliveries.webhookId, webhook.id)];
  if (page.cursor) {
    const { at, id } = timeCursor(page.cursor);
    conditions.push(
      sql`(${webhookDeliveries.createdAt}, ${webhookDeliveries.id}) < (${at.toISOString()}::timestamptz, ${id})`,
    );
  }
  const rows = await ctx.db
    .select()
    .from(webhookDeliveries)
    .where(and(...conditions))
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(page.limit + 1);
  return toPage(rows, page.limit, (r) => [r.createdAt.toISOString(), r.id], toDelivery);
}

export async function getWebhookDelivery(
  ctx: ServiceContext,
  { organizationId, webhookId, deliveryId }: OperationInput<'get_webhook_delivery'>,
): Promise<WebhookDeliveryDetail> {
  await authorize(ctx, organizationId, 'webhooks.manage');
  const webhook = await findWebhook(ctx, organizationId, webhookId);
  const delivery = await findDelivery(ctx, webhook, deliveryId);
  const [event] = await ctx.db
    .select({ payload: webhookEvents.payload })
    .from(webhookEvents)
    .where(eq(webhookEvents.id, delivery.eventId));
  return { ...toDelivery(delivery), payload: event.payload, responseExcerpt: delivery.lastResponseExcerpt };
}

// A new delivery of the same event (same webhook-id), due now; the old row keeps its history.
export async function redeliverWebhookDelivery(
  ctx: ServiceContext,
  { organizationId, webhookId, deliveryId }: OperationInput<'redeliver_webhook_delivery'>,
): Promise<{ deliveryId: string }> {
  await authorizeOrganizationWrite(ctx, organizationId, 'webhooks.manage');
  const webhook = await findWebhook(ctx, organizationId, webhookId, { lock: true });
  const delivery = await findDelivery(ctx, webhook, deliveryId);
  assertEnabled(webhook);
  const id = await deliverAgain(ctx, delivery);
  await recordAudit(ctx, {
    organizationId,
    operation: 'webhook.redeliver',
    targetType: 'webhook',
    targetId: webhook.id,
    details: { deliveryId: id, of: delivery.id, eventId: delivery.eventId },
  });
  return { deliveryId: id };
}
