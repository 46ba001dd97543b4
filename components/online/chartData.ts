// Shapes GET …/online-scores items (one row per version and UTC day) into what the pass-rate chart
// draws: every UTC day of the range on the x axis, one series per version that has anything scored,
// and the line broken where a day has nothing scored (no point is invented). Pure: unit-tested.

export type ScoreDay = {
  versionId: string;
  version: number;
  day: string; // YYYY-MM-DD, UTC
  sampled: number;
  scored: number;
  passed: number;
  meanScore: number | null;
  skippedNoContent: number;
};

type ChartPoint = { day: string; index: number; rate: number | null; passed: number; scored: number };

type ChartSeries = {
  versionId: string;
  version: number;
  color: string;
  points: ChartPoint[];
  // Runs of consecutive days with a rate: each is drawn as one line.
  segments: ChartPoint[][];
  passed: number;
  scored: number;
  rate: number | null;
};

type ChartTotals = { sampled: number; scored: number; passed: number; skippedNoContent: number };

export type ChartData = { days: string[]; series: ChartSeries[]; totals: ChartTotals; empty: boolean };

// Distinct on white and for common colour-vision deficiencies (Okabe–Ito, darkened where too light).
const seriesPalette = ['#4f46e5', '#d55e00', '#009e73', '#cc79a7', '#0072b2', '#b58900', '#56b4e9', '#444444'];

// A version keeps its colour wherever it is drawn (the Versions page and a split's panel).
export function versionColor(version: number): string {
  return seriesPalette[(((version - 1) % seriesPalette.length) + seriesPalette.length) % seriesPalette.length];
}

const dayMs = 86_400_000;
// At most a year and a day of days on the axis, whatever range is asked for.
const maxDays = 367;

export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

const dayStart = (day: string) => Date.parse(`${day}T00:00:00Z`);

/** Every UTC day from `from` to `to`, both included (YYYY-MM-DD). */
export function daysBetween(from: string, to: string): string[] {
  const start = dayStart(from);
  const end = dayStart(to);
  if (!Number.isFinite(start) || !Number.isFinite(end) || end < start) return [];
  // The most recent days when the range is longer than the axis holds.
  const count = Math.min(maxDays, Math.round((end - start) / dayMs) + 1);
  const first = end - (count - 1) * dayMs;
  return Array.from({ length: count }, (_, i) => utcDay(first + i * dayMs));
}

function segmentsOf(points: ChartPoint[]): ChartPoint[][] {
  const segments: ChartPoint[][] = [];
  let current: ChartPoint[] = [];
  for (const point of points) {
    if (point.rate === null) {
      if (current.length) segments.push(current);
      current = [];
    } else current.push(point);
  }
  if (current.length) segments.push(current);
  return segments;
}

/**
 * The chart of daily pass rates (passed / scored) per version over the UTC days from `from` to `to`
 * (Unix ms). `versionIds` keeps only those versions (a split's). Days the server returned outside
 * the range widen it rather than vanish. Series are newest version first.
 */
export function shapePassRates(
  items: ScoreDay[],
  range: { from: number; to: number; versionIds?: readonly string[] },
): ChartData {
  const wanted = range.versionIds ? new Set(range.versionIds) : null;
  const rows = items.filter((item) => !wanted || wanted.has(item.versionId));
  const totals: ChartTotals = { sampled: 0, scored: 0, passed: 0, skippedNoContent: 0 };
  for (const row of rows) {
    totals.sampled += row.sampled;
    totals.scored += row.scored;
    totals.passed += row.passed;
    totals.skippedNoContent += row.skippedNoContent;
  }
  const rowDays = rows.map((row) => row.day).sort();
  const first = [utcDay(Math.min(range.from, range.to)), rowDays[0]].filter(Boolean).sort()[0]!;
  const last = [utcDay(Math.max(range.from, range.to)), rowDays.at(-1)].filter(Boolean).sort().at(-1)!;
  const days = daysBetween(first, last);
  const indexOf = new Map(days.map((day, index) => [day, index]));

  const byVersion = new Map<string, { version: number; rows: Map<string, { passed: number; scored: number }> }>();
  for (const row of rows) {
    if (row.scored <= 0) continue;
    const entry = byVersion.get(row.versionId) ?? { version: row.version, rows: new Map() };
    const day = entry.rows.get(row.day) ?? { passed: 0, scored: 0 };
    day.passed += row.passed;
    day.scored += row.scored;
    entry.rows.set(row.day, day);
    byVersion.set(row.versionId, entry);
  }

  const series: ChartSeries[] = [...byVersion.entries()]
    .map(([versionId, entry]) => {
      const points = days.map((day) => {
        const figures = entry.rows.get(day);
        const scored = figures?.scored ?? 0;
        const passed = figures?.passed ?? 0;
        return { day, index: indexOf.get(day)!, passed, scored, rate: scored > 0 ? passed / scored : null };
      });
      const passed = points.reduce((sum, p) => sum + p.passed, 0);
      const scored = points.reduce((sum, p) => sum + p.scored, 0);
      return {
        versionId,
        version: entry.version,
        color: versionColor(entry.version),
        points,
        segments: segmentsOf(points),
        passed,
        scored,
        rate: scored > 0 ? passed / scored : null,
      };
    })
    .sort((a, b) => b.version - a.version);

  return { days, series, totals, empty: series.length === 0 };
}

/** About `max` evenly spread indexes of the x axis to label, always the first and the last. */
export function tickIndexes(count: number, max = 8): number[] {
  if (count <= 0) return [];
  if (count <= max) return Array.from({ length: count }, (_, i) => i);
  const step = Math.ceil((count - 1) / (max - 1));
  const ticks: number[] = [];
  for (let i = 0; i < count - 1; i += step) ticks.push(i);
  // The last day is always labelled; drop the tick before it when the two would touch.
  if (count - 1 - ticks[ticks.length - 1] < step / 2) ticks.pop();
  ticks.push(count - 1);
  return ticks;
}

/** The start of the UTC day `days - 1` days before `now`: a range of `days` whole UTC days up to today. */
export function rangeStart(days: number, now = Date.now()): number {
  const today = Math.floor(now / dayMs) * dayMs;
  return today - (Math.max(1, days) - 1) * dayMs;
}
