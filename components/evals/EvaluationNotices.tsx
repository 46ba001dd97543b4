'use client';

import Link from 'next/link';
import { billingPath, formatBillingDate } from '@/components/billing/links';
import { Alert } from '@/components/ui/Alert';
import { ButtonLink } from '@/components/ui/Button';
import type { Evaluation } from './types';

// What the evaluation's outcome means for the prompt: published, waiting for review, paused, failed.
export function EvaluationNotices({
  evaluation,
  base,
  organizationId,
  comparison,
  baselinePublished,
  promoted,
  candidateIsProduction,
  productionSplits,
  outOfCredits,
  needsPro,
  paused,
  billing,
}: {
  evaluation: Evaluation;
  base: string;
  organizationId: string;
  comparison: boolean;
  baselinePublished: boolean;
  promoted: boolean;
  candidateIsProduction: boolean;
  // Production splits its traffic: the candidate is then only its largest share.
  productionSplits: boolean;
  outOfCredits: boolean;
  needsPro: boolean;
  paused: boolean;
  billing: { periodEnd: string; plan: string } | undefined;
}) {
  return (
    <>
      {baselinePublished ? (
        <Alert
          tone="success"
          title={`Version ${evaluation.version} published to production and staging`}
          action={
            <ButtonLink href={`${base}/versions`} size="sm">
              View versions
            </ButtonLink>
          }
        >
          Every case was scored with no errors and nothing left to review. Applications retrieving this prompt now get
          version {evaluation.version}.
        </Alert>
      ) : null}
      {evaluation.kind === 'baseline' &&
      evaluation.status === 'completed' &&
      evaluation.version === null &&
      evaluation.pendingReviewCases > 0 ? (
        <Alert tone="warning" title="Review the remaining results to publish version 1">
          {evaluation.pendingReviewCases} {evaluation.pendingReviewCases === 1 ? 'result needs' : 'results need'} a
          decision below before the baseline can be published.
        </Alert>
      ) : null}
      {evaluation.kind === 'baseline' && (evaluation.status === 'failed' || evaluation.status === 'cancelled') ? (
        <Alert tone="error" title="Version 1 was not published">
          {evaluation.status === 'cancelled'
            ? 'The baseline was cancelled. Retry it, or initialize again from the editor.'
            : `${evaluation.errorCases} ${evaluation.errorCases === 1 ? 'case' : 'cases'} could not run. Retry the failed cases, or fix the draft and initialize again.`}
        </Alert>
      ) : null}
      {promoted || (comparison && candidateIsProduction && evaluation.status === 'completed') ? (
        <Alert
          tone="success"
          title={
            productionSplits
              ? `Production splits its traffic: v${evaluation.version} has the largest share`
              : `Production serves v${evaluation.version}`
          }
          action={
            <ButtonLink href={`${base}/versions#history`} size="sm">
              Label history
            </ButtonLink>
          }
        >
          {productionSplits
            ? 'Applications retrieving the production label get the version their subject is assigned to; Versions shows the shares.'
            : 'Applications retrieving the production label get this version on their next request.'}
        </Alert>
      ) : null}
      {outOfCredits ? (
        <Alert tone="warning" title="Paused: no evaluation credits left">
          This organization used every evaluation credit of its billing period, so the remaining cases wait.{' '}
          {billing ? `Credits renew on ${formatBillingDate(billing.periodEnd)}` : 'Credits renew with the next period'}
          {billing?.plan === 'pro' ? '' : ', or right away with an upgrade to Pro'}. Then resume: it continues with the
          same frozen inputs, and finished cases are not charged again.{' '}
          <Link href={billingPath(organizationId)}>Open Billing</Link>
        </Alert>
      ) : needsPro ? (
        <Alert tone="warning" title="Paused: this evaluation needs the Pro plan">
          Comprehensive evaluations run on Pro only. Upgrade, then resume: it continues with the same frozen inputs.{' '}
          <Link href={billingPath(organizationId)}>Open Billing</Link>
        </Alert>
      ) : paused ? (
        <Alert tone="warning" title="Paused">
          {evaluation.error ? `${evaluation.error} ` : 'Work stopped (for example for plan or usage limits). '}
          Resume continues with the same frozen inputs.
        </Alert>
      ) : null}
      {evaluation.error && !paused ? <Alert tone="error">{evaluation.error}</Alert> : null}
    </>
  );
}
