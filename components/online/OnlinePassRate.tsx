'use client';

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useMemo, type ReactNode } from 'react';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { EmptyState, SkeletonRows } from '@/components/ui/States';
import { ActivityIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import { shapePassRates, type ChartData } from './chartData';
import { PassRateChart } from './PassRateChart';
import './online.css';

type Target = { organizationId: string; promptId: string };

// The online scores of a prompt from `from` (Unix ms) to now, shaped for the chart. The query key
// holds only `from`: the server's `to` defaults to now, so a re-render never refetches.
export function useOnlinePassRates(target: Target, from: number | undefined, versionIds?: readonly string[]) {
  const trpc = useTRPC();
  const scores = useQuery({
    ...trpc.online.scores.queryOptions({ ...target, ...(from === undefined ? {} : { from }) }),
    enabled: from !== undefined,
    placeholderData: keepPreviousData,
  });
  const items = scores.data?.items;
  // By value: callers pass a fresh array on every render.
  const idsKey = versionIds?.join(',');
  const data = useMemo<ChartData | null>(() => {
    if (!items || from === undefined) return null;
    const ids = idsKey === undefined ? undefined : idsKey.split(',').filter(Boolean);
    return shapePassRates(items, { from, to: Date.now(), ...(ids ? { versionIds: ids } : {}) });
  }, [items, from, idsKey]);
  return { scores, data };
}

/** The chart with its loading, error and empty states. */
export function OnlinePassRate({
  scores,
  data,
  label,
  emptyTitle,
  emptyDescription,
}: {
  scores: ReturnType<typeof useOnlinePassRates>['scores'];
  data: ChartData | null;
  label: string;
  emptyTitle: string;
  emptyDescription: ReactNode;
}) {
  if (scores.isError) return <QueryErrorState title="Could not load the online scores" query={scores} />;
  if (!data) return <SkeletonRows rows={4} label="Loading the online scores" />;
  if (data.empty) {
    return <EmptyState icon={<ActivityIcon size={20} />} title={emptyTitle} description={emptyDescription} />;
  }
  return <PassRateChart data={data} label={label} />;
}
