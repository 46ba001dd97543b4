'use client';

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import type { PromptScope } from '@/components/prompts/PromptShell';
import { Alert } from '@/components/ui/Alert';
import { Badge } from '@/components/ui/Badge';
import { Button } from '@/components/ui/Button';
import { Card, CardBody } from '@/components/ui/Card';
import { ConfirmDialog } from '@/components/ui/ConfirmDialog';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import { EvaluationHeader } from './EvaluationHeader';
import { EvaluationNotices } from './EvaluationNotices';
import { PromoteDialog } from './PromoteDialog';
import { MoveLabelDialog } from '@/components/releases/MoveLabelDialog';
import { useIsAdmin, useReleasePolicy } from '@/components/releases/hooks';
import { gateOn, labelNumberOf, type NumberOf } from '@/components/releases/rules';
import { useLabels } from '@/components/versions/hooks';
import { ResultsSection } from './ResultsSection';
import { ReviewQueue } from './ReviewQueue';
import { SideCard } from './SideCard';
import { isActive, stoppedSide, type Evaluation, type Side, type SideSummary } from './types';
import { useEvaluationActions } from './useEvaluationActions';
import { joinCases, useSideResults } from './useResults';

export function EvaluationBody({
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
  const target = { organizationId: scope.organizationId, promptId: scope.promptId };
  // A protected production label: Promote goes through the release policy's dialog (its verdict,
  // the server's reasons, and the override for admins), as on the Versions page.
  const gated = gateOn(useReleasePolicy(target).data, 'production');
  const isAdmin = useIsAdmin(scope.organizationId);
  const labelItems = useLabels(target).data?.items;
  const numberOf: NumberOf = (versionId) =>
    versionId === evaluation.versionId && evaluation.version !== null
      ? evaluation.version
      : labelNumberOf(labelItems, versionId);
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
    // Unreviewed results are not evidence yet: review them first (the queue is on this page).
    evaluation.pendingReviewCases === 0 &&
    evaluation.versionId !== null &&
    !candidateIsProduction &&
    scope.canWrite;
  // Results awaiting review are pending work too: a review-scored baseline can be dropped unpublished.
  const canCancel =
    scope.canWrite &&
    (['pending', 'running', 'paused'].includes(evaluation.status) ||
      (evaluation.status === 'completed' && evaluation.pendingReviewCases > 0));
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
        <EvaluationHeader
          title={title}
          base={base}
          evaluation={evaluation}
          organizationId={scope.organizationId}
          showBilling={outOfCredits || needsPro}
          canResume={canResume}
          resumePending={actions.resume.isPending}
          onResume={() => void run(() => actions.resume.mutateAsync(actions.input))}
          canCancel={canCancel}
          onCancel={() => (setActionError(null), setConfirm('cancel'))}
          canPromote={canPromote}
          onPromote={() => (setActionError(null), setConfirm('promote'))}
        />
        <CardBody className="stack">
          {/* A refused resume is explained by the paused notice below. */}
          {actionError && confirm === null && !outOfCredits && !needsPro ? (
            <Alert tone="error">{actionError}</Alert>
          ) : null}
          <EvaluationNotices
            evaluation={evaluation}
            base={base}
            organizationId={scope.organizationId}
            comparison={comparison}
            baselinePublished={baselinePublished}
            promoted={promoted}
            candidateIsProduction={candidateIsProduction}
            productionSplits={Boolean(production?.splitId)}
            outOfCredits={outOfCredits}
            needsPro={needsPro}
            paused={paused}
            billing={billing.data}
          />
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

      {reviewItems.length > 0 && evaluation.status !== 'cancelled' ? (
        <ReviewQueue
          organizationId={scope.organizationId}
          evaluationId={evaluation.id}
          items={reviewItems}
          canWrite={scope.canWrite}
          onReviewed={actions.refresh}
        />
      ) : null}

      <ResultsSection
        rows={rows}
        comparison={comparison}
        loading={candidateResults.query.isPending}
        stopped={{ candidate: stoppedSide(evaluation.candidate), production: stoppedSide(evaluation.production) }}
      />

      <ConfirmDialog
        open={confirm === 'cancel'}
        onClose={() => setConfirm(null)}
        title="Cancel this evaluation?"
        description="Work that has not started stops, and results awaiting review stay unreviewed. Finished results are kept, but a cancelled evaluation never counts as complete coverage and never publishes a baseline."
        confirmLabel="Cancel evaluation"
        dismissLabel="Keep running"
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
      {confirm === 'promote' && gated ? (
        <MoveLabelDialog
          target={target}
          request={{
            label: 'production',
            current: labelItems?.find((label) => label.label === 'production') ?? null,
            versionId: evaluation.versionId!,
            fixed: true,
            evaluationId: evaluation.id,
          }}
          numberOf={numberOf}
          isAdmin={isAdmin}
          evalsBase={`${base}/evals`}
          onClose={() => setConfirm(null)}
          onMoved={() => setPromoted(true)}
        />
      ) : null}
      <PromoteDialog
        open={confirm === 'promote' && !gated}
        onClose={() => setConfirm(null)}
        pending={actions.promote.isPending}
        onPromote={() =>
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
        evaluation={evaluation}
        production={production}
        regressionCount={regressionCount}
        lowerPassRate={lowerPassRate}
        promoteRisk={promoteRisk}
        error={confirm === 'promote' ? actionError : null}
      />
      {evaluation.kind === 'comparison' && evaluation.status === 'completed' && !scope.canWrite ? (
        <Badge>Editors and admins can promote</Badge>
      ) : null}
    </>
  );
}
