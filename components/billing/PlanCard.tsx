'use client';

import { planName, retentionText } from '@/components/format';
import { Alert } from '@/components/ui/Alert';
import { Badge, type BadgeTone } from '@/components/ui/Badge';
import { Button } from '@/components/ui/Button';
import { Card, CardBody, CardFooter } from '@/components/ui/Card';
import { ClockIcon, CreditCardIcon, ZapIcon } from '@/components/ui/icons';
import { quickEvaluationSize } from '@/components/datasets/types';
import type { BillingState } from '@/server/billing/schemas';
import { redirectErrorText, type useStripeRedirects } from './hooks';
import { formatBillingDate } from './links';
import { can, type Role } from '@/server/auth/schemas';

type Organization = { id: string; role: Role; readOnly: boolean };

// Stripe's subscription statuses (https://docs.stripe.com/api/subscriptions/object#subscription_object-status).
const statusMeta: Record<string, { label: string; tone: BadgeTone; title: string }> = {
  active: { label: 'Active', tone: 'success', title: 'The subscription is paid and active.' },
  trialing: { label: 'Trial', tone: 'accent', title: 'The subscription is in its trial period.' },
  past_due: { label: 'Past due', tone: 'warning', title: 'The latest payment failed; Stripe is retrying it.' },
  unpaid: { label: 'Unpaid', tone: 'danger', title: 'Stripe stopped retrying the payment.' },
  incomplete: { label: 'Incomplete', tone: 'warning', title: 'The first payment has not completed.' },
  incomplete_expired: { label: 'Expired', tone: 'neutral', title: 'The first payment never completed.' },
  canceled: { label: 'Canceled', tone: 'neutral', title: 'The subscription has ended.' },
  paused: { label: 'Paused', tone: 'neutral', title: 'The subscription is paused.' },
};

function StatusBadge({ state }: { state: BillingState }) {
  if (!state.status) return null;
  const meta = statusMeta[state.status] ?? {
    label: state.status,
    tone: 'neutral' as const,
    title: 'Subscription status at Stripe.',
  };
  return (
    <Badge tone={meta.tone} title={meta.title}>
      {meta.label}
    </Badge>
  );
}

function RenewalLine({ state }: { state: BillingState }) {
  const end = formatBillingDate(state.periodEnd);
  let text: string;
  if (state.plan === 'pro')
    text =
      state.cancelAtPeriodEnd || !state.renewsAt
        ? `Cancels on ${end} — Pro until then`
        : `Renews on ${formatBillingDate(state.renewsAt)}`;
  else text = `Credits reset on ${end}`;
  return (
    <p className="billing-renewal" data-cancelling={state.cancelAtPeriodEnd || undefined}>
      <ClockIcon size={15} />
      <span>{text}</span>
    </p>
  );
}

export function PlanCard({
  organization,
  state,
  redirects,
  configured,
}: {
  organization: Organization;
  state: BillingState;
  redirects: ReturnType<typeof useStripeRedirects>;
  configured: boolean;
}) {
  const pro = state.plan === 'pro';
  // Checkout and the Stripe portal need the same role.
  const isAdmin = can(organization.role, 'billing.checkout');
  const error = redirects.error && !redirects.notConfigured ? redirects.error : null;
  const canUpgrade = !pro && isAdmin && !organization.readOnly && configured;
  const canManage = isAdmin && state.paymentMethodManageable && configured;

  let note: string;
  if (!pro && !isAdmin) note = 'Ask an admin to upgrade.';
  else if (!pro && organization.readOnly) note = 'This organization is read-only while its deletion is scheduled.';
  else if (!pro && configured)
    note = 'Checkout is handled by Stripe. The plan changes as soon as Stripe confirms the payment.';
  else if (!pro) note = 'Upgrading needs billing to be set up on this server.';
  else if (!isAdmin) note = 'Admins manage the payment method and invoices.';
  else
    note = state.paymentMethodManageable
      ? 'Payment method and invoices are managed in Stripe.'
      : 'Payments are handled by Stripe.';

  return (
    <Card className="billing-plan" aria-label="Current plan">
      <CardBody className="stack">
        <div className="billing-plan-head">
          <div className="billing-plan-title">
            <span className="billing-eyebrow">Current plan</span>
            <h2 className="billing-plan-name">{planName(state.plan)}</h2>
          </div>
          <StatusBadge state={state} />
        </div>
        <p className="muted">
          {pro
            ? `Comprehensive evaluations over every case, ${state.datasetCapacity} cases per dataset and ${state.creditsPerPeriod.toLocaleString()} evaluation credits each billing period.`
            : `Quick evaluations on the first ${quickEvaluationSize} cases, ${state.datasetCapacity} cases per dataset and ${state.creditsPerPeriod.toLocaleString()} evaluation credits a month.`}{' '}
          Traces are kept for {retentionText(state.traceRetentionDays)} (each for the retention in force when it
          arrived).
        </p>
        <RenewalLine state={state} />
        <dl className="billing-facts">
          <div>
            <dt>{pro ? 'Billing period' : 'Credit period'}</dt>
            <dd>
              {formatBillingDate(state.periodStart)} – {formatBillingDate(state.periodEnd)}
            </dd>
          </div>
          <div>
            <dt>Payment</dt>
            <dd>{pro ? 'Stripe subscription' : 'None needed'}</dd>
          </div>
        </dl>
        {state.status === 'past_due' ? (
          <Alert tone="warning" title="Payment past due">
            Stripe could not collect the latest payment and is retrying. Pro stays active meanwhile;{' '}
            {isAdmin ? 'update the payment method' : 'ask an admin to update the payment method'} to keep it.
          </Alert>
        ) : null}
        {error ? <Alert tone="error">{redirectErrorText(error)}</Alert> : null}
      </CardBody>
      <CardFooter>
        <span className="muted">{note}</span>
        <div className="inline">
          {canManage ? (
            <Button
              icon={<CreditCardIcon size={14} />}
              loading={redirects.openingPortal}
              disabled={redirects.upgrading}
              onClick={redirects.openPortal}
            >
              Manage payment
            </Button>
          ) : null}
          {canUpgrade ? (
            <Button
              variant="primary"
              icon={<ZapIcon size={14} />}
              loading={redirects.upgrading}
              disabled={redirects.openingPortal}
              onClick={redirects.upgrade}
            >
              Upgrade to Pro
            </Button>
          ) : null}
        </div>
      </CardFooter>
    </Card>
  );
}
