import Stripe from 'stripe';
import { config } from '../config';
import { AppError } from '../errors';
import { log } from '../log';

// The one Stripe client (the official SDK), configured from API.md "Billing": STRIPE_SECRET_KEY,
// STRIPE_API_BASE (tests point it at a local server speaking Stripe's API), STRIPE_PRICE_PRO.

export type StripeSetup = { client: Stripe; pricePro: string };

let cached: { key: string; base: string; client: Stripe } | undefined;

function notConfigured(what: string): AppError {
  return new AppError(
    'unavailable',
    `Billing is not configured on this server (${what} is not set).`,
    { reason: 'billing_not_configured' },
    { 'retry-after': '3600' },
  );
}

// The client, or 503 unavailable (details.reason billing_not_configured) without a secret key.
export function stripeClient(): Stripe {
  const { stripeSecretKey: key, stripeApiBase: base } = config();
  if (!key) throw notConfigured('STRIPE_SECRET_KEY');
  if (cached?.key === key && cached.base === base) return cached.client;
  const url = new URL(base);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  // A base with a path (`http://proxy/stripe`) prefixes every request path; the SDK only takes a host.
  const prefix = url.pathname.replace(/\/+$/, '');
  const node = Stripe.createNodeHttpClient();
  const httpClient = prefix
    ? Object.assign(Object.create(node) as typeof node, {
        makeRequest: (...args: Parameters<typeof node.makeRequest>) => {
          args[2] = `${prefix}${args[2]}`;
          return node.makeRequest(...args);
        },
      })
    : undefined;
  const client = new Stripe(key, {
    ...(httpClient ? { httpClient } : {}),
    host: url.hostname,
    port: url.port || (protocol === 'http' ? 80 : 443),
    protocol,
    // A slow provider answers 503 quickly instead of holding the operation's transaction.
    timeout: 10_000,
    maxNetworkRetries: 1,
    telemetry: false,
    appInfo: { name: 'promptloop' },
  });
  cached = { key, base, client };
  return client;
}

// What checkout needs: the client and the Pro price.
export function stripeForCheckout(): StripeSetup {
  const client = stripeClient();
  const pricePro = config().stripePricePro;
  if (!pricePro) throw notConfigured('STRIPE_PRICE_PRO');
  return { client, pricePro };
}

/**
 * Runs one Stripe call. Any failure of the provider (unreachable, timed out, or refusing the
 * request) is `503 unavailable` with Retry-After: the caller can do nothing about it but try
 * again later, and nothing was changed on our side.
 */
export async function callStripe<T>(operation: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof AppError) throw error;
    const stripeError = error instanceof Stripe.errors.StripeError ? error : null;
    // Unreachable, or down on its side (5xx, 429): try again soon. Anything else is a refusal.
    const connection =
      !stripeError ||
      stripeError instanceof Stripe.errors.StripeConnectionError ||
      (stripeError.statusCode ?? 500) >= 500 ||
      stripeError.statusCode === 429;
    log.warn(
      {
        operation,
        type: stripeError?.type,
        status: stripeError?.statusCode,
        code: stripeError?.code,
        message: (error as Error).message,
      },
      'stripe call failed',
    );
    throw new AppError(
      'unavailable',
      connection
        ? 'The payment provider could not be reached. Try again in a moment.'
        : 'The payment provider refused the request. Try again later, or contact support.',
      {
        reason: connection ? 'payment_provider_unavailable' : 'payment_provider_error',
        ...(stripeError?.statusCode ? { providerStatus: stripeError.statusCode } : {}),
        ...(stripeError?.code ? { providerCode: stripeError.code } : {}),
      },
      { 'retry-after': connection ? '5' : '60' },
    );
  }
}
