'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useEffect, useState } from 'react';
import { billingPath } from '@/components/billing/links';
import { useCheckoutAvailable } from '@/components/billing/checkout-availability';
import { Field } from '@/components/ui/Field';
import { VersionPicker } from '@/components/versions/VersionPicker';
import { useVersionChoices } from '@/components/versions/hooks';
import { FieldError } from '@/components/ui/FieldError';
import { FormDialog } from '@/components/ui/FormDialog';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError, type AppErrorInfo } from '@/lib/trpc/errors';
import { quickEvaluationSize } from '@/components/datasets/types';
import { Alert } from '@/components/ui/Alert';
import { EstimatePanel } from './EstimatePanel';
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
  // Until the user picks one, the newest version production does not serve (comparing production
  // with itself teaches nothing); the list may still be refreshing when this opens.
  const [chosenId, setVersionId] = useState<string | null>(null);
  const versionId =
    chosenId ??
    defaultVersionId ??
    versions.find((version) => version.number !== productionVersion)?.id ??
    versions[0]?.id ??
    '';
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
  const checkoutAvailable = useCheckoutAvailable();
  // Every version can be chosen, not only the page the list has loaded (VersionPicker).
  const choices = useVersionChoices({ organizationId, promptId });
  const chosen = choices.versions.find((version) => version.id === versionId);
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
        <VersionPicker
          target={{ organizationId, promptId }}
          value={versionId}
          placeholder={choices.versions.length === 0 ? 'No saved versions' : undefined}
          onChange={(version) => setVersionId(version.id)}
          note={(version) => (version.labels.length ? ` · ${version.labels.join(', ')}` : '')}
        />
      </Field>
      {chosen && productionVersion !== null && chosen.number === productionVersion ? (
        <Alert tone="warning" title={`Production serves v${chosen.number}`}>
          Both sides would run the same version: choose another version to compare it with production.
        </Alert>
      ) : null}
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
                  Every case.{' '}
                  {checkoutAvailable ? (
                    <>
                      <Link href={billingPath(organizationId)}>Upgrade to Pro</Link> to run the whole dataset.
                    </>
                  ) : (
                    'It needs the Pro plan, which this installation does not sell.'
                  )}
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
