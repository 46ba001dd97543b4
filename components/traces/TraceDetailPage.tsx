'use client';

import './traces.css';
import Link from 'next/link';
import { usePathname, useRouter, useSearchParams } from 'next/navigation';
import { useInfiniteQuery } from '@tanstack/react-query';
import { useEffect, useMemo, useRef, useState } from 'react';
import { OrganizationGate } from '@/components/organizations/OrganizationGate';
import { ButtonLink } from '@/components/ui/Button';
import { Card } from '@/components/ui/Card';
import { PageHeader, TitleBreak } from '@/components/ui/PageHeader';
import { usePageTitle } from '@/components/shell/usePageTitle';
import { LoadMore } from '@/components/ui/LoadMore';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { ErrorState, SkeletonRows } from '@/components/ui/States';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import { can } from '@/server/auth/schemas';
import type { Span } from '@/server/traces/schemas';
import { formatCount, formatDuration, formatTimestamp, formatUsdNanos } from '@/components/format';
import { SpanPanel, spanDetailsId } from './SpanPanel';
import { SpanStatusBadge } from './StatusBadge';
import { Waterfall, traceBounds } from './Waterfall';

const pollMs = 2000;

const sum = (spans: Span[], pick: (s: Span) => number | null) =>
  spans.reduce<number | null>((total, s) => (pick(s) === null ? total : (total ?? 0) + (pick(s) as number)), null);

// The root when it has arrived, else the earliest span without a parent (an OpenTelemetry trace may
// have several), else the earliest span: the same rule as the list. Spans come in start order.
function headSpan(spans: Span[]): Span {
  return (
    spans.find((s) => s.spanId === s.rootSpanId && !s.parentSpanId) ?? spans.find((s) => !s.parentSpanId) ?? spans[0]
  );
}

// Ticks while spans are running so their bars keep growing between polls.
function useNow(active: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [active]);
  return now;
}

// Calls `load` when the element scrolls into view (the end of the loaded spans).
function useLoadOnView(load: () => void, active: boolean) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = ref.current;
    if (!active || !element || typeof IntersectionObserver === 'undefined') return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) load();
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [load, active]);
  return ref;
}

function TraceView({
  organizationId,
  organizationName,
  traceId,
  canWrite,
}: {
  organizationId: string;
  organizationName: string;
  traceId: string;
  canWrite: boolean;
}) {
  const trpc = useTRPC();
  // The trace comes in pages of at most 1,000 spans; more load as the user scrolls to the end of
  // the waterfall, expands a span, or asks. While spans run, the loaded pages are polled.
  const trace = useInfiniteQuery({
    ...trpc.traces.get.infiniteQueryOptions(
      { organizationId, traceId },
      { getNextPageParam: (page) => page.nextCursor },
    ),
    refetchInterval: (query) =>
      query.state.data?.pages.some((page) => page.spans.some((s) => s.status === 'running')) ? pollMs : false,
  });
  const spans = useMemo(() => trace.data?.pages.flatMap((page) => page.spans) ?? [], [trace.data]);
  const spanCount = trace.data?.pages[trace.data.pages.length - 1].spanCount ?? 0;
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = trace;
  const loadMore = useMemo(
    () => () => {
      if (hasNextPage && !isFetchingNextPage) void fetchNextPage();
    },
    [hasNextPage, isFetchingNextPage, fetchNextPage],
  );
  const endRef = useLoadOnView(loadMore, hasNextPage);
  const running = spans.some((s) => s.status === 'running');
  const now = useNow(running);
  // The selected span lives in the URL (?span=) so a link opens the trace on that span.
  const router = useRouter();
  const pathname = usePathname();
  const selectedId = useSearchParams().get('span');
  const select = (spanId: string) => {
    router.replace(`${pathname}?span=${spanId}`, { scroll: false });
    requestAnimationFrame(revealSpanDetails);
  };
  const ids = useMemo(() => new Set(spans.map((s) => s.spanId)), [spans]);
  usePageTitle(spans.length > 0 ? headSpan(spans).name : undefined);

  const breadcrumbs = (
    <>
      <Link href="/organizations">Organizations</Link>/
      <Link href={`/organizations/${organizationId}`}>{organizationName}</Link>/
      <Link href={`/organizations/${organizationId}/traces`}>Traces</Link>
    </>
  );

  if (trace.isPending) {
    return (
      <div className="page">
        <PageHeader breadcrumbs={breadcrumbs} title="Trace" />
        <Card>
          <SkeletonRows rows={6} label="Loading trace" />
        </Card>
      </div>
    );
  }
  if (trace.isError) {
    const missing = readAppError(trace.error)?.code === 'not_found';
    return (
      <div className="page">
        <PageHeader breadcrumbs={breadcrumbs} title="Trace" />
        <Card>
          {missing ? (
            <ErrorState
              title="Trace not found"
              description="No spans with this trace ID have arrived in this organization."
              action={<ButtonLink href={`/organizations/${organizationId}/traces`}>Back to traces</ButtonLink>}
            />
          ) : (
            <QueryErrorState title="Could not load this trace" query={trace} />
          )}
        </Card>
      </div>
    );
  }

  const head = headSpan(spans);
  const bounds = traceBounds(spans, now);
  const { start, end } = bounds;
  const selected = spans.find((s) => s.spanId === selectedId) ?? head;
  const inputTokens = sum(spans, (s) => s.inputTokens);
  const outputTokens = sum(spans, (s) => s.outputTokens);
  const cost = sum(spans, (s) => s.costUsdNanos);

  return (
    <div className="page">
      <PageHeader
        breadcrumbs={breadcrumbs}
        title={
          <>
            {head.name}
            <TitleBreak />
            <SpanStatusBadge status={running ? 'running' : head.status} />
          </>
        }
        description={
          <>
            <span>{head.service}</span> · <code className="mono-sm">{traceId}</code>
            {running ? <span className="muted"> · updating every 2 seconds</span> : null}
          </>
        }
      />
      <Card className="stats" aria-label="Trace summary">
        <div className="stat">
          <span className="stat-label">Started</span>
          <span className="stat-value">{formatTimestamp(start)}</span>
        </div>
        <div className="stat">
          <span className="stat-label">Duration</span>
          <span className="stat-value">
            {formatDuration(end - start)}
            {running ? '…' : ''}
          </span>
        </div>
        <div className="stat">
          <span className="stat-label">Spans</span>
          <span className="stat-value" data-testid="spans-loaded">
            {spans.length < spanCount
              ? `${formatCount(spans.length)} of ${formatCount(spanCount)} loaded`
              : formatCount(spanCount)}
          </span>
        </div>
        <div className="stat">
          <span className="stat-label">{spans.length < spanCount ? 'Tokens (loaded spans)' : 'Tokens'}</span>
          <span className="stat-value">
            {inputTokens === null && outputTokens === null
              ? '—'
              : `${formatCount(inputTokens ?? 0)} in · ${formatCount(outputTokens ?? 0)} out`}
          </span>
        </div>
        <div className="stat">
          <span className="stat-label">{spans.length < spanCount ? 'Cost (loaded spans)' : 'Cost'}</span>
          <span className="stat-value">{formatUsdNanos(cost)}</span>
        </div>
      </Card>
      <div className="trace-layout">
        <Card flush>
          <Waterfall
            spans={spans}
            now={now}
            bounds={bounds}
            selectedId={selected.spanId}
            onSelect={select}
            onExpand={loadMore}
            complete={!hasNextPage}
            end={
              <>
                <div ref={endRef} aria-hidden="true" />
                <LoadMore
                  query={trace}
                  label={`Load more spans (${formatCount(spanCount - spans.length)} not loaded)`}
                />
              </>
            }
          />
        </Card>
        <SpanPanel
          organizationId={organizationId}
          span={selected}
          orphan={Boolean(selected.parentSpanId && !ids.has(selected.parentSpanId))}
          now={now}
          canWrite={canWrite}
        />
      </div>
    </div>
  );
}

// Where the details sit under the waterfall (a phone, a narrow window), a tapped span's details
// start below the screen: bring them up, unless their top is already in sight (then nothing moves).
function revealSpanDetails() {
  const panel = document.getElementById(spanDetailsId);
  if (!panel || panel.getBoundingClientRect().top < window.innerHeight - 48) return;
  const reduce = window.matchMedia('(prefers-reduced-motion: reduce)').matches;
  panel.scrollIntoView({ behavior: reduce ? 'auto' : 'smooth', block: 'start' });
}

export function TraceDetailPage({ organizationId, traceId }: { organizationId: string; traceId: string }) {
  return (
    <OrganizationGate organizationId={organizationId}>
      {(org) => (
        <TraceView
          organizationId={org.id}
          organizationName={org.name}
          traceId={traceId}
          canWrite={can(org.role, 'prompts.write') && !org.readOnly}
        />
      )}
    </OrganizationGate>
  );
}
