'use client';

import { useQuery } from '@tanstack/react-query';
import { FormDialog } from '@/components/ui/FormDialog';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import type { PromptScope } from '@/components/prompts/PromptShell';
import { EstimatePanel } from './EstimatePanel';
import type { Estimate, ScoringMethod } from './types';

type Props = {
  open: boolean;
  onClose: () => void;
  onConfirm: () => void;
  scope: PromptScope;
  revision: number;
  method: ScoringMethod;
  judgeRoute: string;
  pending: boolean;
};

// What the baseline will run and cost, shown before it starts: the same preview as Run evaluation.
export function InitializeBaselineDialog({
  open,
  onClose,
  onConfirm,
  scope,
  revision,
  method,
  judgeRoute,
  pending,
}: Props) {
  const trpc = useTRPC();
  const { organizationId, promptId } = scope;
  const estimate = useQuery({
    ...trpc.evals.estimateBaseline.queryOptions(
      {
        organizationId,
        promptId,
        scoringMethod: method,
        ...(method === 'judge' ? { judgeModelRouteId: judgeRoute } : {}),
      },
      { staleTime: 0 },
    ),
    enabled: open,
  });
  const billing = useQuery({ ...trpc.billing.state.queryOptions({ organizationId }), enabled: open });
  const blocked = estimate.data ? !estimate.data.allowed : true;
  const cases = estimate.data?.totalCases;
  return (
    <FormDialog
      open={open}
      onClose={onClose}
      title="Initialize baseline"
      description={`Runs revision ${revision} of your draft on the first cases of the dataset; when every case is scored, version 1 is published to production and staging.`}
      submitLabel={cases ? `Run on ${cases} ${cases === 1 ? 'case' : 'cases'}` : 'Initialize baseline'}
      pending={pending}
      error={null}
      fieldNames={[]}
      onSubmit={() => {
        if (!blocked) onConfirm();
      }}
    >
      <EstimatePanel
        estimate={estimate.data as Estimate | undefined}
        pending={estimate.isPending}
        error={estimate.isError ? readAppError(estimate.error) : null}
        productionVersion={null}
        note="Only your draft runs: there is no production version to compare with yet."
        organizationId={organizationId}
        promptId={promptId}
        plan={billing.data?.plan ?? 'free'}
        resetsAt={billing.data?.periodEnd ?? null}
      />
    </FormDialog>
  );
}
