'use client';

import { useState, type ReactNode } from 'react';
import type { Span } from '@/server/traces/schemas';
import { ChevronRightIcon } from '@/components/ui/icons';
import { formatDuration } from '@/components/format';
import { spanRows, type SpanRow } from './span-tree';
import { kindLabel } from './StatusBadge';

// Rows below a collapsed span are hidden; the collapsed span shows how many it hides.
function visibleRows(rows: SpanRow<Span>[], collapsed: Set<string>) {
  const visible: (SpanRow<Span> & { hidden: number })[] = [];
  let hideBelow: number | null = null;
  for (const row of rows) {
    if (hideBelow !== null && row.depth > hideBelow) {
      visible[visible.length - 1].hidden += 1;
      continue;
    }
    hideBelow = collapsed.has(row.span.spanId) ? row.depth : null;
    visible.push({ ...row, hidden: 0 });
  }
  return visible;
}

const ticks = [0, 0.25, 0.5, 0.75, 1];
const kindShort: Record<string, string> = {
  execution: 'EXE',
  model: 'LLM',
  attempt: 'TRY',
  tool: 'TOOL',
  retrieval: 'RAG',
  custom: 'SPAN',
};

export function spanEnd(span: Span, now: number): number {
  return span.endedAt ?? Math.max(now, span.startedAt);
}

export type TraceBounds = { start: number; end: number };

// The trace's extent: the earliest span start and the latest span end (running spans end "now").
export function traceBounds(spans: Span[], now: number): TraceBounds {
  const start = spans.reduce((min, s) => Math.min(min, s.startedAt), Infinity);
  const end = spans.reduce((max, s) => Math.max(max, spanEnd(s, now)), -Infinity);
  return { start, end };
}

export function KindChip({ kind }: { kind: string }) {
  return (
    <span className={`span-kind span-kind-${kind}`} title={kindLabel[kind] ?? kind}>
      <span aria-hidden="true">{kindShort[kind] ?? kind}</span>
      <span className="visually-hidden">{kindLabel[kind] ?? kind}: </span>
    </span>
  );
}

type WaterfallProps = {
  spans: Span[];
  now: number;
  bounds: TraceBounds;
  selectedId: string | null;
  onSelect: (spanId: string) => void;
  // Called when a span is expanded: its children may be on pages not loaded yet.
  onExpand?: () => void;
  // False while more spans of the trace can be loaded: a span whose parent is missing may just not be loaded yet.
  complete?: boolean;
  // Rendered after the last row, inside the scrolling body (where more spans load).
  end?: ReactNode;
};

// Bars are placed on one scale across the trace's bounds (see traceBounds). The spans may be the
// first pages of a larger trace: a span whose parent is not loaded shows at the top level until it is.
export function Waterfall({
  spans,
  now,
  bounds,
  selectedId,
  onSelect,
  onExpand,
  complete = true,
  end: after,
}: WaterfallProps) {
  const [collapsed, setCollapsed] = useState<Set<string>>(() => new Set());
  const rows = visibleRows(spanRows(spans), collapsed);
  const toggle = (spanId: string) => {
    if (collapsed.has(spanId)) onExpand?.();
    setCollapsed((current) => {
      const next = new Set(current);
      if (!next.delete(spanId)) next.add(spanId);
      return next;
    });
  };
  const { start, end } = bounds;
  const total = Math.max(end - start, 1);

  return (
    // A tree grid would be the full pattern; a group of rows with aria-level and a spoken level/status keeps the
    // simple buttons and still says where a span sits and whether it failed.
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
        {rows.map(({ span, depth, orphan, childCount, hidden }) => {
          const spanEndAt = spanEnd(span, now);
          const left = ((span.startedAt - start) / total) * 100;
          const width = Math.max(((spanEndAt - span.startedAt) / total) * 100, 0.3);
          const duration = formatDuration(spanEndAt - span.startedAt);
          // The duration goes after the bar when there is room, inside a long bar, else before it.
          const placement = left + width <= 80 ? 'after' : width >= 18 ? 'inside' : 'before';
          const isCollapsed = collapsed.has(span.spanId);
          const failed = span.status === 'error' || span.status === 'cancelled';
          return (
            // The whole row selects on click; the name button is the keyboard way to do the same.
            <div
              key={span.spanId}
              className="waterfall-row"
              data-span={span.spanId}
              data-selected={span.spanId === selectedId}
              data-status={span.status}
              onClick={() => onSelect(span.spanId)}
            >
              <span className="waterfall-label" style={{ ['--depth' as string]: depth }}>
                {childCount > 0 ? (
                  <button
                    type="button"
                    className="waterfall-toggle"
                    aria-expanded={!isCollapsed}
                    aria-label={`${isCollapsed ? 'Expand' : 'Collapse'} ${span.name}`}
                    onClick={(event) => {
                      event.stopPropagation();
                      toggle(span.spanId);
                    }}
                  >
                    <ChevronRightIcon size={14} />
                  </button>
                ) : (
                  <span className="waterfall-toggle-space" aria-hidden="true" />
                )}
                {depth > 6 ? (
                  <span className="waterfall-depth" title={`Depth ${depth}`}>
                    {depth}
                  </span>
                ) : null}
                <KindChip kind={span.kind} />
                <button
                  type="button"
                  className="waterfall-select"
                  aria-pressed={span.spanId === selectedId}
                  title={span.name}
                >
                  <span className="waterfall-label-name">{span.name}</span>
                  <span className="visually-hidden">
                    , level {depth + 1}
                    {span.status === 'error' ? ', failed' : span.status === 'cancelled' ? ', cancelled' : ''}
                  </span>
                </button>
                {failed ? (
                  <span className={`waterfall-status waterfall-status-${span.status}`} aria-hidden="true">
                    {span.status === 'error' ? '✕ failed' : '⊘ cancelled'}
                  </span>
                ) : null}
                {hidden > 0 ? <span className="waterfall-hidden">+{hidden}</span> : null}
                {orphan ? (
                  <span
                    className="orphan-marker"
                    title={
                      complete
                        ? 'Its parent span has not arrived'
                        : 'Its parent span has not arrived or is not loaded yet'
                    }
                  >
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
                  className={['waterfall-bar-label', placement !== 'after' && `waterfall-bar-label-${placement}`]
                    .filter(Boolean)
                    .join(' ')}
                  style={{ left: `${placement === 'before' ? left : left + width}%` }}
                >
                  {duration}
                  {span.status === 'running' ? '…' : ''}
                </span>
              </span>
            </div>
          );
        })}
        {after}
      </div>
    </div>
  );
}
