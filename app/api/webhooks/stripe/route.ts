import { handleStripeWebhook } from '@/server/api/stripe-webhook';

// Stripe's webhook deliveries (server/billing/webhook.ts): verified on the raw body, applied once.
export const dynamic = 'force-dynamic';

const handler = (request: Request) => handleStripeWebhook(request);
export { handler as GET, handler as POST, handler as PUT, handler as PATCH, handler as DELETE };
