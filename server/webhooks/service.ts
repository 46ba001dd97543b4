import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import type { Page } from '../paging';
import type { Webhook, WebhookDelivery } from './schemas';

// Webhook endpoints and their delivery log — being built (M11 helper "webhooks").
const notBuilt = (): never => {
  throw new Error('webhooks: not built yet');
};

export async function listWebhooks(
  _ctx: ServiceContext,
  _input: OperationInput<'list_webhooks'>,
): Promise<Page<Webhook>> {
  return notBuilt();
}
export async function createWebhook(
  _ctx: ServiceContext,
  _input: OperationInput<'create_webhook'>,
): Promise<{ webhook: Webhook; secret: string }> {
  return notBuilt();
}
export async function getWebhook(_ctx: ServiceContext, _input: OperationInput<'get_webhook'>): Promise<Webhook> {
  return notBuilt();
}
export async function updateWebhook(_ctx: ServiceContext, _input: OperationInput<'update_webhook'>): Promise<Webhook> {
  return notBuilt();
}
export async function deleteWebhook(_ctx: ServiceContext, _input: OperationInput<'delete_webhook'>): Promise<void> {
  return notBuilt();
}
export async function testWebhook(
  _ctx: ServiceContext,
  _input: OperationInput<'test_webhook'>,
): Promise<{ deliveryId: string }> {
  return notBuilt();
}
export async function listWebhookDeliveries(
  _ctx: ServiceContext,
  _input: OperationInput<'list_webhook_deliveries'>,
): Promise<Page<WebhookDelivery>> {
  return notBuilt();
}
export async function getWebhookDelivery(
  _ctx: ServiceContext,
  _input: OperationInput<'get_webhook_delivery'>,
): Promise<WebhookDelivery & { payload: string; responseExcerpt: string | null }> {
  return notBuilt();
}
export async function redeliverWebhookDelivery(
  _ctx: ServiceContext,
  _input: OperationInput<'redeliver_webhook_delivery'>,
): Promise<{ deliveryId: string }> {
  return notBuilt();
}
