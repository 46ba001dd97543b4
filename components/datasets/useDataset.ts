'use client';

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useState } from 'react';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError, type AppErrorInfo } from '@/lib/trpc/errors';

export type DatasetScope = { organizationId: string; promptId: string };

export const retryAfterConflict =
  'The dataset changed elsewhere and has been reloaded. Your text is kept: save again to apply it.';

const conflictNotice =
  'The dataset changed in another window or tool, so it was reloaded. Check the cases below and try again.';

// The dataset plus what every write shares: refetch afterwards (new revision), and on a stale
// revision tell the user that the table now shows the stored cases.
export function useDataset(scope: DatasetScope) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  // Always refetched on opening: its warnings follow the draft, which changes on other pages.
  const query = useQuery({ ...trpc.datasets.get.queryOptions(scope), staleTime: 0 });
  const [notice, setNotice] = useState<string | null>(null);

  const refresh = useCallback(
    () => queryClient.invalidateQueries(trpc.datasets.get.queryFilter(scope)),
    [queryClient, trpc, scope],
  );

  // Returns the error for the caller to show at its field or row, or null when it was a conflict.
  const handleError = useCallback((error: unknown): AppErrorInfo | null => {
    const info = readAppError(error);
    if (info?.code === 'dataset_conflict') {
      setNotice(conflictNotice);
      return null;
    }
    return info;
  }, []);

  return { query, dataset: query.data, refresh, handleError, notice, setNotice };
}
