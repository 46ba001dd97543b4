import { describe, expect, it } from 'vitest';
import {
  daysBetween,
  rangeStart,
  shapePassRates,
  tickIndexes,
  utcDay,
  versionColor,
  type ScoreDay,
} from '@/components/online/chartData';
import { initialForm, percentText, rubricHintText, toInput } from '@/components/online/settings';
import { onlineEvaluationInput, onlineScoreDaySchema } from '@/server/online/schemas';

// The data shaping behind the Versions page's and the split panel's pass-rate chart, and the online
// evaluation form's mapping to PUT …/online-evaluation (API.md "Online evaluation").

const day = (iso: string) => Date.parse(`${iso}T12:00:00Z`);

function row(versionId: string, version: number, date: string, scored: number, passed: number, sampled = scored) {
  const item: ScoreDay = {
    versionId,
    version,
    day: date,
    sampled,
    scored,
    passed,
    meanScore: scored ? passed / scored : null,
    skippedNoContent: sampled - scored,
  };
  return onlineScoreDaySchema.parse(item);
}

describe('UTC days', () => {
  it('names the UTC day of an instant, whatever the local time zone', () => {
    expect(utcDay(Date.parse('2026-11-20T23:59:59.999Z'))).toBe('2026-11-20');
    expect(utcDay(Date.parse('2026-11-21T00:00:00Z'))).toBe('2026-11-21');
    expect(utcDay(Date.parse('2026-11-21T01:30:00+03:00'))).toBe('2026-11-20');
  });

  it('lists every day of a range, both ends included, across months and leap days', () => {
    expect(daysBetween('2028-02-27', '2028-03-01')).toEqual(['2028-02-27', '2028-02-28', '2028-02-29', '2028-03-01']);
    expect(daysBetween('2026-11-20', '2026-11-20')).toEqual(['2026-11-20']);
    expect(daysBetween('2026-11-21', '2026-11-20')).toEqual([]);
    expect(daysBetween('not a day', '2026-11-20')).toEqual([]);
  });

  it('keeps the most recent 367 days of a longer range', () => {
    const days = daysBetween('2020-01-01', '2026-11-20');
    expect(days).toHaveLength(367);
    expect(days.at(-1)).toBe('2026-11-20');
  });

  it('starts a range of N days at midnight UTC N-1 days ago', () => {
    const now = Date.parse('2026-11-26T12:34:56Z');
    expect(new Date(rangeStart(30, now)).toISOString()).toBe('2026-10-28T00:00:00.000Z');
    expect(new Date(rangeStart(1, now)).toISOString()).toBe('2026-11-26T00:00:00.000Z');
    expect(daysBetween(utcDay(rangeStart(7, now)), utcDay(now))).toHaveLength(7);
  });
});

describe('shapePassRates', () => {
  const from = day('2026-11-18');
  const to = day('2026-11-22');

  it('is empty when nothing was scored, even with sampled spans that had no content', () => {
    const data = shapePassRates([row('ver_a', 1, '2026-11-19', 0, 0, 4)], { from, to });
    expect(data.empty).toBe(true);
    expect(data.series).toEqual([]);
    expect(data.days).toEqual(['2026-11-18', '2026-11-19', '2026-11-20', '2026-11-21', '2026-11-22']);
    expect(data.totals).toEqual({ sampled: 4, scored: 0, passed: 0, skippedNoContent: 4 });
    expect(shapePassRates([], { from, to }).empty).toBe(true);
  });

  it('draws one series per scored version, newest first, with the pass rate of each day and of the range', () => {
    const data = shapePassRates(
      [
        row('ver_a', 1, '2026-11-18', 10, 9),
        row('ver_a', 1, '2026-11-19', 10, 7),
        row('ver_b', 2, '2026-11-19', 4, 4),
        row('ver_b', 2, '2026-11-22', 4, 2),
      ],
      { from, to },
    );
    expect(data.empty).toBe(false);
    expect(data.series.map((s) => s.version)).toEqual([2, 1]);
    const [v2, v1] = data.series;
    expect(v1.points.map((p) => p.rate)).toEqual([0.9, 0.7, null, null, null]);
    expect(v1).toMatchObject({ passed: 16, scored: 20, rate: 0.8 });
    expect(v2.points.map((p) => p.rate)).toEqual([null, 1, null, null, 0.5]);
    expect(v2.points.map((p) => p.index)).toEqual([0, 1, 2, 3, 4]);
    expect(data.totals).toEqual({ sampled: 28, scored: 28, passed: 22, skippedNoContent: 0 });
  });

  it('breaks a line where a day has nothing scored instead of inventing a point', () => {
    const data = shapePassRates(
      [
        row('ver_a', 1, '2026-11-18', 2, 1),
        row('ver_a', 1, '2026-11-19', 2, 2),
        row('ver_a', 1, '2026-11-20', 3, 0, 3),
        row('ver_a', 1, '2026-11-21', 0, 0, 5),
        row('ver_a', 1, '2026-11-22', 1, 1),
      ],
      { from, to },
    );
    const segments = data.series[0].segments.map((segment) => segment.map((p) => p.day));
    expect(segments).toEqual([['2026-11-18', '2026-11-19', '2026-11-20'], ['2026-11-22']]);
    // A day where every scored span failed is a point at 0%, not a gap.
    expect(data.series[0].points[2].rate).toBe(0);
  });

  it('keeps only the versions asked for (a split’s), and widens the range to days the server returned', () => {
    const data = shapePassRates(
      [row('ver_a', 1, '2026-11-15', 2, 2), row('ver_b', 2, '2026-11-20', 2, 1), row('ver_c', 3, '2026-11-20', 2, 0)],
      { from, to, versionIds: ['ver_a', 'ver_c'] },
    );
    expect(data.series.map((s) => s.versionId)).toEqual(['ver_c', 'ver_a']);
    expect(data.days[0]).toBe('2026-11-15');
    expect(data.days.at(-1)).toBe('2026-11-22');
    expect(data.totals.scored).toBe(4);
  });

  it('gives a version the same colour wherever it is drawn', () => {
    const alone = shapePassRates([row('ver_c', 3, '2026-11-20', 1, 1)], { from, to });
    const together = shapePassRates([row('ver_a', 1, '2026-11-20', 1, 1), row('ver_c', 3, '2026-11-20', 1, 1)], {
      from,
      to,
    });
    expect(alone.series[0].color).toBe(together.series.find((s) => s.version === 3)!.color);
    expect(versionColor(1)).not.toBe(versionColor(2));
  });
});

describe('tickIndexes', () => {
  it('labels every day of a short range', () => {
    expect(tickIndexes(5)).toEqual([0, 1, 2, 3, 4]);
    expect(tickIndexes(1)).toEqual([0]);
    expect(tickIndexes(0)).toEqual([]);
  });

  it('labels about `max` days of a long range, always the first and the last, never two touching', () => {
    for (const count of [9, 14, 30, 31, 90, 367]) {
      const ticks = tickIndexes(count, 8);
      expect(ticks[0]).toBe(0);
      expect(ticks.at(-1)).toBe(count - 1);
      expect(ticks.length).toBeLessThanOrEqual(8);
      const gaps = ticks.slice(1).map((t, i) => t - ticks[i]);
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(Math.max(...gaps) / 2);
    }
  });
});

describe('the online evaluation form', () => {
  const stored = { enabled: false, sampleRate: 0.1, judgeModelRouteId: null, rubric: null };

  it('starts from the stored settings, else from the scoring policy, else the first available route', () => {
    expect(initialForm(stored, { judgeModelRouteId: 'openai/gpt', rubric: 'Be right.' }, 'local/judge')).toEqual({
      enabled: false,
      samplePercent: '10',
      judgeModelRouteId: 'openai/gpt',
      rubric: 'Be right.',
    });
    expect(initialForm(stored, { judgeModelRouteId: null, rubric: null }, 'local/judge')).toMatchObject({
      judgeModelRouteId: 'local/judge',
      rubric: '',
    });
    expect(
      initialForm(
        { enabled: true, sampleRate: 0.005, judgeModelRouteId: 'x/y', rubric: 'Own.' },
        { judgeModelRouteId: 'a/b', rubric: 'Policy.' },
        'local/judge',
      ),
    ).toEqual({ enabled: true, samplePercent: '0.5', judgeModelRouteId: 'x/y', rubric: 'Own.' });
  });

  it('shows a sample rate as a percentage without float noise', () => {
    expect(percentText(0.07)).toBe('7');
    expect(percentText(1)).toBe('100');
    expect(percentText(0)).toBe('0');
    expect(percentText(0.12345)).toBe('12.345');
  });

  it('sends the percentage as a fraction the server accepts', () => {
    for (const [text, rate] of [
      ['7', 0.07],
      ['25', 0.25],
      ['0.5', 0.005],
      ['100', 1],
      ['0', 0],
      [' 12.5 % ', 0.125],
    ] as const) {
      const result = toInput({ enabled: true, samplePercent: text, judgeModelRouteId: 'local/judge', rubric: ' R ' });
      expect(result).toEqual({
        input: { enabled: true, sampleRate: rate, judgeModelRouteId: 'local/judge', rubric: 'R' },
      });
      if ('input' in result) expect(onlineEvaluationInput.parse(result.input).sampleRate).toBe(rate);
    }
  });

  it('leaves the judge and rubric to the server’s defaults when empty', () => {
    const result = toInput({ enabled: false, samplePercent: '10', judgeModelRouteId: '', rubric: '   ' });
    expect(result).toEqual({ input: { enabled: false, sampleRate: 0.1 } });
    if ('input' in result) expect(() => onlineEvaluationInput.parse(result.input)).not.toThrow();
  });

  it('refuses a sample rate outside 0–100 % next to the field', () => {
    for (const text of ['', '-1', '100.1', '150', 'ten', '1e9']) {
      expect(toInput({ enabled: true, samplePercent: text, judgeModelRouteId: '', rubric: '' })).toEqual({
        error: { samplePercent: 'Enter a percentage from 0 to 100, e.g. 10.' },
      });
    }
  });
});

describe('the rubric hint', () => {
  it('says where the rubric comes from and what an empty field does', () => {
    expect(rubricHintText(null, null)).toMatch(/no rubric to fall back on/);
    // A rubric of its own saved: it is what keeps scoring on, not something still to write.
    expect(rubricHintText('Be kind.', null)).toMatch(/keep this one to keep scoring on/);
    expect(rubricHintText(null, 'Be kind.')).toMatch(/Starts as the rubric/);
    expect(rubricHintText('Be kind.', 'Be kind.')).toMatch(/same as this prompt’s scoring policy/);
    // Saved before the policy's rubric changed: the hint no longer claims it starts from the policy.
    expect(rubricHintText('Be kind.', 'Be brief.')).not.toMatch(/Starts as|same as/);
  });
});
