'use client';

import Link from 'next/link';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { formatDateTime, formatRelative } from '@/components/format';
import { billingPath, formatBillingDate } from '@/components/billing/links';
import { PromptShell, type PromptScope } from '@/components/prompts/PromptShell';
import { useVersionNumbers } from '@/components/versions/hooks';
import { Alert } from '@/components/ui/Alert';
import { Badge } from '@/components/ui/Badge';
import { Button, ButtonLink } from '@/components/ui/Button';
import { Card, CardBody, CardHeader } from '@/components/ui/Card';
import { ConfirmDialog } from '@/components/ui/ConfirmDialog';
import { Dialog } from '@/components/ui/Dialog';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { ErrorState, SkeletonRows } from '@/components/ui/States';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import { EvalStatusBadge, ProgressBar } from './parts';
import { ResultsSection } from './ResultsSection';
import { ReviewQueue } from './ReviewQueue';
import { isActive, percent, scoringLabels, type Evaluation, type Side, type SideSummary } from './types';
import { joinCases, useSideResults } from './useResults';
import './evals.css';

function SideCard({
  title,
  subtitle,
  summary,
  total,
  retry,
}: {
  title: string;
  subtitle: string;
  summary: SideSummary | null;
  total: number;
  retry?: React.ReactNode;
}) {
  if (!summary) {
    return (
      <div className="side-summary" aria-label={`${title} summary`} role="group">
        <div className="spread">
          <div>
            <h3>{title}</h3>
            <span className="subtle">{subtitle}</span>
          </div>
        </div>
        <p className="muted">No production version to compare with.</p>
      </div>
    );
  }
  const done = total - summary.pendingCases;
  return (
    <div className="side-summary" aria-label={`${title} summary`} role="group">
      <div className="spread">
        <div>
          <h3>
            {title} <EvalStatusBadge status={summary.status} />
          </h3>
          <span className="subtle">{subtitle}</span>
        </div>
        <div className="side-rate">
          <strong>{summary.scoredCases > 0 ? percent(summary.passRate) : '—'}</strong>
          <span className="subtle">pass rate</span>
        </div>
      </div>
      <ProgressBar summary={summary} total={total} label={`${title} progress`} />
      <div className="spread">
        <dl className="side-counts">
          <div>
            <dt>Passed</dt>
            <dd className="count-passed">{summary.passedCases}</dd>
          </div>
          <div>
            <dt>Failed</dt>
            <dd className="count-failed">{summary.failedCases}</dd>
          </div>
          <div>
            <dt>Needs review</dt>
            <dd className="count-review">{summary.pendingReviewCases}</dd>
          </div>
          <div>
            <dt>Errors</dt>
            <dd className="count-error">{summary.errorCases}</dd>
          </div>
          <div>
            <dt>Pending</dt>
            <dd>{summary.pendingCases}</dd>
          </div>
        </dl>
        <span className="muted" aria-label={`${title} cases done`}>
          {done} / {total} done
        </span>
      </div>
      {retry}
    </div>
  );
}

function useEvaluationActions(scope: PromptScope, evaluation: Evaluation) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const refresh = () => {
    void queryClient.invalidateQueries(trpc.evals.pathFilter());
    void queryClient.invalidateQueries(
      trpc.prompts.get.queryFilter({ organizationId: scope.organizationId, promptId: scope.promptId }),
    );
    void queryClient.invalidateQueries(trpc.versions.pathFilter());
  };
  const input = { organizationId: scope.organizationId, evaluationId: evaluation.id };
  const cancel = useMutation(trpc.evals.cancel.mutationOptions({ onSettled: refresh }));
  const resume = useMutation(trpc.evals.resume.mutationOptions({ onSettled: refresh }));
  const retry = useMutation(trpc.evals.retry.mutationOptions({ onSettled: refresh }));
  const promote = useMutation(trpc.versions.moveLabel.mutationOptions({ onSettled: refresh }));
  return { input, cancel, resume, retry, promote, refresh };
}

function EvaluationView({ scope, evaluationId }: { scope: PromptScope; evaluationId: string }) {
  const trpc = useTRPC();
  const target = { organizationId: scope.organizationId, promptId: scope.promptId };
  const numbers = useVersionNumbers(target);
  // Derived from the server on every poll, so a reload shows the same progress.
  const query = useQuery({
    ...trpc.evals.get.queryOptions({ organizationId: scope.organizationId, evaluationId }),
    refetchInterval: (q) =>
      q.state.data && (isActive(q.state.data.status) || q.state.data.pendingReviewCases > 0) ? 1_000 : false,
  });
  // When the status changes (a baseline publishing version 1, a run finishing), the prompt's header,
  // labels and versions may have changed too.
  const queryClient = useQueryClient();
  const lastStatus = useRef<string | undefined>(undefined);
  const status = query.data?.status;
  useEffect(() => {
    if (status && lastStatus.current && lastStatus.current !== status) {
      void queryClient.invalidateQueries(
        trpc.prompts.get.queryFilter({ organizationId: scope.organizationId, promptId: scope.promptId }),
      );
      void queryClient.invalidateQueries(trpc.versions.pathFilter());
      void queryClient.invalidateQueries(trpc.evals.list.pathFilter());
    }
    lastStatus.current = status;
  }, [status, queryClient, trpc, scope.organizationId, scope.promptId]);
  if (query.isPending) {
    return (
      <Card>
        <SkeletonRows rows={5} label="Loading evaluation" />
      </Card>
    );
  }
  if (query.isError) {
    const missing = readAppError(query.error)?.code === 'not_found';
    return (
      <Card>
        {missing ? (
          <ErrorState
            title="Evaluation not found"
            description="It may belong to another prompt, or the link is wrong."
            action={
              <ButtonLink href={`/organizations/${scope.organizationId}/prompts/${scope.promptId}/evals`}>
                All evaluations
              </ButtonLink>
            }
          />
        ) : (
          <QueryErrorState title="Could not load this evaluation" query={query} />
        )}
      </Card>
    );
  }
  return (
    <EvaluationBody
      scope={scope}
      evaluation={query.data as Evaluation}
      productionNumber={query.data.productionVersion ?? numbers.numberOf(query.data.productionVersionId) ?? null}
    />
  );
}

function EvaluationBody({
  scope,
  evaluation,
  productionNumber,
}: {
  scope: PromptScope;
  evaluation: Evaluation;
  productionNumber: number | null;
}) {
  const base = `/organizations/${scope.organizationId}/prompts/${scope.promptId}`;
  const actions = useEvaluationActions(scope, evaluation);
  const [confirm, setConfirm] = useState<null | 'cancel' | 'promote' | Side>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const [promoted, setPromoted] = useState(false);
  const comparison = evaluation.kind === 'comparison';
  const live = isActive(evaluation.status);
  const candidateResults = useSideResults(scope.organizationId, evaluation.id, 'candidate', {
    enabled: true,
    live: live || evaluation.pendingReviewCases > 0,
  });
  const productionResults = useSideResults(scope.organizationId, evaluation.id, 'production', {
    enabled: comparison && evaluation.productionRunId !== null,
    live: live || (evaluation.production?.pendingReviewCases ?? 0) > 0,
  });
  const rows = joinCases(candidateResults.results, productionResults.results);
  const reviewItems = [...candidateResults.results, ...productionResults.results]
    .filter((result) => result.status === 'pending_review')
    .sort((a, b) => a.position - b.position);

  const production = scope.prompt.labels.find((label) => label.label === 'production');
  const candidateIsProduction = evaluation.versionId !== null && production?.versionId === evaluation.versionId;
  const canPromote =
    comparison &&
    evaluation.status === 'completed' &&
    evaluation.versionId !== null &&
    !candidateIsProduction &&
    scope.canWrite;
  const canCancel = scope.canWrite && ['pending', 'running', 'paused'].includes(evaluation.status);
  const canResume = scope.canWrite && evaluation.status === 'paused';
  // A reused production run is someone else's evidence: it cannot be retried from here.
  const retryable = (summary: SideSummary | null) =>
    scope.canWrite &&
    summary !== null &&
    !summary.reused &&
    (summary.status === 'failed' || summary.status === 'cancelled');

  // Promoting a candidate that does worse than production is allowed, but said plainly first.
  const regressionCount = rows.filter((row) => row.category === 'regression').length;
  const lowerPassRate =
    evaluation.production !== null && evaluation.candidate.passRate < evaluation.production.passRate;
  const promoteRisk = regressionCount > 0 || lowerPassRate;

  const candidateTitle = comparison ? `Candidate v${evaluation.version ?? '?'}` : 'Setup draft';
  const title = comparison
    ? `v${evaluation.version ?? '?'} vs ${productionNumber ? `v${productionNumber}` : 'production'}`
    : 'Baseline evaluation';
  const baselinePublished =
    evaluation.kind === 'baseline' && evaluation.status === 'completed' && evaluation.version !== null;

  // A baseline that published version 1 turns the prompt active: refresh the header and tabs.
  const queryClient = useQueryClient();
  const trpc = useTRPC();

  // A paused evaluation may be waiting for credits: the billing state says whether any are left
  // and when they renew, and a refused resume says so too.
  const paused = evaluation.status === 'paused';
  const billing = useQuery({
    ...trpc.billing.state.queryOptions({ organizationId: scope.organizationId }),
    enabled: paused,
    staleTime: 0,
  });
  const resumeRefusal = readAppError(actions.resume.error)?.code;
  const outOfCredits =
    paused &&
    (resumeRefusal === 'usage_exhausted' || (billing.data !== undefined && billing.data.creditsRemaining <= 0));
  const needsPro = paused && !outOfCredits && resumeRefusal === 'plan_required';
  const staleSetup = baselinePublished && scope.prompt.state === 'setup';
  useEffect(() => {
    if (staleSetup)
      void queryClient.invalidateQueries(
        trpc.prompts.get.queryFilter({ organizationId: scope.organizationId, promptId: scope.promptId }),
      );
  }, [staleSetup, queryClient, trpc, scope.organizationId, scope.promptId]);

  async function run(action: () => Promise<unknown>) {
    setActionError(null);
    try {
      await action();
      setConfirm(null);
    } catch (error) {
      setActionError(readAppError(error)?.message ?? 'That did not work.');
    }
  }

  const retryButton = (side: Side, summary: SideSummary | null) =>
    retryable(summary) ? (
      <Button size="sm" onClick={() => (setActionError(null), setConfirm(side))}>
        Retry {side}
      </Button>
    ) : null;

  return (
    <>
      <Card>
        <CardHeader
          title={
            <span className="inline">
              {title} <EvalStatusBadge status={evaluation.status} />
            </span>
          }
          description={
            <>
              <Link href={`${base}/evals`}>Evaluations</Link> ·{' '}
              {evaluation.scope === 'quick' ? 'Quick' : 'Comprehensive'}, {evaluation.totalCases} of{' '}
              {evaluation.datasetSize} cases · scored by{' '}
              {scoringLabels[evaluation.scoring.method] ?? evaluation.scoring.method} · started{' '}
              <span title={formatDateTime(evaluation.createdAt)}>{formatRelative(evaluation.createdAt)}</span>
              {evaluation.completedAt ? <> · finished {formatRelative(evaluation.completedAt)}</> : null}
            </>
          }
          actions={
            <div className="inline">
              {outOfCredits || needsPro ? (
                <ButtonLink size="sm" href={billingPath(scope.organizationId)}>
                  Billing
                </ButtonLink>
              ) : null}
              {canResume ? (
                <Button
                  size="sm"
                  loading={actions.resume.isPending}
                  onClick={() => void run(() => actions.resume.mutateAsync(actions.input))}
                >
                  Resume
                </Button>
              ) : null}
              {canCancel ? (
                <Button size="sm" variant="danger-outline" onClick={() => (setActionError(null), setConfirm('cancel'))}>
                  Cancel evaluation
                </Button>
              ) : null}
              {canPromote ? (
                <Button variant="primary" onClick={() => (setActionError(null), setConfirm('promote'))}>
                  Promote to production
                </Button>
              ) : null}
            </div>
          }
        />
        <CardBody className="stack">
          {/* A refused resume is explained by the paused notice below. */}
          {actionError && confirm === null && !outOfCredits && !needsPro ? (
            <Alert tone="error">{actionError}</Alert>
          ) : null}
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
              Every case was scored with no errors and nothing left to review. Applications retrieving this prompt now
              get version {evaluation.version}.
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
              title={`Production serves v${evaluation.version}`}
              action={
                <ButtonLink href={`${base}/versions#history`} size="sm">
                  Label history
                </ButtonLink>
              }
            >
              Applications retrieving the production label get this version on their next request.
            </Alert>
          ) : null}
          {outOfCredits ? (
            <Alert tone="warning" title="Paused: no evaluation credits left">
              This organization used every evaluation credit of its billing period, so the remaining cases wait.{' '}
              {billing.data
                ? `Credits renew on ${formatBillingDate(billing.data.periodEnd)}`
                : 'Credits renew with the next period'}
              {billing.data?.plan === 'pro' ? '' : ', or right away with an upgrade to Pro'}. Then resume: it continues
              with the same frozen inputs, and finished cases are not charged again.{' '}
              <Link href={billingPath(scope.organizationId)}>Open Billing</Link>
            </Alert>
          ) : needsPro ? (
            <Alert tone="warning" title="Paused: this evaluation needs the Pro plan">
              Comprehensive evaluations run on Pro only. Upgrade, then resume: it continues with the same frozen inputs.{' '}
              <Link href={billingPath(scope.organizationId)}>Open Billing</Link>
            </Alert>
          ) : paused ? (
            <Alert tone="warning" title="Paused">
              {evaluation.error ? `${evaluation.error} ` : 'Work stopped (for example for plan or usage limits). '}
              Resume continues with the same frozen inputs.
            </Alert>
          ) : null}
          {evaluation.error && !paused ? <Alert tone="error">{evaluation.error}</Alert> : null}
          <div className={comparison ? 'side-summaries' : ''}>
            <SideCard
              title={comparison ? 'Candidate' : 'Baseline run'}
              subtitle={candidateTitle}
              summary={evaluation.candidate}
              total={evaluation.totalCases}
              retry={retryButton('candidate', evaluation.candidate)}
            />
            {comparison ? (
              <SideCard
                title="Production"
                subtitle={`${productionNumber ? `v${productionNumber}` : 'Pinned production'}${evaluation.production?.reused ? ' · results reused from an earlier run' : ''}`}
                summary={evaluation.production}
                total={evaluation.totalCases}
                retry={retryButton('production', evaluation.production)}
              />
            ) : null}
          </div>
        </CardBody>
      </Card>

      {reviewItems.length > 0 ? (
        <ReviewQueue
          organizationId={scope.organizationId}
          evaluationId={evaluation.id}
          items={reviewItems}
          canWrite={scope.canWrite}
          onReviewed={actions.refresh}
        />
      ) : null}

      <ResultsSection rows={rows} comparison={comparison} loading={candidateResults.query.isPending} />

      <ConfirmDialog
        open={confirm === 'cancel'}
        onClose={() => setConfirm(null)}
        title="Cancel this evaluation?"
        description="Work that has not started stops. Finished results are kept, but a cancelled evaluation never counts as complete coverage and never publishes a baseline."
        confirmLabel="Cancel evaluation"
        pending={actions.cancel.isPending}
        error={confirm === 'cancel' ? actionError : null}
        onConfirm={() => void run(() => actions.cancel.mutateAsync(actions.input))}
      />
      <ConfirmDialog
        open={confirm === 'candidate' || confirm === 'production'}
        onClose={() => setConfirm(null)}
        title={`Retry the ${confirm === 'production' ? 'production' : 'candidate'} side?`}
        description="Unfinished and errored cases run again on the same frozen inputs. Scored results and their charges are kept."
        confirmLabel="Retry"
        pending={actions.retry.isPending}
        error={confirm === 'candidate' || confirm === 'production' ? actionError : null}
        onConfirm={() =>
          void run(() =>
            actions.retry.mutateAsync({
              ...actions.input,
              side: confirm === 'production' ? 'production' : 'candidate',
            }),
          )
        }
      />
      <Dialog
        open={confirm === 'promote'}
        onClose={() => !actions.promote.isPending && setConfirm(null)}
        title={`Promote v${evaluation.version} to production?`}
        description={
          <>
            The <code>production</code> label moves from{' '}
            <strong>{production ? `v${production.version}` : 'nothing'}</strong> to{' '}
            <strong>v{evaluation.version}</strong>. Applications get v{evaluation.version} on their next request; this
            evaluation is recorded as the reason.
          </>
        }
        footer={
          <>
            <Button onClick={() => setConfirm(null)} disabled={actions.promote.isPending}>
              Cancel
            </Button>
            <Button
              variant="primary"
              loading={actions.promote.isPending}
              onClick={() =>
                void run(async () => {
                  await actions.promote.mutateAsync({
                    ...{ organizationId: scope.organizationId, promptId: scope.promptId },
                    label: 'production',
                    versionId: evaluation.versionId!,
                    evaluationId: evaluation.id,
                  });
                  setPromoted(true);
                })
              }
            >
              {promoteRisk ? `Promote v${evaluation.version} anyway` : `Promote v${evaluation.version}`}
            </Button>
          </>
        }
      >
        <div className="promote-summary">
          <div>
            <span className="subtle">Candidate v{evaluation.version}</span>
            <strong>{percent(evaluation.candidate.passRate)}</strong>
          </div>
          <div>
            <span className="subtle">Production {production ? `v${production.version}` : ''}</span>
            <strong>{evaluation.production ? percent(evaluation.production.passRate) : '—'}</strong>
          </div>
          <div>
            <span className="subtle">Regressions</span>
            <strong>{regressionCount}</strong>
          </div>
        </div>
        {promoteRisk ? (
          <Alert tone="warning" title="This candidate does worse than production">
            {[
              regressionCount > 0
                ? `It fails ${regressionCount} ${regressionCount === 1 ? 'case' : 'cases'} that production passes.`
                : null,
              lowerPassRate && evaluation.production
                ? `Its pass rate is ${percent(evaluation.candidate.passRate)} against production’s ${percent(evaluation.production.passRate)}.`
                : null,
            ]
              .filter(Boolean)
              .join(' ')}{' '}
            Applications would get these answers. Promote only if you accept that.
          </Alert>
        ) : null}
        {confirm === 'promote' && actionError ? <Alert tone="error">{actionError}</Alert> : null}
      </Dialog>
      {evaluation.kind === 'comparison' && evaluation.status === 'completed' && !scope.canWrite ? (
        <Badge>Editors and admins can promote</Badge>
      ) : null}
    </>
  );
}

export function EvaluationPage({
  organizationId,
  promptId,
  evaluationId,
}: {
  organizationId: string;
  promptId: string;
  evaluationId: string;
}) {
  return (
    <PromptShell organizationId={organizationId} promptId={promptId}>
      {(scope) => <EvaluationView scope={scope} evaluationId={evaluationId} />}
    </PromptShell>
  );
}
