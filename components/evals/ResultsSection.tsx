'use client';

import { Fragment, useMemo, useState } from 'react';
import { formatDuration, formatUsdNanos } from '@/components/format';
import { Badge } from '@/components/ui/Badge';
import { Button } from '@/components/ui/Button';
import { Card, CardHeader } from '@/components/ui/Card';
import { EmptyState, SkeletonRows } from '@/components/ui/States';
import { ChevronRightIcon, ListIcon } from '@/components/ui/icons';
import { DiffView } from './DiffView';
import { ResultBadge } from './parts';
import type { EvalResult } from './types';
import type { CaseRow, Category } from './useResults';

const filters: { value: 'all' | Category; label: string }[] = [
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

function OutputCell({ result }: { result: EvalResult | null }) {
  if (!result) return <span className="subtle">Not run</span>;
  return (
    <div className="result-cell">
      <ResultBadge status={result.status} passed={result.passed} />
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

function SideDetail({ title, result }: { title: string; result: EvalResult | null }) {
  if (!result) {
    return (
      <section className="side-detail" aria-label={title}>
        <h4>{title}</h4>
        <p className="subtle">This side did not run this case.</p>
      </section>
    );
  }
  const failedAssertions = result.assertions.filter((assertion) => !assertion.passed);
  return (
    <section className="side-detail" aria-label={title}>
      <div className="spread">
        <h4>{title}</h4>
        <ResultBadge status={result.status} passed={result.passed} />
      </div>
      {result.error ? (
        <div className="result-error" role="note">
          <strong>Error</strong>
          <pre>{result.error}</pre>
        </div>
      ) : null}
      <div className="stack-xs">
        <span className="field-label">Output</span>
        <pre className="output-block">{result.output ?? <span className="subtle">No output</span>}</pre>
      </div>
      {result.assertions.length > 0 ? (
        <div className="stack-xs">
          <span className="field-label">
            Assertions{' '}
            <span className="subtle">
              {result.assertions.length - failedAssertions.length}/{result.assertions.length} passed
            </span>
          </span>
          <ul className="assertions" aria-label={`${title} assertions`}>
            {result.assertions.map((assertion) => (
              <li key={assertion.name} data-passed={assertion.passed}>
                <span className="assertion-mark" aria-hidden="true">
                  {assertion.passed ? '✓' : '✗'}
                </span>
                <span>
                  <strong>{assertion.name}</strong>
                  {!assertion.passed && assertion.message ? (
                    <span className="muted"> — {assertion.message}</span>
                  ) : null}
                  <span className="visually-hidden">{assertion.passed ? ' passed' : ' failed'}</span>
                </span>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {result.judgeReasoning ? (
        <div className="stack-xs">
          <span className="field-label">Judge reasoning</span>
          <p className="judge-reasoning">{result.judgeReasoning}</p>
        </div>
      ) : null}
      {result.review ? (
        <p className="muted">
          Reviewed: {result.review.decision.replace(/_/g, ' ')}
          {result.review.human ? '' : ' (by an agent)'}
        </p>
      ) : null}
      <p className="result-stats subtle">
        {formatDuration(result.latencyMs)} · {result.inputTokens ?? '—'} tokens in · {result.outputTokens ?? '—'} out ·{' '}
        {formatUsdNanos(result.costUsdNanos)}
      </p>
    </section>
  );
}

function CaseDetail({ row, comparison }: { row: CaseRow; comparison: boolean }) {
  const candidateOutput = row.candidate?.output ?? '';
  const productionOutput = row.production?.output ?? '';
  return (
    <div className="case-detail">
      <div className="case-io">
        <div className="stack-xs">
          <span className="field-label">Input</span>
          <pre className="output-block">{row.input}</pre>
        </div>
        <div className="stack-xs">
          <span className="field-label">Expected output</span>
          <pre className="output-block">{row.expectedOutput || <span className="subtle">None</span>}</pre>
        </div>
      </div>
      <div className={comparison ? 'side-by-side' : ''}>
        <SideDetail title="Candidate" result={row.candidate} />
        {comparison ? <SideDetail title="Production" result={row.production} /> : null}
      </div>
      <div className={comparison ? 'side-by-side' : ''}>
        {comparison &&
        row.candidate?.output !== null &&
        row.production?.output !== null &&
        row.candidate &&
        row.production ? (
          <div className="stack-xs">
            <span className="field-label">Production → candidate</span>
            <DiffView
              before={productionOutput}
              after={candidateOutput}
              beforeLabel="Production"
              afterLabel="Candidate"
              label="Diff of production and candidate outputs"
            />
          </div>
        ) : null}
        {row.candidate?.output !== null && row.candidate && row.expectedOutput ? (
          <div className="stack-xs">
            <span className="field-label">Expected → candidate</span>
            <DiffView
              before={row.expectedOutput}
              after={candidateOutput}
              beforeLabel="Expected"
              afterLabel="Candidate"
              label="Diff of expected and candidate outputs"
            />
          </div>
        ) : null}
      </div>
    </div>
  );
}

export function ResultsSection({
  rows,
  comparison,
  loading,
}: {
  rows: CaseRow[];
  comparison: boolean;
  loading: boolean;
}) {
  const [filter, setFilter] = useState<'all' | Category>('all');
  const [open, setOpen] = useState<Set<string>>(new Set());
  const counts = useMemo(() => {
    const map = new Map<string, number>();
    for (const row of rows) map.set(row.category, (map.get(row.category) ?? 0) + 1);
    return map;
  }, [rows]);
  const visible = filter === 'all' ? rows : rows.filter((row) => row.category === filter);
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
                onClick={() => setFilter(option.value)}
                disabled={count === 0 && option.value !== 'all'}
              >
                {option.label} <span className="count-pill">{count}</span>
              </button>
            );
          })}
      </div>
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
          <table className="table results-table">
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
                      <td className="result-input">{excerpt(row.input, 100)}</td>
                      <td>
                        <OutputCell result={row.candidate} />
                      </td>
                      {comparison ? (
                        <td>
                          <OutputCell result={row.production} />
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
                          <CaseDetail row={row} comparison={comparison} />
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
