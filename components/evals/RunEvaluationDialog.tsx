'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useEffect, useState } from 'react';
import { billingPath, formatBillingDate } from '@/components/billing/links';
import { Alert } from '@/components/ui/Alert';
import { Field, Select } from '@/components/ui/Field';
import { FieldError } from '@/components/ui/FieldError';
import { FormDialog } from '@/components/ui/FormDialog';
import { Skeleton } from '@/components/ui/States';
import { AlertCircleIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError, type AppErrorInfo } from '@/lib/trpc/errors';
import { quickEvaluationSize } from '@/components/datasets/types';
import type { Estimate, Scope, Version } from './types';

type Props = {
  open: boolean;
  onClose: () => void;
  organizationId: string;
  promptId: string;
  plan: 'free' | 'pro';
  versions: Version[];
  productionVersion: number | null;
  defaultVersionId?: string;
};

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
  if (estimate.reason === 'usage_exhausted') {
    return (
      <Alert tone="warning" title="No evaluation credits left this period">
        Credits renew {renewDate ? `on ${renewDate}` : 'at the start of the next billing period'}
        {plan === 'pro' ? '.' : '; upgrading to Pro adds more at once.'}{' '}
        <Link href={billing}>{plan === 'pro' ? 'See usage in Billing' : 'Upgrade in Billing'}</Link>
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

function EstimatePanel({
  estimate,
  pending,
  error,
  productionVersion,
  organizationId,
  promptId,
  plan,
  resetsAt,
}: {
  estimate: Estimate | undefined;
  pending: boolean;
  error: AppErrorInfo | null;
  productionVersion: number | null;
  organizationId: string;
  promptId: string;
  plan: 'free' | 'pro';
  resetsAt: string | null;
}) {
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
        {reused
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
            {reasonText(estimate.reason)} <Link href={billingPath(organizationId)}>Upgrade in Billing</Link>
          </span>
        </p>
      ) : !estimate.allowed && estimate.reason !== 'usage_exhausted' ? (
        <FieldError message={reasonText(estimate.reason)} />
      ) : null}
    </div>
  );
}

// Start a comparison: which saved version, how many cases, and what it costs, before anything runs.
export function RunEvaluationDialog({
  open,
  onClose,
  organizationId,
  promptId,
  plan,
  versions,
  productionVersion,
  defaultVersionId,
}: Props) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  // Until the user picks one, the newest version (the list may still be refreshing when this opens).
  const [chosenId, setVersionId] = useState<string | null>(null);
  const versionId = chosenId ?? defaultVersionId ?? versions[0]?.id ?? '';
  const [scope, setScope] = useState<Scope>('quick');
  const [rerunBoth, setRerunBoth] = useState(false);
  const [error, setError] = useState<AppErrorInfo | null>(null);

  useEffect(() => {
    if (!open) return;
    setVersionId(null);
    setScope('quick');
    setRerunBoth(false);
    setError(null);
    // Reset only when the dialog opens.
  }, [open]);

  const estimate = useQuery({
    ...trpc.evals.estimate.queryOptions(
      { organizationId, promptId, versionId, scope, rerunBoth: rerunBoth ? 'true' : 'false' },
      { staleTime: 5_000 },
    ),
    enabled: open && versionId !== '',
  });

  const start = useMutation(
    trpc.evals.start.mutationOptions({
      onSuccess: (evaluation) => {
        void queryClient.invalidateQueries(trpc.evals.list.pathFilter());
        onClose();
        router.push(`/organizations/${organizationId}/prompts/${promptId}/evals/${evaluation.id}`);
      },
      onError: (e) => setError(readAppError(e)),
    }),
  );

  const proOnly = plan !== 'pro';
  const chosen = versions.find((version) => version.id === versionId);
  const blocked = estimate.data ? !estimate.data.allowed : false;
  // When credits are short, say when they renew (the billing state knows the period).
  const creditsShort = estimate.data
    ? estimate.data.reason === 'usage_exhausted' || estimate.data.credits > estimate.data.creditsRemaining
    : false;
  const billing = useQuery({ ...trpc.billing.state.queryOptions({ organizationId }), enabled: open && creditsShort });

  return (
    <FormDialog
      open={open}
      onClose={onClose}
      title="Run evaluation"
      description="Compare a saved version with what production serves today, case by case."
      submitLabel={chosen ? `Run on v${chosen.number}` : 'Run evaluation'}
      pending={start.isPending}
      error={error}
      fieldNames={['versionId', 'scope', 'rerunBoth']}
      onSubmit={() => {
        setError(null);
        if (!versionId)
          return setError({
            code: 'invalid_request',
            message: 'Choose a version.',
            fields: { versionId: 'Choose a version.' },
            details: {},
          });
        if (blocked) return;
        start.mutate({ organizationId, promptId, versionId, scope, rerunBoth });
      }}
    >
      <Field label="Candidate version" error={error?.fields.versionId}>
        <Select value={versionId} onChange={(e) => setVersionId(e.target.value)}>
          {versions.length === 0 ? <option value="">No saved versions</option> : null}
          {versions.map((version) => (
            <option key={version.id} value={version.id}>
              v{version.number}
              {version.labels.length ? ` · ${version.labels.join(', ')}` : ''}
            </option>
          ))}
        </Select>
      </Field>
      <fieldset className="choice-group">
        <legend className="field-label">Scope</legend>
        <div className="choices" role="radiogroup" aria-label="Scope">
          <label className="choice" data-checked={scope === 'quick' || undefined}>
            <input
              type="radio"
              name="scope"
              value="quick"
              checked={scope === 'quick'}
              onChange={() => setScope('quick')}
            />
            <span className="choice-title">Quick</span>
            <span className="choice-text">The first {quickEvaluationSize} cases in dataset order.</span>
          </label>
          <label
            className="choice"
            data-checked={scope === 'comprehensive' || undefined}
            data-disabled={proOnly || undefined}
          >
            <input
              type="radio"
              name="scope"
              value="comprehensive"
              checked={scope === 'comprehensive'}
              disabled={proOnly}
              onChange={() => setScope('comprehensive')}
            />
            <span className="choice-title">
              Comprehensive <span className="badge badge-warning">Pro</span>
            </span>
            <span className="choice-text">
              {proOnly ? (
                <>
                  Every case. <Link href={billingPath(organizationId)}>Upgrade to Pro</Link> to run the whole dataset.
                </>
              ) : (
                'Every case in the dataset.'
              )}
            </span>
          </label>
        </div>
        <FieldError message={error?.fields.scope} />
      </fieldset>
      <label className="check-row">
        <input type="checkbox" checked={rerunBoth} onChange={(e) => setRerunBoth(e.target.checked)} />
        <span>
          <strong>Rerun production</strong>
          <span className="field-hint">Run production again instead of reusing its latest matching results.</span>
        </span>
      </label>
      {versionId ? (
        <EstimatePanel
          estimate={estimate.data as Estimate | undefined}
          pending={estimate.isPending}
          error={estimate.isError ? readAppError(estimate.error) : null}
          productionVersion={productionVersion}
          organizationId={organizationId}
          promptId={promptId}
          plan={plan}
          resetsAt={billing.data?.periodEnd ?? null}
        />
      ) : null}
    </FormDialog>
  );
}
