'use client';

import { formatDuration, formatUsdNanos } from '@/components/format';
import { RelativeTime } from '@/components/ui/RelativeTime';
import { DiffView } from './DiffView';
import { ResultBadge } from './parts';
import type { EvalResult } from './types';
import type { CaseRow } from './useResults';

export type StoppedSides = { candidate: boolean; production: boolean };

function SideDetail({ title, result, stopped }: { title: string; result: EvalResult | null; stopped: boolean }) {
  if (!result) {
    return (
      <section className="side-detail" aria-label={title}>
        <h3>{title}</h3>
        <p className="subtle">This side did not run this case.</p>
      </section>
    );
  }
  const failedAssertions = result.assertions.filter((assertion) => !assertion.passed);
  return (
    <section className="side-detail" aria-label={title}>
      <div className="spread">
        <h3>{title}</h3>
        <ResultBadge status={result.status} passed={result.passed} stopped={stopped} />
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
        <div className="stack-xs">
          <p className="muted">
            Reviewed: {result.review.decision.replace(/_/g, ' ')}
            {result.review.human ? '' : ' (by an agent)'} · <RelativeTime time={result.review.at} />
          </p>
          {result.review.correctedOutput !== null ? (
            <>
              <span className="field-label">Corrected expectation</span>
              <pre className="output-block" aria-label={`${title} corrected expectation`}>
                {result.review.correctedOutput}
              </pre>
            </>
          ) : null}
        </div>
      ) : null}
      <p className="result-stats subtle">
        {formatDuration(result.latencyMs)} · {result.inputTokens ?? '—'} tokens in · {result.outputTokens ?? '—'} out ·{' '}
        {formatUsdNanos(result.costUsdNanos)}
      </p>
    </section>
  );
}

export function CaseDetail({ row, comparison, stopped }: { row: CaseRow; comparison: boolean; stopped: StoppedSides }) {
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
        <SideDetail title="Candidate" result={row.candidate} stopped={stopped.candidate} />
        {comparison ? <SideDetail title="Production" result={row.production} stopped={stopped.production} /> : null}
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
