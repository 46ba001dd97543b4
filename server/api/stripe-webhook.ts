import { getDb } from '@/db/client';
import { AppError } from '../errors';
import { config } from '../config';
import { readBody } from '../http/body';
import { log } from '../log';
import { applyStripeEvent, parseEvent, verifySignature } from '../billing/webhook';
import { assertCleanQuery } from './strict-input';
import { errorResponse, json, newRequestId, reportServerError, toAppError } from './http';

// The edge of POST /api/webhooks/stripe (app/api/webhooks/stripe/route.ts): method, configuration,
// a body of at most 1 MiB, the signature on those raw bytes, the event's JSON (input hygiene), then
// the event applied once (server/billing/webhook.ts), committed before the 200.

const maxWebhookBytes = 1024 * 1024;

export async function handleStripeWebhook(request: Request): Promise<Response> {
  const requestId = newRequestId();
  const headers = { 'x-request-id': requestId, 'cache-control': 'no-store' };
  try {
    if (request.method !== 'POST') throw new AppError('method_not_allowed', 'Use POST.', {}, { allow: 'POST' });
    // Parameters the operator put in the endpoint's URL are theirs; a poison string is refused (API.md).
    assertCleanQuery(new URL(request.url).search);
    const secrets = config().stripeWebhookSecrets;
    if (!secrets.length) {
      throw new AppError(
        'unavailable',
        'Billing webhooks are not configured on this server (STRIPE_WEBHOOK_SECRET is not set).',
        { reason: 'billing_not_configured' },
        { 'retry-after': '3600' },
      );
    }
    // API.md: "A rejected delivery is `400`": an oversized one included.
    const payload = await readBody(request, { limit: maxWebhookBytes }).catch((error: unknown) => {
      if (toAppError(error).code !== 'payload_too_large') throw error;
      // The rest of the body is not read: the connection closes, as after any 413.
      throw new AppError(
        'invalid_request',
        'The event is larger than 1 MiB.',
        { reason: 'payload_too_large' },
        { connection: 'close' },
      );
    });
    verifySignature(payload, request.headers.get('stripe-signature'), secrets);
    const event = parseEvent(payload);
    const applied = await applyStripeEvent(await getDb(), event);
    log.info(
      {
        requestId,
        eventId: event.id,
        type: event.type,
        outcome: applied?.outcome ?? 'duplicate',
        organizationId: applied?.organizationId,
      },
      'stripe event',
    );
    return json(200, { received: true }, headers);
  } catch (error) {
    const appError = toAppError(error);
    reportServerError(requestId, 'stripe_webhook', error, appError);
    return errorResponse(appError, requestId, headers);
  }
}
