'use client';

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useMemo, useState } from 'react';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError, type AppErrorInfo } from '@/lib/trpc/errors';

export type DatasetScope = { organizationId: string; promptId: string };

export const retryAfterConflict =
  'The dataset changed elsewhere and has been reloaded. Your text is kept: save again to apply it.';

const conflictNotice =
  'The dataset changed in another window or tool, so it was reloaded. Check the cases below and try again.';

// A message above the table: a warning (a write that did not apply) or the success of a row action.
export type DatasetNotice = { text: string; tone: 'warning' | 'success' };

// The dataset plus what every write shares: refetch afterwards (new revision), and on a stale
// revision tell the user that the table now shows the stored cases.
export function useDataset(scope: DatasetScope) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  // Always refetched on opening: its warnings follow the draft, which changes on other pages.
  const query = useQuery({ ...trpc.datasets.get.queryOptions(scope), staleTime: 0 });
  const [notice, setNoticeState] = useState<DatasetNotice | null>(null);

  const setNotice = useCallback(
    (text: string | null, tone: DatasetNotice['tone'] = 'warning') => setNoticeState(text ? { text, tone } : null),
    [],
  );

  const refresh = useCallback(
    () => queryClient.invalidateQueries(trpc.datasets.get.queryFilter(scope)),
    [queryClient, trpc, scope],
  );

  // Returns the error for the caller to show at its field or row, or null when it was a conflict.
  const handleError = useCallback((error: unknown): AppErrorInfo | null => {
    const info = readAppError(error);
    if (info?.code === 'dataset_conflict') {
      setNoticeState({ text: conflictNotice, tone: 'warning' });
      return null;
    }
    return info;
  }, []);

  // Stable between renders (given a stable scope), so the memoized case table skips renders that
  // only change the notice or the add form.
  const actions = useMemo(() => ({ refresh, handleError, setNotice }), [refresh, handleError, setNotice]);

  return { query, dataset: query.data, refresh, handleError, notice, setNotice, actions };
}

export type DatasetActions = ReturnType<typeof useDataset>['actions'];
