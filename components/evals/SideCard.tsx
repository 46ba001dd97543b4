'use client';

import { EvalStatusBadge, ProgressBar } from './parts';
import { percent, stoppedSide, type SideSummary } from './types';

export function SideCard({
  title,
  subtitle,
  summary,
  total,
  retry,
}: {
  title: string;
  subtitle: string;
  summary: SideSummary | null;
  total: number;
  retry?: React.ReactNode;
}) {
  if (!summary) {
    return (
      <div className="side-summary" aria-label={`${title} summary`} role="group">
        <div className="spread">
          <div>
            <h3>{title}</h3>
            <span className="subtle">{subtitle}</span>
          </div>
        </div>
        <p className="muted">No production version to compare with.</p>
      </div>
    );
  }
  const done = total - summary.pendingCases;
  return (
    <div className="side-summary" aria-label={`${title} summary`} role="group">
      <div className="spread">
        <div>
          <h3>
            {title} <EvalStatusBadge status={summary.status} />
          </h3>
          <span className="subtle">{subtitle}</span>
        </div>
        <div className="side-rate">
          <strong>{summary.scoredCases > 0 ? percent(summary.passRate) : '—'}</strong>
          <span className="subtle">pass rate</span>
        </div>
      </div>
      <ProgressBar summary={summary} total={total} label={`${title} progress`} />
      <div className="spread">
        <dl className="side-counts">
          <div>
            <dt>Passed</dt>
            <dd className="count-passed">{summary.passedCases}</dd>
          </div>
          <div>
            <dt>Failed</dt>
            <dd className="count-failed">{summary.failedCases}</dd>
          </div>
          <div>
            <dt>Needs review</dt>
            <dd className="count-review">{summary.pendingReviewCases}</dd>
          </div>
          <div>
            <dt>Errors</dt>
            <dd className="count-error">{summary.errorCases}</dd>
          </div>
          <div>
            <dt>{stoppedSide(summary) ? 'Not run' : 'Pending'}</dt>
            <dd>{summary.pendingCases}</dd>
          </div>
        </dl>
        <span className="muted" aria-label={`${title} cases done`}>
          {done} / {total} done
        </span>
      </div>
      {retry}
    </div>
  );
}
