'use client';

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { formatCount, formatDateTime, formatDuration, formatRelative, formatUsdNanos } from '@/components/format';
import { percent, type Label } from '@/components/evals/types';
import { Badge } from '@/components/ui/Badge';
import { Button } from '@/components/ui/Button';
import { Card, CardHeader } from '@/components/ui/Card';
import { Select } from '@/components/ui/Field';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { EmptyState, Skeleton } from '@/components/ui/States';
import { ActivityIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import { OnlinePassRate, useOnlinePassRates } from '@/components/online/OnlinePassRate';
import { readAppError } from '@/lib/trpc/errors';
import type { SplitVersionStats } from '@/server/releases/schemas';
import type { Target } from './hooks';
import { SplitId } from './SplitId';

const ranges = [
  { value: 'split', label: 'Since the split began', ms: null },
  { value: '1h', label: 'Last hour', ms: 60 * 60_000 },
  { value: '24h', label: 'Last 24 hours', ms: 24 * 60 * 60_000 },
  { value: '7d', label: 'Last 7 days', ms: 7 * 24 * 60 * 60_000 },
] as const;
type Range = (typeof ranges)[number]['value'];

function fromOf(range: Range): number | undefined {
  const ms = ranges.find((option) => option.value === range)?.ms;
  return ms ? Date.now() - ms : undefined;
}

type Metric = { name: string; hint?: string; value: (v: SplitVersionStats) => ReactNode };

const metrics: Metric[] = [
  { name: 'Retrievals', hint: 'Retrievals that chose this version', value: (v) => formatCount(v.retrievals) },
  { name: 'Model spans', hint: 'Finished model spans tagged with this version', value: (v) => formatCount(v.spans) },
  {
    name: 'Error rate',
    value: (v) =>
      v.spans === 0 ? (
        <span className="subtle">—</span>
      ) : (
        <span className={v.errorRate > 0 ? 'error-text' : undefined}>{percent(v.errorRate)}</span>
      ),
  },
  { name: 'Latency p50', value: (v) => formatDuration(v.p50LatencyMs) },
  { name: 'Latency p95', value: (v) => formatDuration(v.p95LatencyMs) },
  { name: 'Input tokens', value: (v) => formatCount(v.inputTokens) },
  { name: 'Output tokens', value: (v) => formatCount(v.outputTokens) },
  { name: 'Cost', value: (v) => formatUsdNanos(v.costUsdNanos) },
  {
    name: 'Online score',
    hint: 'Mean score of the scored spans',
    value: (v) =>
      v.onlineScore.scored === 0 || v.onlineScore.meanScore === null ? (
        <span className="subtle" title="Not scored yet">
          —
        </span>
      ) : (
        <>
          {percent(v.onlineScore.meanScore)}{' '}
          <span className="subtle">
            ({v.onlineScore.passed}/{v.onlineScore.scored} passed)
          </span>
        </>
      ),
  },
];

// A split label's versions side by side, from the model spans and retrievals each one got, with a
// "Promote vN" per version that moves the label to that one version (through the gated move dialog).
export function SplitPanel({
  target,
  label,
  canWrite,
  onPromote,
}: {
  target: Target;
  label: Label;
  canWrite: boolean;
  onPromote: (versionId: string) => void;
}) {
  const trpc = useTRPC();
  const [range, setRange] = useState<Range>('split');
  const [from, setFrom] = useState<number | undefined>(undefined);
  const stats = useQuery({
    ...trpc.versions.splitStats.queryOptions({ ...target, label: label.label, ...(from ? { from } : {}) }),
    placeholderData: keepPreviousData,
  });
  const noSplit = stats.isError && readAppError(stats.error)?.code === 'invalid_state';
  const versions = stats.data?.versions ?? [];
  const byVersion = new Map(versions.map((v) => [v.versionId, v]));
  // The columns come from the label itself, so Promote works even while the figures load or fail.
  const columns = label.split ?? [];
  const quiet = versions.length > 0 && versions.every((v) => v.retrievals === 0 && v.spans === 0);
  // The daily pass rate of the split's versions over the same range (since the split began by default).
  const since = stats.data ? Date.parse(stats.data.since) : undefined;
  const online = useOnlinePassRates(
    target,
    from ?? since,
    columns.map((entry) => entry.versionId),
  );

  return (
    <Card flush id={`split-${label.label}`} aria-label={`Traffic split of ${label.label}`}>
      <CardHeader
        title={
          <>
            Traffic split · <span className="label-chip">{label.label}</span>
          </>
        }
        description={
          stats.data ? (
            <span className="traffic-meta">
              Since <span title={formatDateTime(stats.data.since)}>{formatRelative(stats.data.since)}</span>
              <SplitId value={stats.data.splitId} />
            </span>
          ) : (
            'How each version does with the traffic it gets.'
          )
        }
        actions={
          <div className="inline">
            <Select
              compact
              aria-label="Time range"
              value={range}
              onChange={(e) => {
                const next = e.target.value as Range;
                setRange(next);
                setFrom(fromOf(next));
              }}
            >
              {ranges.map((option) => (
                <option key={option.value} value={option.value}>
                  {option.label}
                </option>
              ))}
            </Select>
            <Button
              size="sm"
              variant="ghost"
              loading={stats.isFetching}
              onClick={() => (range === 'split' ? void stats.refetch() : setFrom(fromOf(range)))}
            >
              Refresh
            </Button>
          </div>
        }
      />
      {noSplit ? (
        <EmptyState title="No split any more" description={`${label.label} points at one version now.`} />
      ) : (
        <>
          <div className="table-wrap">
            <table
              className="table traffic-table"
              aria-label={`Split statistics of ${label.label}`}
              aria-busy={stats.isPending || undefined}
            >
              <thead>
                <tr>
                  <th scope="col">
                    <span className="visually-hidden">Metric</span>
                  </th>
                  {columns.map((entry) => (
                    <th scope="col" key={entry.versionId} data-split-version={entry.version}>
                      <div className="traffic-head">
                        <span>
                          <strong className="version-number">v{entry.version}</strong>{' '}
                          <Badge tone="accent">{entry.weight}%</Badge>
                        </span>
                        {canWrite ? (
                          <Button size="sm" onClick={() => onPromote(entry.versionId)}>
                            Promote v{entry.version}
                          </Button>
                        ) : null}
                      </div>
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                <tr>
                  <th scope="row">Weight</th>
                  {columns.map((entry) => (
                    <td key={entry.versionId} className="traffic-value">
                      {entry.weight}%
                    </td>
                  ))}
                </tr>
                {metrics.map((metric) => (
                  <tr key={metric.name}>
                    <th scope="row" title={metric.hint}>
                      {metric.name}
                    </th>
                    {columns.map((entry) => {
                      const figures = byVersion.get(entry.versionId);
                      return (
                        <td key={entry.versionId} className="traffic-value">
                          {figures ? (
                            metric.value(figures)
                          ) : stats.isPending ? (
                            <Skeleton width={56} height={12} />
                          ) : (
                            <span className="subtle">—</span>
                          )}
                        </td>
                      );
                    })}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {stats.isError ? (
            <QueryErrorState title="Could not load the split statistics" query={stats} />
          ) : quiet ? (
            <EmptyState
              icon={<ActivityIcon size={20} />}
              title="No traffic in this range yet"
              description="Figures appear as applications retrieve this label with a subject and send traces tagged with the version (the SDK's trace exporter does)."
            />
          ) : null}
          <section className="split-online" aria-label={`Daily pass rate of ${label.label}`}>
            <h3 className="split-online-title">Daily pass rate (online evaluation)</h3>
            <OnlinePassRate
              scores={online.scores}
              data={online.data}
              label={`Daily pass rate of ${label.label}`}
              emptyTitle="No spans of these versions scored yet"
              emptyDescription="With online evaluation on, a sample of each version’s production spans is scored by the judge; the daily pass rates appear here."
            />
          </section>
        </>
      )}
    </Card>
  );
}
