'use client';

import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { formatCount } from '@/components/format';
import { percent } from '@/components/evals/types';
import { Button } from '@/components/ui/Button';
import { Card, CardBody, CardHeader } from '@/components/ui/Card';
import { Select } from '@/components/ui/Field';
import { useTRPC } from '@/lib/trpc/client';
import { rangeStart } from './chartData';
import { OnlinePassRate, useOnlinePassRates } from './OnlinePassRate';

const ranges = [
  { days: 7, label: 'Last 7 days' },
  { days: 14, label: 'Last 14 days' },
  { days: 30, label: 'Last 30 days' },
  { days: 90, label: 'Last 90 days' },
] as const;

// "How are the versions doing in production": the daily pass rate per version from online evaluation.
export function OnlineScoresCard({
  organizationId,
  promptId,
  canWrite,
}: {
  organizationId: string;
  promptId: string;
  canWrite: boolean;
}) {
  const trpc = useTRPC();
  const target = { organizationId, promptId };
  const [days, setDays] = useState<number>(30);
  const [from, setFrom] = useState(() => rangeStart(30));
  const { scores, data } = useOnlinePassRates(target, from);
  const config = useQuery(trpc.online.get.queryOptions(target));
  const totals = data?.totals;

  return (
    <Card id="online-scores" aria-labelledby="online-scores-title">
      <CardHeader
        titleId="online-scores-title"
        title="Production pass rate"
        description="How each version does on real traffic: a sample of its production model spans scored by the judge of online evaluation."
        actions={
          <div className="inline online-range">
            <Select
              compact
              aria-label="Days shown"
              value={days}
              onChange={(e) => {
                const next = Number(e.target.value);
                setDays(next);
                setFrom(rangeStart(next));
              }}
            >
              {ranges.map((range) => (
                <option key={range.days} value={range.days}>
                  {range.label}
                </option>
              ))}
            </Select>
            <Button
              size="sm"
              variant="ghost"
              loading={scores.isFetching}
              onClick={() => {
                const next = rangeStart(days);
                if (next === from) void scores.refetch();
                else setFrom(next);
              }}
            >
              Refresh
            </Button>
          </div>
        }
      />
      <CardBody className="stack">
        {totals && !data?.empty ? (
          <dl className="online-totals">
            <div>
              <dt>Sampled</dt>
              <dd>{formatCount(totals.sampled)}</dd>
            </div>
            <div>
              <dt>Scored</dt>
              <dd>{formatCount(totals.scored)}</dd>
            </div>
            <div>
              <dt>Passed</dt>
              <dd>
                {formatCount(totals.passed)}{' '}
                <span className="muted">({percent(totals.scored ? totals.passed / totals.scored : null)})</span>
              </dd>
            </div>
            <div>
              <dt title="Sampled spans without both an input and an output in their content">Skipped, no content</dt>
              <dd>{formatCount(totals.skippedNoContent)}</dd>
            </div>
          </dl>
        ) : null}
        <OnlinePassRate
          scores={scores}
          data={data}
          label="Production pass rate"
          emptyTitle="Nothing scored in this range"
          emptyDescription={
            config.data?.enabled
              ? 'Online evaluation is on: scores appear as model spans tagged with a version of this prompt arrive with their input and output.'
              : canWrite
                ? 'Turn on online evaluation below to score a sample of this prompt’s production spans.'
                : 'Online evaluation is off: an editor can turn it on below to score a sample of production spans.'
          }
        />
      </CardBody>
    </Card>
  );
}
