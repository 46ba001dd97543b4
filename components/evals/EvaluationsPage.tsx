'use client';

import Link from 'next/link';
import { useInfiniteQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { PromptShell, type PromptScope } from '@/components/prompts/PromptShell';
import { useVersionNumbers } from '@/components/versions/hooks';
import { Badge } from '@/components/ui/Badge';
import { Button, ButtonLink } from '@/components/ui/Button';
import { Card, CardHeader } from '@/components/ui/Card';
import { LoadMore } from '@/components/ui/LoadMore';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { EmptyState, SkeletonRows } from '@/components/ui/States';
import { Table } from '@/components/ui/Table';
import { ActivityIcon, PlusIcon } from '@/components/ui/icons';
import { useOrganization } from '@/components/organizations/hooks';
import { useTRPC } from '@/lib/trpc/client';
import { EvalStatusBadge, PassRate } from './parts';
import { RunEvaluationDialog } from './RunEvaluationDialog';
import { isActive, type Evaluation } from './types';
import './evals.css';
import { RelativeTime } from '@/components/ui/RelativeTime';

function EvaluationList({ scope }: { scope: PromptScope }) {
  const trpc = useTRPC();
  const target = { organizationId: scope.organizationId, promptId: scope.promptId };
  const org = useOrganization(scope.organizationId);
  const numbers = useVersionNumbers(target);
  const [running, setRunning] = useState(false);
  const list = useInfiniteQuery({
    ...trpc.evals.list.infiniteQueryOptions(
      { ...target, limit: 25 },
      { getNextPageParam: (page) => page.nextCursor ?? undefined },
    ),
    // Keep statuses and pass rates moving while anything on the page is still running.
    refetchInterval: (query) =>
      (query.state.data?.pages ?? []).some((page) => page.items.some((item: Evaluation) => isActive(item.status)))
        ? 2_000
        : false,
  });
  const evaluations: Evaluation[] = list.data?.pages.flatMap((page) => page.items) ?? [];
  const base = `/organizations/${scope.organizationId}/prompts/${scope.promptId}`;
  const setup = scope.prompt.state === 'setup';
  const production = scope.prompt.labels.find((label) => label.label === 'production');
  const canRun = scope.canWrite && !setup;

  return (
    <Card flush>
      <CardHeader
        title="Evaluations"
        description="Each evaluation runs a saved version over the dataset and compares it with production."
        actions={
          scope.canWrite ? (
            <Button
              variant="primary"
              icon={<PlusIcon size={14} />}
              disabled={!canRun || numbers.versions.length === 0}
              title={
                setup ? 'Initialize the baseline first: evaluations compare saved versions with production.' : undefined
              }
              onClick={() => setRunning(true)}
            >
              Run evaluation
            </Button>
          ) : undefined
        }
      />
      {list.isPending ? (
        <SkeletonRows rows={4} label="Loading evaluations" />
      ) : list.isError ? (
        <QueryErrorState title="Could not load evaluations" query={list} />
      ) : evaluations.length === 0 ? (
        <EmptyState
          icon={<ActivityIcon size={20} />}
          title="No evaluations yet"
          description={
            setup
              ? 'This prompt is in setup. Write the draft, add test cases, then initialize the baseline from the editor: it runs the first evaluation and publishes version 1.'
              : 'Run a saved version against the dataset to see how it compares with production before you promote it.'
          }
          action={
            setup ? (
              <ButtonLink href={base} variant="primary">
                Go to setup
              </ButtonLink>
            ) : canRun ? (
              <Button variant="primary" onClick={() => setRunning(true)}>
                Run evaluation
              </Button>
            ) : undefined
          }
        />
      ) : (
        <>
          <Table caption="Evaluations" className="eval-table">
            <thead>
              <tr>
                <th scope="col">Evaluation</th>
                <th scope="col">Status</th>
                <th scope="col">Scope</th>
                <th scope="col">Candidate</th>
                <th scope="col">Production</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {evaluations.map((evaluation) => {
                const productionNumber =
                  evaluation.productionVersion ?? numbers.numberOf(evaluation.productionVersionId);
                return (
                  <tr key={evaluation.id} data-evaluation={evaluation.id}>
                    <td>
                      <Link className="prompt-link" href={`${base}/evals/${evaluation.id}`}>
                        {evaluation.kind === 'baseline'
                          ? 'Baseline'
                          : `v${evaluation.version ?? '?'} vs ${productionNumber ? `v${productionNumber}` : 'production'}`}
                      </Link>
                      <div className="subtle mono">{evaluation.id}</div>
                    </td>
                    <td>
                      <EvalStatusBadge status={evaluation.status} pendingReview={evaluation.pendingReviewCases} />
                    </td>
                    <td>
                      <Badge>{evaluation.scope === 'quick' ? 'Quick' : 'Comprehensive'}</Badge>
                      <div className="subtle">
                        {evaluation.totalCases} {evaluation.totalCases === 1 ? 'case' : 'cases'}
                      </div>
                    </td>
                    <td>
                      <div className="stack-xs">
                        <span className="muted">
                          {evaluation.kind === 'baseline' ? 'Setup draft' : `v${evaluation.version ?? '?'}`}
                        </span>
                        <PassRate summary={evaluation.candidate} />
                      </div>
                    </td>
                    <td>
                      {evaluation.kind === 'baseline' ? (
                        <span className="subtle">—</span>
                      ) : (
                        <div className="stack-xs">
                          <span className="muted">
                            {productionNumber ? `v${productionNumber}` : 'production'}
                            {evaluation.production?.reused ? ' · reused' : ''}
                          </span>
                          <PassRate summary={evaluation.production} />
                        </div>
                      )}
                    </td>
                    <td className="cell-nowrap muted">
                      <RelativeTime time={evaluation.createdAt} />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </Table>
          <LoadMore query={list} />
        </>
      )}
      {canRun ? (
        <RunEvaluationDialog
          open={running}
          onClose={() => setRunning(false)}
          organizationId={scope.organizationId}
          promptId={scope.promptId}
          plan={org.data?.plan ?? 'free'}
          versions={numbers.versions}
          productionVersion={production?.version ?? null}
        />
      ) : null}
    </Card>
  );
}

export function EvaluationsPage({ organizationId, promptId }: { organizationId: string; promptId: string }) {
  return (
    <PromptShell organizationId={organizationId} promptId={promptId}>
      {(scope) => <EvaluationList scope={scope} />}
    </PromptShell>
  );
}
