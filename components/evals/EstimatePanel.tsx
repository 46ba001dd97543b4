'use client';

import Link from 'next/link';
import { billingPath, formatBillingDate } from '@/components/billing/links';
import { useCheckoutAvailable } from '@/components/billing/checkout-availability';
import { Alert } from '@/components/ui/Alert';
import { FieldError } from '@/components/ui/FieldError';
import { Skeleton } from '@/components/ui/States';
import { AlertCircleIcon } from '@/components/ui/icons';
import type { AppErrorInfo } from '@/lib/trpc/errors';
import type { Estimate } from './types';

// estimate.reason is the error code a start would answer with now.
function reasonText(code: string | null): string {
  switch (code) {
    case 'plan_required':
      return 'Comprehensive evaluations need the Pro plan.';
    case 'invalid_state':
      return 'This prompt cannot run evaluations in its current state.';
    case 'forbidden':
      return 'Only editors and admins can run evaluations.';
    case 'read_only':
      return 'This organization is read-only.';
    default:
      return code ? `This evaluation cannot start now (${code}).` : 'This evaluation cannot start now.';
  }
}

const plural = (n: number, word: string) => `${n.toLocaleString()} ${word}${n === 1 ? '' : 's'}`;

// What the run costs against what is left; a shortfall pauses the run instead of refusing it.
function CreditsNotice({
  estimate,
  organizationId,
  plan,
  resetsAt,
}: {
  estimate: Estimate;
  organizationId: string;
  plan: 'free' | 'pro';
  resetsAt: string | null;
}) {
  const billing = billingPath(organizationId);
  const renewDate = resetsAt ? formatBillingDate(resetsAt) : null;
  const checkoutAvailable = useCheckoutAvailable();
  const upgradable = plan !== 'pro' && checkoutAvailable;
  if (estimate.reason === 'usage_exhausted') {
    return (
      <Alert tone="warning" title="No evaluation credits left this period">
        Credits renew {renewDate ? `on ${renewDate}` : 'at the start of the next billing period'}
        {upgradable ? '; upgrading to Pro adds more at once.' : '.'}{' '}
        <Link href={billing}>{upgradable ? 'Upgrade in Billing' : 'See usage in Billing'}</Link>
      </Alert>
    );
  }
  const short = estimate.credits > estimate.creditsRemaining;
  return (
    <>
      <p>
        This run uses <strong>{plural(estimate.credits, 'credit')}</strong> ·{' '}
        <strong>{estimate.creditsRemaining.toLocaleString()}</strong> left this period
      </p>
      {short ? (
        <Alert tone="warning" title="Not enough credits for every case">
          The run pauses when credits run out; resume it after they renew{renewDate ? ` on ${renewDate}` : ''}
          {plan === 'pro' ? '' : ' or after upgrading'}. <Link href={billing}>Open Billing</Link>
        </Alert>
      ) : null}
    </>
  );
}

// Cases the candidate's input type cannot take: said before the run, with the first reason and a link to fix them.
function IncompatibleNotice({ estimate, datasetHref }: { estimate: Estimate; datasetHref: string }) {
  const n = estimate.incompatibleCases;
  const [first] = estimate.warnings;
  return (
    <Alert
      tone="warning"
      title={`${plural(n, 'case')} cannot run under this prompt’s input type and will error without charge`}
    >
      {n === 1 ? 'It is' : 'They are'} not counted in the credits above.{first ? ` ${first.message}` : ''}{' '}
      <Link href={datasetHref}>Review the dataset</Link>
    </Alert>
  );
}

export function EstimatePanel({
  estimate,
  pending,
  error,
  productionVersion,
  organizationId,
  promptId,
  plan,
  resetsAt,
  note,
}: {
  estimate: Estimate | undefined;
  pending: boolean;
  error: AppErrorInfo | null;
  productionVersion: number | null;
  // Replaces the line about the production side (a baseline has none).
  note?: string;
  organizationId: string;
  promptId: string;
  plan: 'free' | 'pro';
  resetsAt: string | null;
}) {
  const checkoutAvailable = useCheckoutAvailable();
  if (error) return <FieldError message={error.message} />;
  if (pending || !estimate) {
    return (
      <div className="estimate" aria-busy="true">
        <Skeleton width="60%" />
        <Skeleton width="40%" />
      </div>
    );
  }
  const reused = estimate.reusedProductionRunId !== null;
  return (
    <div className="estimate" role="region" aria-label="What this evaluation will run">
      <dl className="estimate-grid">
        <div>
          <dt>Cases</dt>
          <dd>
            {estimate.totalCases} <span className="subtle">of {estimate.datasetSize}</span>
          </dd>
        </div>
        <div>
          <dt>Candidate runs</dt>
          <dd>{estimate.candidateCases}</dd>
        </div>
        <div>
          <dt>Production runs</dt>
          <dd>{estimate.productionCases}</dd>
        </div>
        <div>
          <dt>Credits</dt>
          <dd>{estimate.credits}</dd>
        </div>
      </dl>
      <p className="field-hint">
        {note
          ? note
          : reused
            ? `Production${productionVersion ? ` (v${productionVersion})` : ''} already has completed results for these cases and this scoring: they are reused, so only the candidate runs.`
            : productionVersion
              ? `Production (v${productionVersion}) runs alongside the candidate on the same cases.`
              : 'Only the candidate runs.'}
      </p>
      <CreditsNotice estimate={estimate} organizationId={organizationId} plan={plan} resetsAt={resetsAt} />
      {estimate.incompatibleCases > 0 ? (
        <IncompatibleNotice
          estimate={estimate}
          datasetHref={`/organizations/${organizationId}/prompts/${promptId}/dataset`}
        />
      ) : null}
      {!estimate.allowed && estimate.reason === 'plan_required' ? (
        <p className="field-error" role="alert">
          <AlertCircleIcon size={14} />
          <span>
            {reasonText(estimate.reason)}{' '}
            {checkoutAvailable ? (
              <Link href={billingPath(organizationId)}>Upgrade in Billing</Link>
            ) : (
              'This installation does not sell the Pro plan.'
            )}
          </span>
        </p>
      ) : !estimate.allowed && estimate.reason !== 'usage_exhausted' ? (
        <FieldError message={reasonText(estimate.reason)} />
      ) : null}
    </div>
  );
}
