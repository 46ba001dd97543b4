'use client';

import './traces.css';
import Link from 'next/link';
import { usePathname, useRouter, useSearchParams } from 'next/navigation';
import { useInfiniteQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState, type ReactNode } from 'react';
import {
  formatCount,
  formatDuration,
  formatTimestamp,
  formatUsdNanos,
  planName,
  retentionText,
} from '@/components/format';
import type { Plan } from '@/server/billing/schemas';
import { OrganizationGate } from '@/components/organizations/OrganizationGate';
import { OrganizationPageHeader } from '@/components/organizations/OrganizationPageHeader';
import { Button, ButtonLink } from '@/components/ui/Button';
import { Card } from '@/components/ui/Card';
import { LoadMore } from '@/components/ui/LoadMore';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { ResultCount } from '@/components/ui/ResultCount';
import { EmptyState, SkeletonRows } from '@/components/ui/States';
import { Table } from '@/components/ui/Table';
import { ActivityIcon, KeyIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import { emptyFilters, filtersQuery, hasFilters, listInput, readFilters, type TraceFilters } from './filters';
import { SpanStatusBadge } from './StatusBadge';
import { TraceFilterBar } from './TraceFilterBar';
import { can } from '@/server/auth/schemas';
import { RelativeTime } from '@/components/ui/RelativeTime';

type TraceTableProps = {
  organizationId: string;
  canManageKeys: boolean;
  filters: TraceFilters;
  anchor: number;
  onClear: () => void;
};

function TraceTable({ organizationId, canManageKeys, filters, anchor, onClear }: TraceTableProps) {
  const trpc = useTRPC();
  const router = useRouter();
  const input = useMemo(
    () => ({ organizationId, limit: 25, ...listInput(filters, anchor) }),
    [organizationId, filters, anchor],
  );
  const list = useInfiniteQuery(
    trpc.traces.list.infiniteQueryOptions(input, { getNextPageParam: (page) => page.nextCursor }),
  );

  // Every state keeps the count's live region in place, so a changed filter is announced when its list arrives.
  const filtered = hasFilters(filters);
  const traces = list.data?.pages.flatMap((page) => page.items) ?? [];
  const withCount = (body: ReactNode) => (
    <>
      <ResultCount
        count={filtered && list.isSuccess ? traces.length : null}
        more={list.hasNextPage}
        one="trace matches these filters"
        many="traces match these filters"
        none="No traces match these filters"
      />
      {body}
    </>
  );
  if (list.isPending) return withCount(<SkeletonRows rows={5} label="Loading traces" />);
  if (list.isError) return withCount(<QueryErrorState title="Could not load traces" query={list} />);
  if (!traces.length) {
    return withCount(
      filtered ? (
        <EmptyState
          icon={<ActivityIcon size={20} />}
          title="No traces match these filters"
          description="Widen the time range or clear a filter."
          action={<Button onClick={onClear}>Clear filters</Button>}
        />
      ) : (
        <EmptyState
          icon={<ActivityIcon size={20} />}
          title="No traces yet"
          description={`${canManageKeys ? 'Create an ingestion key' : 'Ask an editor or an admin for an ingestion key'}, then send span batches from your application to POST /api/v1/traces. They appear here within seconds.`}
          action={
            <ButtonLink
              href={`/organizations/${organizationId}/ingestion-keys`}
              variant={canManageKeys ? 'primary' : 'secondary'}
              icon={<KeyIcon size={14} />}
            >
              {canManageKeys ? 'Set up an ingestion key' : 'About ingestion keys'}
            </ButtonLink>
          }
        />
      ),
    );
  }

  const href = (traceId: string) => `/organizations/${organizationId}/traces/${traceId}`;
  return withCount(
    <>
      <Table caption="Traces" className="table-compact">
        <thead>
          <tr>
            <th scope="col">Trace</th>
            <th scope="col">Service</th>
            <th scope="col">Status</th>
            <th scope="col">Started</th>
            <th scope="col" className="cell-num">
              Duration
            </th>
            <th scope="col" className="cell-num">
              Spans
            </th>
            <th scope="col" className="cell-num">
              Tokens
            </th>
            <th scope="col" className="cell-num">
              Cost
            </th>
          </tr>
        </thead>
        <tbody>
          {traces.map((trace) => {
            const tokens =
              trace.inputTokens === null && trace.outputTokens === null
                ? null
                : (trace.inputTokens ?? 0) + (trace.outputTokens ?? 0);
            return (
              <tr
                key={trace.traceId}
                className="trace-row"
                data-trace={trace.traceId}
                onClick={(e) => !(e.target as HTMLElement).closest('a') && router.push(href(trace.traceId))}
              >
                <td>
                  <Link className="trace-name" href={href(trace.traceId)}>
                    {trace.name}
                  </Link>
                  <span className="cell-sub mono-sm">{trace.traceId.slice(0, 16)}…</span>
                </td>
                <td className="cell-nowrap">{trace.service}</td>
                <td>
                  <SpanStatusBadge status={trace.status} />
                </td>
                <td className="cell-nowrap">
                  {formatTimestamp(trace.startedAt)}
                  <span className="cell-sub">
                    <RelativeTime time={trace.startedAt} />
                  </span>
                </td>
                <td className="cell-num">
                  {trace.durationMs === null ? (
                    <span className="muted">running</span>
                  ) : (
                    formatDuration(trace.durationMs)
                  )}
                </td>
                <td className="cell-num">{formatCount(trace.spanCount)}</td>
                <td className="cell-num">
                  {formatCount(tokens)}
                  {tokens !== null ? (
                    <span className="cell-sub">
                      {formatCount(trace.inputTokens ?? 0)} in · {formatCount(trace.outputTokens ?? 0)} out
                    </span>
                  ) : null}
                </td>
                <td className="cell-num">{formatUsdNanos(trace.costUsdNanos)}</td>
              </tr>
            );
          })}
        </tbody>
      </Table>
      <LoadMore query={list} />
    </>,
  );
}

/** `retention`: the days a trace is kept per plan (TRACE_RETENTION_DAYS_FREE/PRO). */
export function TraceListPage({
  organizationId,
  retention,
}: {
  organizationId: string;
  retention: Record<Plan, number>;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const router = useRouter();
  const pathname = usePathname();
  const searchParams = useSearchParams();
  const filters = useMemo(() => readFilters(new URLSearchParams(searchParams.toString())), [searchParams]);
  // Relative ranges are measured from when they were chosen or refreshed, so the query key stays stable.
  const [anchor, setAnchor] = useState(() => Date.now());
  const apply = (next: TraceFilters) => {
    setAnchor(Date.now());
    const query = filtersQuery(next);
    router.replace(query ? `${pathname}?${query}` : pathname, { scroll: false });
  };
  const clear = () => apply(emptyFilters);

  return (
    <OrganizationGate organizationId={organizationId}>
      {(org) => (
        <div className="page">
          <OrganizationPageHeader
            org={org}
            title="Traces"
            description={`What your applications did: every trace with its spans, timing, tokens and cost. Traces are kept for ${retentionText(retention[org.plan])} on the ${planName(org.plan)} plan (each for the retention in force when it arrived).`}
            actions={
              <Button
                onClick={() => {
                  setAnchor(Date.now());
                  void queryClient.invalidateQueries(trpc.traces.list.pathFilter());
                }}
              >
                Refresh
              </Button>
            }
          />
          <Card flush>
            <TraceFilterBar filters={filters} onChange={apply} />
            <TraceTable
              organizationId={org.id}
              canManageKeys={can(org.role, 'ingestionKeys.manage')}
              filters={filters}
              anchor={anchor}
              onClear={clear}
            />
          </Card>
        </div>
      )}
    </OrganizationGate>
  );
}
