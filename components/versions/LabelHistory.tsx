'use client';

import Link from 'next/link';
import { useInfiniteQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { ClientBadge, usePeople } from '@/components/evals/parts';
import type { Label, LabelHistoryItem } from '@/components/evals/types';
import { Card, CardHeader } from '@/components/ui/Card';
import { Select } from '@/components/ui/Field';
import { LoadMore } from '@/components/ui/LoadMore';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { EmptyState, SkeletonRows } from '@/components/ui/States';
import { Table } from '@/components/ui/Table';
import { ClockIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import { historyRollbacks, splitText, type NumberOf, type SplitEntry } from '@/components/releases/rules';
import { useVersionChoices } from './hooks';
import { RelativeTime } from '@/components/ui/RelativeTime';

function VersionRef({ number }: { number: number | null | undefined }) {
  return number ? <strong>v{number}</strong> : <span className="subtle">none</span>;
}

// A split in the history: "split v3 90% · v4 10%".
function SplitRef({ split, numberOf }: { split: SplitEntry[]; numberOf: NumberOf }) {
  return (
    <span className="traffic-ref" title="Traffic split">
      split {splitText(split, numberOf)}
    </span>
  );
}

function Side({
  split,
  number,
  numberOf,
}: {
  split: SplitEntry[] | null;
  number: number | null | undefined;
  numberOf: NumberOf;
}) {
  return split ? <SplitRef split={split} numberOf={numberOf} /> : <VersionRef number={number} />;
}

// Every label move, newest first: who, through which client, from → to, and the evaluation behind it.
// An import sets each label once (source 'import'): shown as "Imported", not as a move from nothing.
export function LabelHistory({
  organizationId,
  promptId,
  labels,
}: {
  organizationId: string;
  promptId: string;
  labels: Label[];
}) {
  const trpc = useTRPC();
  const person = usePeople(organizationId);
  const [label, setLabel] = useState('');
  const history = useInfiniteQuery(
    trpc.versions.history.infiniteQueryOptions(
      { organizationId, promptId, limit: 25, label: label || undefined },
      { getNextPageParam: (page) => page.nextCursor ?? undefined },
    ),
  );
  const items: LabelHistoryItem[] = history.data?.pages.flatMap((page) => page.items) ?? [];
  const choices = useVersionChoices({ organizationId, promptId });
  // A split names its versions by id: their numbers from the pickers' versions (the newest 100 and any
  // found by number), or the history rows themselves (each names the numbers of its one-version sides).
  const numberOf: NumberOf = (versionId) =>
    choices.numberOf(versionId) ??
    items.find((item) => item.toVersionId === versionId)?.toVersion ??
    items.find((item) => item.fromVersionId === versionId)?.fromVersion ??
    undefined;
  // A rollback moves a label back to a version it pointed at before (API.md), by the rows loaded:
  // not any move to a lower number.
  const rollbacks = historyRollbacks(items);
  const base = `/organizations/${organizationId}/prompts/${promptId}`;

  return (
    <Card flush id="history">
      <CardHeader
        title="Label history"
        description="Every move, rollback, split, override and import, with the evaluation that justified a move when there was one."
        actions={
          <Select compact aria-label="Filter history by label" value={label} onChange={(e) => setLabel(e.target.value)}>
            <option value="">All labels</option>
            {labels.map((item) => (
              <option key={item.label} value={item.label}>
                {item.label}
              </option>
            ))}
          </Select>
        }
      />
      {history.isPending ? (
        <SkeletonRows rows={3} label="Loading label history" />
      ) : history.isError ? (
        <QueryErrorState title="Could not load the label history" query={history} />
      ) : items.length === 0 ? (
        <EmptyState
          icon={<ClockIcon size={20} />}
          title="No label moves yet"
          description="Moves, rollbacks and removals appear here."
        />
      ) : (
        <>
          <Table caption="Label history" className="history-table">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Label</th>
                <th scope="col">Change</th>
                <th scope="col">Who</th>
                <th scope="col">Evaluation</th>
              </tr>
            </thead>
            <tbody>
              {items.map((item, index) => {
                const rollback = rollbacks[index];
                return (
                  <tr key={`${item.at}-${item.label}-${index}`} data-history-label={item.label}>
                    <td className="cell-nowrap muted">
                      <RelativeTime time={item.at} />
                    </td>
                    <td>
                      <span className="label-chip">{item.label}</span>
                    </td>
                    <td className="history-change">
                      {item.source === 'import' ? (
                        <>
                          <span className="badge badge-accent">Imported</span> at <VersionRef number={item.toVersion} />
                        </>
                      ) : item.toVersionId === null ? (
                        <>
                          Removed from <Side split={item.fromSplit} number={item.fromVersion} numberOf={numberOf} />
                        </>
                      ) : (
                        <>
                          <Side split={item.fromSplit} number={item.fromVersion} numberOf={numberOf} /> →{' '}
                          <Side split={item.toSplit} number={item.toVersion} numberOf={numberOf} />
                          {item.toSplit ? <span className="badge badge-accent">Split</span> : null}
                          {item.fromSplit && !item.toSplit ? <span className="badge">Split ended</span> : null}
                          {rollback ? <span className="badge badge-warning">Rollback</span> : null}
                        </>
                      )}
                      {item.override ? (
                        <div className="history-override">
                          <span className="badge badge-danger" title={item.override.reason}>
                            Override
                          </span>{' '}
                          <span className="override-reason">{item.override.reason}</span>
                        </div>
                      ) : null}
                    </td>
                    <td>
                      <div className="inline">
                        <span>{person(item.userId)}</span>
                        <ClientBadge clientId={item.clientId} />
                      </div>
                    </td>
                    <td>
                      {item.evaluationId ? (
                        <Link href={`${base}/evals/${item.evaluationId}`} className="mono">
                          {item.evaluationId}
                        </Link>
                      ) : (
                        <span className="subtle">—</span>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </Table>
          <LoadMore query={history} />
        </>
      )}
    </Card>
  );
}
