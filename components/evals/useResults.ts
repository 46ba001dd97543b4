'use client';

import { useInfiniteQuery } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { useTRPC } from '@/lib/trpc/client';
import type { EvalResult, Side } from './types';

const pageSize = 100;

// Every result of one side, all pages (an evaluation has at most the dataset's capacity of cases),
// refreshed while the evaluation still runs.
export function useSideResults(
  organizationId: string,
  evaluationId: string,
  side: Side,
  options: { enabled: boolean; live: boolean },
) {
  const trpc = useTRPC();
  const query = useInfiniteQuery({
    ...trpc.evals.results.infiniteQueryOptions(
      { organizationId, evaluationId, side, limit: pageSize },
      { getNextPageParam: (page) => page.nextCursor ?? undefined },
    ),
    enabled: options.enabled,
    refetchInterval: options.live ? 2_000 : false,
  });
  const { hasNextPage, isFetchingNextPage, fetchNextPage, refetch } = query;
  // The last poll may predate the side's last results: read them once more when the run settles.
  const wasLive = useRef(options.live);
  useEffect(() => {
    if (wasLive.current && !options.live && options.enabled) void refetch();
    wasLive.current = options.live;
  }, [options.live, options.enabled, refetch]);
  useEffect(() => {
    if (hasNextPage && !isFetchingNextPage) void fetchNextPage();
  }, [hasNextPage, isFetchingNextPage, fetchNextPage]);
  const results: EvalResult[] = query.data?.pages.flatMap((page) => page.items) ?? [];
  return { query, results };
}

export type CaseRow = {
  key: string;
  caseId: string;
  position: number;
  // 1-based case number in the frozen dataset order, whatever base the server counts from.
  number: number;
  input: string;
  expectedOutput: string;
  candidate: EvalResult | null;
  production: EvalResult | null;
  category: Category;
};

export type Category = 'regression' | 'failed' | 'error' | 'review' | 'improved' | 'pending' | 'passed';

function outcome(result: EvalResult | null): 'passed' | 'failed' | 'error' | 'review' | 'pending' | 'missing' {
  if (!result) return 'missing';
  if (result.status === 'scored') return result.passed ? 'passed' : 'failed';
  if (result.status === 'error') return 'error';
  if (result.status === 'pending_review') return 'review';
  return 'pending';
}

function categorize(candidate: EvalResult | null, production: EvalResult | null): Category {
  const c = outcome(candidate);
  const p = outcome(production);
  if (p === 'passed' && (c === 'failed' || c === 'error')) return 'regression';
  if (c === 'failed') return 'failed';
  if (c === 'error') return 'error';
  if (c === 'review' || p === 'review') return 'review';
  if (c === 'passed' && (p === 'failed' || p === 'error')) return 'improved';
  if (c === 'pending' || c === 'missing') return 'pending';
  return 'passed';
}

// The results filters overlap where a case is more than one thing: a regression whose candidate
// errored is under Regressions and under Errors, as the run's error count says.
export type Filter = 'regression' | 'failed' | 'error' | 'review' | 'improved';

export function matchesFilter(row: CaseRow, filter: Filter): boolean {
  const c = outcome(row.candidate);
  const p = outcome(row.production);
  switch (filter) {
    case 'failed':
      return c === 'failed';
    case 'error':
      return c === 'error' || p === 'error';
    case 'review':
      return c === 'review' || p === 'review';
    default:
      return row.category === filter;
  }
}

const order: Record<Category, number> = {
  regression: 0,
  failed: 1,
  error: 2,
  review: 3,
  improved: 4,
  pending: 5,
  passed: 6,
};

// Candidate and production joined per case (by caseId, else position); regressions first.
export function joinCases(candidate: EvalResult[], production: EvalResult[]): CaseRow[] {
  const rows = new Map<string, CaseRow>();
  const keyOf = (result: EvalResult) => result.caseId || `#${result.position}`;
  for (const result of candidate) {
    rows.set(keyOf(result), {
      key: keyOf(result),
      caseId: result.caseId,
      position: result.position,
      input: result.input,
      expectedOutput: result.expectedOutput,
      candidate: result,
      production: null,
      number: 0,
      category: 'pending',
    });
  }
  for (const result of production) {
    const row = rows.get(keyOf(result));
    if (row) row.production = result;
    else
      rows.set(keyOf(result), {
        key: keyOf(result),
        caseId: result.caseId,
        position: result.position,
        input: result.input,
        expectedOutput: result.expectedOutput,
        candidate: null,
        production: result,
        number: 0,
        category: 'pending',
      });
  }
  const list = [...rows.values()];
  const offset = list.some((row) => row.position === 0) ? 1 : 0;
  for (const row of list) {
    row.category = categorize(row.candidate, row.production);
    row.number = row.position + offset;
  }
  return list.sort((a, b) => order[a.category] - order[b.category] || a.position - b.position);
}
