'use client';

import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { useTRPC } from '@/lib/trpc/client';
import type { Version } from '@/components/evals/types';

type Target = { organizationId: string; promptId: string };

// The paged version list, newest first.
export function useVersionList(target: Target, limit = 25) {
  const trpc = useTRPC();
  const list = useInfiniteQuery(
    trpc.versions.list.infiniteQueryOptions(
      { ...target, limit },
      { getNextPageParam: (page) => page.nextCursor ?? undefined },
    ),
  );
  const versions: Version[] = list.data?.pages.flatMap((page) => page.items) ?? [];
  return { list, versions };
}

// versionId → number for the newest 100 versions (evaluations name versions by id).
export function useVersionNumbers(target: Target) {
  const trpc = useTRPC();
  const query = useQuery(trpc.versions.list.queryOptions({ ...target, limit: 100 }));
  const byId = new Map<string, number>(
    (query.data?.items ?? []).map((version: Version) => [version.id, version.number]),
  );
  return {
    query,
    versions: (query.data?.items ?? []) as Version[],
    numberOf: (id: string | null | undefined) => (id ? byId.get(id) : undefined),
  };
}

export function useLabels(target: Target) {
  const trpc = useTRPC();
  return useQuery(trpc.versions.labels.queryOptions(target));
}
