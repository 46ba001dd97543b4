'use client';

import { useInfiniteQuery, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import type { Version } from '@/components/evals/types';
import { mergeChoices, missingVersionText } from './choices';

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

// The largest page the list takes: a picker reaches 100 more versions per "Load older versions…".
const pickerPageSize = 100;

// The versions found by number beyond the loaded pages, shared by every picker of the prompt (kept in
// the query cache, never fetched: versions are immutable, so nothing here goes stale but labels).
const foundKey = (target: Target) => ['versionPicker', 'found', target.organizationId, target.promptId] as const;

export type FoundVersion = { version: Version; error: null } | { version: null; error: string };

/**
 * What every version picker offers: the list's pages loaded so far (newest first, 100 a page) and the
 * versions found by number, so any version of the prompt can be chosen. `find` resolves a number
 * through versions.get and says, in the user's words, when the prompt has no such version.
 */
export function useVersionChoices(target: Target) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useInfiniteQuery(
    trpc.versions.list.infiniteQueryOptions(
      { ...target, limit: pickerPageSize },
      { getNextPageParam: (page) => page.nextCursor ?? undefined },
    ),
  );
  const found = useQuery<Version[]>({
    queryKey: foundKey(target),
    queryFn: () => queryClient.getQueryData<Version[]>(foundKey(target)) ?? [],
    initialData: [],
    staleTime: Infinity,
    enabled: false,
  });
  const loaded: Version[] = list.data?.pages.flatMap((page) => page.items) ?? [];
  const versions = mergeChoices(loaded, found.data ?? []);

  async function find(number: number): Promise<FoundVersion> {
    const known = versions.find((version) => version.number === number);
    if (known) return { version: known, error: null };
    // Version numbers are Postgres integers: a larger one is no version (and never sent: the API says 400).
    if (number > 2_147_483_647) return { version: null, error: missingVersionText(number, loaded[0]?.number) };
    try {
      const version = (await queryClient.fetchQuery(
        trpc.versions.get.queryOptions({ ...target, number }, { staleTime: Infinity }),
      )) as Version;
      queryClient.setQueryData<Version[]>(foundKey(target), (current) =>
        mergeChoices([], [...(current ?? []), version]),
      );
      return { version, error: null };
    } catch (error) {
      const info = readAppError(error);
      if (info?.code === 'not_found' || info?.code === 'version_not_found')
        return { version: null, error: missingVersionText(number, loaded[0]?.number) };
      return { version: null, error: info?.message ?? 'Could not look that version up. Try again.' };
    }
  }

  return {
    list,
    versions,
    numberOf: (id: string | null | undefined) =>
      id ? versions.find((version) => version.id === id)?.number : undefined,
    hasOlder: list.hasNextPage,
    loadingOlder: list.isFetchingNextPage,
    loadOlder: () => void list.fetchNextPage(),
    find,
  };
}
