import type { Metadata } from 'next';
import { BillingPage } from '@/components/billing/BillingPage';
import { getDb } from '@/db/client';
import { config } from '@/server/config';
import { retentionInForce } from '@/server/traces/retention';

export const metadata: Metadata = { title: 'Billing' };

// Stripe sends the browser back with ?checkout=success or ?checkout=cancelled.
export default async function Page({
  params,
  searchParams,
}: {
  params: Promise<{ orgId: string }>;
  searchParams: Promise<{ checkout?: string | string[] }>;
}) {
  const [{ orgId }, { checkout }] = await Promise.all([params, searchParams]);
  const { evalCreditsFree, evalCreditsPro, stripeSecretKey, stripePricePro } = config();
  const traceRetentionDays = await retentionInForce(await getDb());
  return (
    <BillingPage
      organizationId={orgId}
      checkout={checkout === 'success' || checkout === 'cancelled' ? checkout : null}
      credits={{ free: evalCreditsFree, pro: evalCreditsPro }}
      retention={traceRetentionDays}
      stripe={{ payments: Boolean(stripeSecretKey), checkout: Boolean(stripeSecretKey && stripePricePro) }}
    />
  );
}
