'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { PromptScope } from '@/components/prompts/PromptShell';
import { useTRPC } from '@/lib/trpc/client';
import type { Evaluation } from './types';

// Cancel, resume, retry and promote, each refreshing what they change.
export function useEvaluationActions(scope: PromptScope, evaluation: Evaluation) {
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
