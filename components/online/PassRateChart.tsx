'use client';

import { useEffect, useRef, useState, type PointerEvent } from 'react';
import { percent } from '@/components/evals/types';
import { tickIndexes, type ChartData } from './chartData';

const height = 220;
const margin = { top: 12, right: 16, bottom: 30, left: 44 };
const gridRates = [0, 0.25, 0.5, 0.75, 1];

const dayLabel = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
const longDayLabel = new Intl.DateTimeFormat(undefined, {
  weekday: 'short',
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  timeZone: 'UTC',
});
const formatDay = (day: string) => dayLabel.format(new Date(`${day}T00:00:00Z`));
const formatLongDay = (day: string) => longDayLabel.format(new Date(`${day}T00:00:00Z`));

// The drawing follows the width it is given, so text and dots stay crisp at any size.
function useWidth<T extends HTMLElement>(fallback: number) {
  const ref = useRef<T>(null);
  const [width, setWidth] = useState(fallback);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    const observer = new ResizeObserver(([entry]) => {
      if (entry) setWidth(Math.max(240, Math.round(entry.contentRect.width)));
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  return [ref, width] as const;
}

/**
 * Daily pass rate per version: one line per version over UTC days, a legend with each version's
 * pass rate over the range, a hover readout of the day under the pointer, and the same figures as a
 * table for screen readers. Days without scored spans break the line.
 */
export function PassRateChart({ data, label }: { data: ChartData; label: string }) {
  const [ref, width] = useWidth<HTMLDivElement>(720);
  const [hover, setHover] = useState<number | null>(null);
  const plotWidth = width - margin.left - margin.right;
  const plotHeight = height - margin.top - margin.bottom;
  const count = data.days.length;
  const x = (index: number) => margin.left + (count <= 1 ? plotWidth / 2 : (index * plotWidth) / (count - 1));
  const y = (rate: number) => margin.top + (1 - rate) * plotHeight;
  const ticks = tickIndexes(count, Math.max(2, Math.min(10, Math.floor(plotWidth / 80))));
  // On a one-day chart each dot is named beside it (no line to follow), the names kept apart.
  const valueLabels = new Map<string, number>();
  if (count === 1) {
    const placed = data.series
      .filter((series) => series.points[0]?.rate != null)
      .map((series) => ({ id: series.versionId, at: y(series.points[0]!.rate!) }))
      .sort((a, b) => a.at - b.at);
    let last = -Infinity;
    for (const label of placed) {
      last = Math.max(label.at, last + 14);
      valueLabels.set(label.id, last);
    }
  }
  const lonely = new Map(
    data.series.map((series) => [
      series.versionId,
      new Set(series.segments.filter((segment) => segment.length === 1).map((segment) => segment[0].index)),
    ]),
  );

  function onPointerMove(event: PointerEvent<SVGRectElement>) {
    const box = event.currentTarget.getBoundingClientRect();
    const ratio = box.width > 0 ? (event.clientX - box.left) / box.width : 0;
    setHover(count <= 1 ? 0 : Math.max(0, Math.min(count - 1, Math.round(ratio * (count - 1)))));
  }

  const hoverDay = hover === null ? null : data.days[hover];
  const readout = hoverDay
    ? data.series
        .map((series) => ({ series, point: series.points[hover!] }))
        .filter(({ point }) => point && point.scored > 0)
    : [];

  return (
    <figure className="pass-chart" aria-label={label}>
      <ul className="pass-chart-legend" aria-label="Versions">
        {data.series.map((series) => (
          <li key={series.versionId} data-legend-version={series.version}>
            <span className="pass-chart-swatch" style={{ background: series.color }} aria-hidden="true" />
            <strong>v{series.version}</strong>
            <span className="muted">
              {percent(series.rate)} passed · {series.scored} scored
            </span>
          </li>
        ))}
      </ul>
      <div className="pass-chart-canvas" ref={ref}>
        <svg width={width} height={height} role="img" aria-label={`${label}: daily pass rate per version, UTC days`}>
          {gridRates.map((rate) => (
            <g key={rate}>
              <line className="pass-chart-grid" x1={margin.left} x2={width - margin.right} y1={y(rate)} y2={y(rate)} />
              <text
                className="pass-chart-axis"
                x={margin.left - 8}
                y={y(rate)}
                textAnchor="end"
                dominantBaseline="middle"
              >
                {Math.round(rate * 100)}%
              </text>
            </g>
          ))}
          {ticks.map((index) => (
            <text
              key={index}
              className="pass-chart-axis"
              x={x(index)}
              y={height - margin.bottom + 18}
              textAnchor={count > 1 && index === 0 ? 'start' : count > 1 && index === count - 1 ? 'end' : 'middle'}
            >
              {formatDay(data.days[index])}
            </text>
          ))}
          {hover !== null ? (
            <line
              className="pass-chart-cursor"
              x1={x(hover)}
              x2={x(hover)}
              y1={margin.top}
              y2={margin.top + plotHeight}
            />
          ) : null}
          {[...data.series].reverse().map((series) => (
            <g key={series.versionId} data-series-version={series.version}>
              {series.segments
                .filter((segment) => segment.length > 1)
                .map((segment) => (
                  <polyline
                    key={segment[0].day}
                    className="pass-chart-line"
                    stroke={series.color}
                    points={segment.map((p) => `${x(p.index)},${y(p.rate!)}`).join(' ')}
                  />
                ))}
              {series.points
                .filter((p) => p.rate !== null)
                .map((p) => {
                  // A day with no scored neighbour has no line to show it: a larger dot does.
                  const alone = lonely.get(series.versionId)?.has(p.index) ?? false;
                  const r = (alone ? 5 : 3) + (hover === p.index ? 1.5 : 0);
                  return (
                    <circle
                      key={p.day}
                      cx={x(p.index)}
                      cy={y(p.rate!)}
                      r={r}
                      fill={series.color}
                      className="pass-chart-dot"
                      data-alone={alone || undefined}
                    />
                  );
                })}
              {valueLabels.has(series.versionId) ? (
                <text
                  className="pass-chart-value"
                  x={x(0) + 12}
                  y={valueLabels.get(series.versionId)}
                  dominantBaseline="middle"
                  fill={series.color}
                >
                  v{series.version} {percent(series.points[0]?.rate ?? null)}
                </text>
              ) : null}
            </g>
          ))}
          <rect
            className="pass-chart-hit"
            x={margin.left}
            y={margin.top}
            width={Math.max(0, plotWidth)}
            height={plotHeight}
            onPointerMove={onPointerMove}
            onPointerLeave={() => setHover(null)}
          />
        </svg>
        {hoverDay ? (
          <div
            className="pass-chart-tooltip"
            // Beside the cursor, on the side with more room, so the lines under it stay visible.
            style={
              x(hover!) > width / 2
                ? { left: x(hover!) - 12, transform: 'translateX(-100%)' }
                : { left: x(hover!) + 12 }
            }
            aria-hidden="true"
          >
            <strong>{formatLongDay(hoverDay)} (UTC)</strong>
            {readout.length === 0 ? (
              <span className="subtle">Nothing scored</span>
            ) : (
              readout.map(({ series, point }) => (
                <span key={series.versionId} className="pass-chart-tooltip-row">
                  <span className="pass-chart-swatch" style={{ background: series.color }} />v{series.version}{' '}
                  <strong>{percent(point.rate)}</strong>
                  <span className="subtle">
                    {point.passed}/{point.scored}
                  </span>
                </span>
              ))
            )}
          </div>
        ) : null}
      </div>
      <figcaption className="pass-chart-caption subtle">
        Share of scored production spans that passed the judge, per day (UTC).
      </figcaption>
      <table className="visually-hidden">
        <caption>{label}: pass rate per version and UTC day</caption>
        <thead>
          <tr>
            <th scope="col">Day (UTC)</th>
            {data.series.map((series) => (
              <th scope="col" key={series.versionId}>
                v{series.version}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {data.days
            .filter((_, index) => data.series.some((series) => series.points[index]?.scored))
            .map((day) => (
              <tr key={day}>
                <th scope="row">{day}</th>
                {data.series.map((series) => {
                  const point = series.points.find((p) => p.day === day);
                  return (
                    <td key={series.versionId}>
                      {point && point.scored ? `${percent(point.rate)} (${point.passed} of ${point.scored})` : '—'}
                    </td>
                  );
                })}
              </tr>
            ))}
        </tbody>
      </table>
    </figure>
  );
}
