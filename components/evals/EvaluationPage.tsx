'use client';

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { PromptShell, type PromptScope } from '@/components/prompts/PromptShell';
import { useVersionNumbers } from '@/components/versions/hooks';
import { ButtonLink } from '@/components/ui/Button';
import { Card } from '@/components/ui/Card';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { ErrorState, SkeletonRows } from '@/components/ui/States';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import { EvaluationBody } from './EvaluationBody';
import { isActive, type Evaluation } from './types';
import './evals.css';

// Cases already calling the model when an evaluation was cancelled still finish (and are charged):
// for a while after the cancel, the page keeps following them instead of showing them as not run.
const settleAfterCancelMs = 120_000;
function settlingAfterCancel(evaluation: { status: string; completedAt: string | null; pendingCases: number }) {
  return (
    evaluation.status === 'cancelled' &&
    evaluation.pendingCases > 0 &&
    evaluation.completedAt !== null &&
    Date.now() - Date.parse(evaluation.completedAt) < settleAfterCancelMs
  );
}

function EvaluationView({ scope, evaluationId }: { scope: PromptScope; evaluationId: string }) {
  const trpc = useTRPC();
  const target = { organizationId: scope.organizationId, promptId: scope.promptId };
  const numbers = useVersionNumbers(target);
  // Derived from the server on every poll, so a reload shows the same progress.
  const query = useQuery({
    ...trpc.evals.get.queryOptions({ organizationId: scope.organizationId, evaluationId }),
    refetchInterval: (q) =>
      q.state.data &&
      (isActive(q.state.data.status) || q.state.data.pendingReviewCases > 0 || settlingAfterCancel(q.state.data))
        ? 1_000
        : false,
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
  // An evaluation of another prompt is not found here, as the description below says.
  const elsewhere = query.data !== undefined && query.data.promptId !== scope.promptId;
  if (query.isError || elsewhere) {
    const missing = elsewhere || readAppError(query.error)?.code === 'not_found';
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
