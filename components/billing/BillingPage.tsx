'use client';

import './billing.css';
import { useQuery } from '@tanstack/react-query';
import { usePathname, useRouter } from 'next/navigation';
import { useState } from 'react';
import { OrganizationGate } from '@/components/organizations/OrganizationGate';
import { OrganizationPageHeader } from '@/components/organizations/OrganizationPageHeader';
import { Alert } from '@/components/ui/Alert';
import { Button } from '@/components/ui/Button';
import { Card } from '@/components/ui/Card';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { SkeletonRows } from '@/components/ui/States';
import { useTRPC } from '@/lib/trpc/client';
import type { BillingState } from '@/server/billing/schemas';
import { CancelRenewalCard } from './CancelRenewalCard';
import { useBillingState, useStripeRedirects } from './hooks';
import { formatBillingDate } from './links';
import { PlanCard } from './PlanCard';
import { PlanComparison, type PlanAllowances } from './PlanComparison';
import { UsageCard } from './UsageCard';
import { can, type Role } from '@/server/auth/schemas';

type Organization = { id: string; name: string; role: Role; readOnly: boolean };
type CheckoutReturn = 'success' | 'cancelled' | null;
// What the server is configured for: Stripe calls at all (secret key), and checkout (key and Pro price).
export type StripeSetup = { payments: boolean; checkout: boolean };

function CheckoutBanner({
  checkout,
  state,
  billing,
  onDismiss,
}: {
  checkout: CheckoutReturn;
  state: BillingState;
  billing: ReturnType<typeof useBillingState>;
  onDismiss: () => void;
}) {
  const dismiss = (
    <Button size="sm" variant="ghost" onClick={onDismiss}>
      Dismiss
    </Button>
  );
  if (checkout === 'cancelled') {
    return (
      <Alert tone="info" title="Checkout cancelled" action={dismiss}>
        Nothing was charged and the plan did not change. Upgrade whenever you are ready.
      </Alert>
    );
  }
  if (checkout !== 'success') return null;
  if (state.plan === 'pro') {
    return (
      <Alert tone="success" title="Welcome to Pro" action={dismiss}>
        Comprehensive evaluations, {state.datasetCapacity} cases per dataset and{' '}
        {state.creditsPerPeriod.toLocaleString()} credits for this period are available now.
      </Alert>
    );
  }
  if (billing.gaveUp) {
    return (
      <Alert
        tone="warning"
        title="Stripe has not confirmed the payment yet"
        action={
          <Button size="sm" onClick={billing.waitAgain}>
            Check again
          </Button>
        }
      >
        The plan changes when Stripe&apos;s confirmation arrives, which can take a few minutes. You will not be charged
        twice; check again in a moment or come back later.
      </Alert>
    );
  }
  return (
    <Alert tone="info" title="Payment received — the plan changes as soon as Stripe confirms it">
      <span className="inline">
        <span className="spinner billing-spinner" aria-hidden="true" />
        This page checks every few seconds; it usually takes a moment.
      </span>
    </Alert>
  );
}

// An open payment_failed warning: the subscription's latest invoice could not be paid.
function PaymentFailedBanner({
  organization,
  state,
  stripe,
  redirects,
}: {
  organization: Organization;
  state: BillingState;
  stripe: StripeSetup;
  redirects: ReturnType<typeof useStripeRedirects>;
}) {
  const trpc = useTRPC();
  const warnings = useQuery(
    trpc.warnings.list.queryOptions(
      { organizationId: organization.id, state: 'open', kind: 'payment_failed', limit: 1 },
      { staleTime: 0 },
    ),
  );
  const warning = warnings.data?.items[0];
  if (!warning) return null;
  const canUpdate = can(organization.role, 'billing.portal') && state.paymentMethodManageable && stripe.payments;
  return (
    <Alert
      tone="error"
      title="A payment failed"
      action={
        canUpdate ? (
          <Button size="sm" variant="danger" loading={redirects.openingPortal} onClick={redirects.openPortal}>
            Update payment method
          </Button>
        ) : null
      }
    >
      {warning.message}
      {canUpdate
        ? null
        : !can(organization.role, 'billing.portal')
          ? ' Ask an admin to update the payment method.'
          : !stripe.payments
            ? ' This server is not connected to Stripe, so the payment method cannot be updated here.'
            : null}
    </Alert>
  );
}

function NotConfiguredNotice() {
  return (
    <Alert tone="info" title="Billing is not set up on this server">
      Payments go through Stripe, and this installation has no Stripe account configured, so plans cannot be bought or
      changed here. Everything on the current plan keeps working. Whoever runs this server can turn billing on with{' '}
      <code>STRIPE_SECRET_KEY</code>, <code>STRIPE_WEBHOOK_SECRET</code> and <code>STRIPE_PRICE_PRO</code>.
    </Alert>
  );
}

function BillingView({
  organization,
  checkout,
  credits,
  retention,
  stripe,
}: {
  organization: Organization;
  checkout: CheckoutReturn;
  credits: PlanAllowances;
  retention: PlanAllowances;
  stripe: StripeSetup;
}) {
  const router = useRouter();
  const pathname = usePathname();
  const billing = useBillingState(organization.id, { waitForPro: checkout === 'success' });
  const redirects = useStripeRedirects(organization.id);
  const [cancelRefused, setCancelRefused] = useState(false);
  const [cancelled, setCancelled] = useState<BillingState | null>(null);
  const header = (
    <OrganizationPageHeader
      org={organization}
      title="Billing"
      description="The plan, evaluation credits and payment details of this organization."
    />
  );

  if (billing.query.isPending) {
    return (
      <div className="page">
        {header}
        <Card>
          <SkeletonRows rows={4} label="Loading billing" />
        </Card>
      </div>
    );
  }
  if (billing.query.isError) {
    return (
      <div className="page">
        {header}
        <Card>
          <QueryErrorState title="Could not load billing" query={billing.query} />
        </Card>
      </div>
    );
  }

  const state = billing.query.data;
  const pro = state.plan === 'pro';
  const notConfigured = redirects.notConfigured || cancelRefused || (pro ? !stripe.payments : !stripe.checkout);
  const canCancel =
    pro &&
    !state.cancelAtPeriodEnd &&
    state.status !== null &&
    can(organization.role, 'billing.cancelRenewal') &&
    stripe.payments &&
    !cancelRefused;

  return (
    <div className="page billing-page">
      {header}
      <CheckoutBanner
        checkout={checkout}
        state={state}
        billing={billing}
        onDismiss={() => router.replace(pathname, { scroll: false })}
      />
      <PaymentFailedBanner organization={organization} state={state} stripe={stripe} redirects={redirects} />
      {notConfigured ? <NotConfiguredNotice /> : null}
      {cancelled && state.cancelAtPeriodEnd ? (
        <Alert tone="success" title="Renewal cancelled">
          Pro stays active until {formatBillingDate(cancelled.periodEnd)}. After that this organization moves to the
          Free plan; nothing is deleted.
        </Alert>
      ) : null}
      <div className="billing-grid">
        <PlanCard
          organization={organization}
          state={state}
          redirects={redirects}
          configured={pro ? stripe.payments : stripe.checkout}
        />
        <UsageCard state={state} />
      </div>
      <PlanComparison current={state.plan} credits={credits} retention={retention} />
      {canCancel ? (
        <CancelRenewalCard
          organization={organization}
          state={state}
          freeCredits={credits.free}
          onCancelled={setCancelled}
          onNotConfigured={() => setCancelRefused(true)}
        />
      ) : null}
    </div>
  );
}

export function BillingPage({
  organizationId,
  checkout,
  credits,
  retention,
  stripe,
}: {
  organizationId: string;
  checkout: CheckoutReturn;
  credits: PlanAllowances;
  retention: PlanAllowances;
  stripe: StripeSetup;
}) {
  return (
    <OrganizationGate organizationId={organizationId}>
      {(organization) => (
        <BillingView
          organization={organization}
          checkout={checkout}
          credits={credits}
          retention={retention}
          stripe={stripe}
        />
      )}
    </OrganizationGate>
  );
}
