import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

// A real local HTTP server speaking the parts of Stripe's API the service calls (form-encoded
// requests, Bearer secret key, Stripe's error envelope), and signed webhook deliveries built with
// the SDK's own test-header helper. Requests are recorded with their flattened form fields
// (`subscription_data[metadata][organizationId]`).

export const stripeKey = 'sk_test_promptloop';
export const webhookSecret = 'whsec_test_current';
export const oldWebhookSecret = 'whsec_test_previous';
export const pricePro = 'price_test_pro';

export type StripeRequest = {
  method: string;
  path: string;
  rawPath: string;
  form: Record<string, string>;
  headers: IncomingMessage['headers'];
};

export type Scripted = { status: number; type?: string; code?: string; message?: string; body?: unknown };

export type FakeStripe = {
  baseUrl: string;
  requests: StripeRequest[];
  // Subscriptions known to the fake (what subscriptions.update answers from).
  subscriptions: Map<string, Record<string, unknown>>;
  // Runs before each API request is answered (the request waits for it).
  onRequest: ((request: StripeRequest) => Promise<void>) | null;
  // The next calls answer with this HTTP status and Stripe error, or with `body` (once per entry).
  failNext: (...failures: Scripted[]) => void;
  close: () => Promise<void>;
};

function readForm(req: IncomingMessage): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')))));
    req.on('error', reject);
  });
}

export async function startFakeStripe(options: { port?: number } = {}): Promise<FakeStripe> {
  const requests: StripeRequest[] = [];
  const subscriptions = new Map<string, Record<string, unknown>>();
  const failures: Scripted[] = [];
  let sequence = 0;
  let baseUrl = '';
  const fake = { onRequest: null } as FakeStripe;
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://stripe.test');
    const rawPath = url.pathname;
    // Served under a path too (a proxy in front of Stripe): `/anything/v1/…` is `/v1/…`.
    url.pathname = url.pathname.replace(/^\/[^/]+(?=\/v1\/)/, '');
    const send = (status: number, body: unknown) =>
      res
        .writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${++sequence}` })
        .end(JSON.stringify(body));
    if (req.method === 'GET' && (url.pathname.startsWith('/checkout/') || url.pathname.startsWith('/portal/'))) {
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(`<!doctype html><title>Stripe test page</title><h1>Stripe test page</h1><p id="path">${url.pathname}</p>`);
      return;
    }
    const form = await readForm(req);
    const recorded = { method: req.method ?? 'GET', path: url.pathname, rawPath, form, headers: req.headers };
    requests.push(recorded);
    if (fake.onRequest) await fake.onRequest(recorded);
    if (req.headers.authorization !== `Bearer ${stripeKey}`)
      return send(401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided.' } });
    const failure = failures.shift();
    if (failure)
      return send(
        failure.status,
        failure.body ?? {
          error: {
            type: failure.type ?? 'api_error',
            ...(failure.code ? { code: failure.code } : {}),
            message: failure.message ?? 'Scripted failure.',
          },
        },
      );
    const id = (prefix: string) => `${prefix}_test_${++sequence}`;
    if (req.method === 'POST' && url.pathname === '/v1/checkout/sessions') {
      const sessionId = id('cs');
      return send(200, {
        id: sessionId,
        object: 'checkout.session',
        mode: form.mode,
        client_reference_id: form.client_reference_id ?? null,
        customer: form.customer ?? null,
        url: `${baseUrl}/checkout/${sessionId}`,
        success_url: form.success_url,
        cancel_url: form.cancel_url,
      });
    }
    if (req.method === 'POST' && url.pathname === '/v1/billing_portal/sessions') {
      const sessionId = id('bps');
      return send(200, {
        id: sessionId,
        object: 'billing_portal.session',
        customer: form.customer,
        url: `${baseUrl}/portal/${sessionId}`,
        return_url: form.return_url,
      });
    }
    const subscriptionPath = /^\/v1\/subscriptions\/([^/]+)$/.exec(url.pathname);
    if (subscriptionPath && (req.method === 'POST' || req.method === 'GET')) {
      const current = subscriptions.get(subscriptionPath[1]);
      if (!current)
        return send(404, {
          error: {
            type: 'invalid_request_error',
            code: 'resource_missing',
            message: `No such subscription: '${subscriptionPath[1]}'`,
          },
        });
      const updated = {
        ...current,
        ...(form.cancel_at_period_end !== undefined
          ? { cancel_at_period_end: form.cancel_at_period_end === 'true' }
          : {}),
      };
      subscriptions.set(subscriptionPath[1], updated);
      return send(200, updated);
    }
    send(404, {
      error: { type: 'invalid_request_error', message: `Unrecognized request URL (${req.method}: ${url.pathname}).` },
    });
  });
  await new Promise<void>((resolve, reject) =>
    server.once('error', reject).listen(options.port ?? 0, '127.0.0.1', resolve),
  );
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  Object.assign(fake, {
    baseUrl,
    requests,
    subscriptions,
    failNext: (...f: Scripted[]) => failures.push(...f),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
  return fake;
}

// Points this test file's process at the fake (config is read once per process).
export function useFakeStripe(fake: { baseUrl: string }, env: Record<string, string> = {}): void {
  process.env.STRIPE_SECRET_KEY = stripeKey;
  process.env.STRIPE_WEBHOOK_SECRET = `${webhookSecret},${oldWebhookSecret}`;
  process.env.STRIPE_PRICE_PRO = pricePro;
  process.env.STRIPE_API_BASE = fake.baseUrl;
  Object.assign(process.env, env);
}

// ---- events ----

let eventSequence = 0;
const nowSeconds = () => Math.floor(Date.now() / 1000);

export type StripeEvent = {
  id: string;
  object: 'event';
  type: string;
  created: number;
  livemode: false;
  api_version: string;
  data: { object: Record<string, unknown> };
};

export function event(
  type: string,
  object: Record<string, unknown>,
  options: { id?: string; created?: number } = {},
): StripeEvent {
  return {
    id: options.id ?? `evt_test_${Date.now()}_${++eventSequence}`,
    object: 'event',
    type,
    created: options.created ?? nowSeconds(),
    livemode: false,
    api_version: Stripe.API_VERSION,
    data: { object },
  };
}

export type SubscriptionFields = {
  id: string;
  organizationId?: string | null;
  customer?: string;
  status?: string;
  periodStart?: number;
  periodEnd?: number;
  cancelAtPeriodEnd?: boolean;
  cancelAt?: number | null;
};

// A subscription object in the current API version's shape (the period on its item).
export function subscription(fields: SubscriptionFields): Record<string, unknown> {
  const start = fields.periodStart ?? nowSeconds();
  const end = fields.periodEnd ?? start + 30 * 24 * 3600;
  return {
    id: fields.id,
    object: 'subscription',
    customer: fields.customer ?? 'cus_test_default',
    status: fields.status ?? 'active',
    cancel_at_period_end: fields.cancelAtPeriodEnd ?? false,
    cancel_at: fields.cancelAt ?? null,
    metadata: fields.organizationId ? { organizationId: fields.organizationId } : {},
    items: {
      object: 'list',
      data: [
        {
          id: `si_${fields.id}`,
          object: 'subscription_item',
          price: { id: pricePro, object: 'price' },
          current_period_start: start,
          current_period_end: end,
        },
      ],
    },
  };
}

export function checkoutCompleted(fields: {
  organizationId: string;
  customer: string;
  subscription: string;
  paymentStatus?: string;
}): Record<string, unknown> {
  return {
    id: `cs_test_${++eventSequence}`,
    object: 'checkout.session',
    mode: 'subscription',
    client_reference_id: fields.organizationId,
    customer: fields.customer,
    subscription: fields.subscription,
    payment_status: fields.paymentStatus ?? 'paid',
    status: 'complete',
    metadata: { organizationId: fields.organizationId },
  };
}

export function invoice(fields: {
  subscription: string;
  customer?: string;
  amountDue?: number;
  attempt?: number;
}): Record<string, unknown> {
  return {
    id: `in_test_${++eventSequence}`,
    object: 'invoice',
    customer: fields.customer ?? 'cus_test_default',
    amount_due: fields.amountDue ?? 2900,
    currency: 'usd',
    attempt_count: fields.attempt ?? 1,
    next_payment_attempt: nowSeconds() + 3 * 24 * 3600,
    parent: { type: 'subscription_details', subscription_details: { subscription: fields.subscription, metadata: {} } },
  };
}

export function signatureFor(payload: string, options: { secret?: string; timestamp?: number } = {}): string {
  return Stripe.webhooks.generateTestHeaderString({
    payload,
    secret: options.secret ?? webhookSecret,
    timestamp: options.timestamp,
  });
}

export const uniqueId = (prefix: string) => `${prefix}_test_${Date.now()}_${++eventSequence}`;
