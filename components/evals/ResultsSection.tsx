'use client';

import { useSearchParams } from 'next/navigation';
import { Fragment, useEffect, useMemo, useRef, useState } from 'react';
import { Badge } from '@/components/ui/Badge';
import { Button } from '@/components/ui/Button';
import { Card, CardHeader } from '@/components/ui/Card';
import { EmptyState, SkeletonRows } from '@/components/ui/States';
import { ChevronRightIcon, ListIcon } from '@/components/ui/icons';
import { ResultCount } from '@/components/ui/ResultCount';
import { CaseDetail, type StoppedSides } from './CaseDetail';
import { ResultBadge } from './parts';
import type { EvalResult } from './types';
import { matchesFilter, type CaseRow, type Category, type Filter } from './useResults';

const filters: { value: 'all' | Filter; label: string }[] = [
  { value: 'all', label: 'All' },
  { value: 'regression', label: 'Regressions' },
  { value: 'failed', label: 'Failed' },
  { value: 'error', label: 'Errors' },
  { value: 'review', label: 'Needs review' },
  { value: 'improved', label: 'Improved' },
];

const categoryBadge: Partial<Record<Category, { tone: 'danger' | 'success' | 'warning'; text: string }>> = {
  regression: { tone: 'danger', text: 'Regression' },
  improved: { tone: 'success', text: 'Improved' },
};

function excerpt(text: string | null | undefined, length = 140): string {
  if (!text) return '';
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > length ? `${flat.slice(0, length)}…` : flat;
}

function OutputCell({ result, stopped }: { result: EvalResult | null; stopped: boolean }) {
  if (!result) return <span className="subtle">Not run</span>;
  return (
    <div className="result-cell">
      <ResultBadge status={result.status} passed={result.passed} stopped={stopped} />
      {result.status === 'error' ? (
        <span className="result-excerpt error-text">{excerpt(result.error)}</span>
      ) : result.output !== null ? (
        <span className="result-excerpt">
          {excerpt(result.output) || <span className="subtle">(empty output)</span>}
        </span>
      ) : null}
    </div>
  );
}

export function ResultsSection({
  rows,
  comparison,
  loading,
  stopped,
}: {
  rows: CaseRow[];
  comparison: boolean;
  loading: boolean;
  // Sides that were cancelled or failed: their pending cases will not run.
  stopped: StoppedSides;
}) {
  // A link may name a case (`?case=case_…`, from a blocked promotion's regressed cases): that row is
  // opened and brought into view once the results are in.
  const linkedCase = useSearchParams().get('case');
  const [filter, setFilter] = useState<'all' | Filter>('all');
  // Said once a chip was pressed, not while the page loads.
  const [filterChosen, setFilterChosen] = useState(false);
  const [open, setOpen] = useState<Set<string>>(new Set());
  const linked = linkedCase ? rows.find((row) => row.caseId === linkedCase) : undefined;
  const shown = useRef<string | null>(null);
  useEffect(() => {
    if (!linked || shown.current === linked.key) return;
    shown.current = linked.key;
    setOpen((current) => new Set(current).add(linked.key));
    requestAnimationFrame(() =>
      document.getElementById(`case-${linked.caseId}`)?.scrollIntoView({ behavior: 'smooth', block: 'center' }),
    );
  }, [linked]);
  const counts = useMemo(() => {
    const map = new Map<string, number>();
    for (const { value } of filters)
      if (value !== 'all') map.set(value, rows.filter((row) => matchesFilter(row, value)).length);
    return map;
  }, [rows]);
  const visible = filter === 'all' ? rows : rows.filter((row) => matchesFilter(row, filter));
  const toggle = (key: string) =>
    setOpen((current) => {
      const next = new Set(current);
      if (next.has(key)) next.delete(key);
      else next.add(key);
      return next;
    });
  const columns = comparison ? 5 : 4;

  return (
    <Card flush>
      <CardHeader
        title="Results"
        description={
          comparison
            ? 'Candidate and production side by side for every case. Regressions (production passed, candidate did not) come first.'
            : 'Every case of this run, failures first.'
        }
      />
      <div className="filter-bar" role="toolbar" aria-label="Filter results">
        {filters
          .filter(
            (option) =>
              option.value === 'all' ||
              (comparison ? true : option.value !== 'regression' && option.value !== 'improved'),
          )
          .map((option) => {
            const count = option.value === 'all' ? rows.length : (counts.get(option.value) ?? 0);
            return (
              <button
                key={option.value}
                type="button"
                className="filter-chip"
                aria-pressed={filter === option.value}
                onClick={() => {
                  setFilter(option.value);
                  setFilterChosen(true);
                }}
                disabled={count === 0 && option.value !== 'all'}
              >
                {option.label} <span className="count-pill">{count}</span>
              </button>
            );
          })}
      </div>
      <ResultCount
        count={filterChosen ? visible.length : null}
        one="case shown"
        many="cases shown"
        none="No case matches this filter"
      />
      {loading && rows.length === 0 ? (
        <SkeletonRows rows={4} label="Loading results" />
      ) : visible.length === 0 ? (
        <EmptyState
          icon={<ListIcon size={20} />}
          title={rows.length === 0 ? 'No results yet' : 'Nothing here'}
          description={rows.length === 0 ? 'Results appear as cases finish.' : 'No case matches this filter.'}
        />
      ) : (
        <div className="table-wrap">
          <table className="table table-stack results-table">
            <caption className="visually-hidden">Results per case</caption>
            <thead>
              <tr>
                <th scope="col" className="col-case">
                  Case
                </th>
                <th scope="col">Input</th>
                <th scope="col">Candidate</th>
                {comparison ? <th scope="col">Production</th> : null}
                <th scope="col" className="cell-actions">
                  <span className="visually-hidden">Details</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {visible.map((row) => {
                const expanded = open.has(row.key);
                const badge = categoryBadge[row.category];
                return (
                  <Fragment key={row.key}>
                    <tr
                      id={`case-${row.caseId}`}
                      data-case-result={row.number}
                      data-category={row.category}
                      className={expanded ? 'row-open' : undefined}
                    >
                      <td className="col-case">
                        <div className="stack-xs">
                          <span className="mono">#{row.number}</span>
                          {badge ? <Badge tone={badge.tone}>{badge.text}</Badge> : null}
                        </div>
                      </td>
                      <td className="result-input" data-label="Input">
                        {excerpt(row.input, 100)}
                      </td>
                      <td data-label="Candidate">
                        <OutputCell result={row.candidate} stopped={stopped.candidate} />
                      </td>
                      {comparison ? (
                        <td data-label="Production">
                          <OutputCell result={row.production} stopped={stopped.production} />
                        </td>
                      ) : null}
                      <td className="cell-actions">
                        <Button
                          size="sm"
                          variant="ghost"
                          aria-expanded={expanded}
                          aria-label={`${expanded ? 'Hide' : 'Show'} details of case ${row.number}`}
                          onClick={() => toggle(row.key)}
                        >
                          <ChevronRightIcon size={14} className={expanded ? 'chevron-open' : undefined} />
                        </Button>
                      </td>
                    </tr>
                    {expanded ? (
                      <tr className="detail-row">
                        <td colSpan={columns}>
                          <CaseDetail row={row} comparison={comparison} stopped={stopped} />
                        </td>
                      </tr>
                    ) : null}
                  </Fragment>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </Card>
  );
}
