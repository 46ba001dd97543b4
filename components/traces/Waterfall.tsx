'use client';

import type { Span } from '@/server/traces/schemas';
import { formatDuration } from './format';
import { spanRows } from './span-tree';

const ticks = [0, 0.25, 0.5, 0.75, 1];
const kindShort: Record<string, string> = { execution: 'EXE', model: 'LLM', attempt: 'TRY', tool: 'TOOL', retrieval: 'RAG', custom: 'SPAN' };

export function spanEnd(span: Span, now: number): number {
  return span.endedAt ?? Math.max(now, span.startedAt);
}

export function KindChip({ kind }: { kind: string }) {
  return (
    <span className={`span-kind span-kind-${kind}`} title={kind}>
      {kindShort[kind] ?? kind}
    </span>
  );
}

// Bars are placed on one scale from the earliest start to the latest end (running spans end "now").
export function Waterfall({ spans, now, selectedId, onSelect }: { spans: Span[]; now: number; selectedId: string | null; onSelect: (spanId: string) => void }) {
  const rows = spanRows(spans);
  const start = spans.reduce((min, s) => Math.min(min, s.startedAt), Infinity);
  const end = spans.reduce((max, s) => Math.max(max, spanEnd(s, now)), -Infinity);
  const total = Math.max(end - start, 1);

  return (
    <div className="waterfall" role="group" aria-label="Span timeline">
      <div className="waterfall-head" aria-hidden="true">
        <span className="waterfall-head-label">Span</span>
        <span className="waterfall-axis">
          {ticks.map((t) => (
            <span key={t} className="waterfall-tick" style={{ left: `${t * 100}%` }}>
              {t === 0 ? '0' : t === 0.75 ? '' : formatDuration(total * t)}
            </span>
          ))}
        </span>
      </div>
      <div className="waterfall-body">
        {rows.map(({ span, depth, orphan }) => {
          const spanEndAt = spanEnd(span, now);
          const left = ((span.startedAt - start) / total) * 100;
          const width = Math.max(((spanEndAt - span.startedAt) / total) * 100, 0.3);
          const duration = formatDuration(spanEndAt - span.startedAt);
          // The duration goes after the bar when there is room, inside a long bar, else before it.
          const placement = left + width <= 80 ? 'after' : width >= 18 ? 'inside' : 'before';
          return (
            <button
              type="button"
              key={span.spanId}
              className="waterfall-row"
              aria-pressed={span.spanId === selectedId}
              data-span={span.spanId}
              onClick={() => onSelect(span.spanId)}
            >
              <span className="waterfall-label" style={{ ['--depth' as string]: depth }}>
                {depth > 0 ? <span className="waterfall-guide" aria-hidden="true" /> : null}
                <KindChip kind={span.kind} />
                <span className="waterfall-label-name">{span.name}</span>
                {orphan ? (
                  <span className="orphan-marker" title="Its parent span has not arrived">
                    orphan
                  </span>
                ) : null}
              </span>
              <span className="waterfall-track">
                <span
                  className={`waterfall-bar waterfall-bar-${span.status}`}
                  data-testid="waterfall-bar"
                  style={{ left: `${left}%`, width: `${width}%` }}
                  title={`${span.name}: ${duration}${span.status === 'running' ? ' so far' : ''}`}
                />
                <span
                  className={['waterfall-bar-label', placement !== 'after' && `waterfall-bar-label-${placement}`].filter(Boolean).join(' ')}
                  style={{ left: `${placement === 'before' ? left : left + width}%` }}
                >
                  {duration}
                  {span.status === 'running' ? '…' : ''}
                </span>
              </span>
            </button>
          );
        })}
      </div>
    </div>
  );
}
