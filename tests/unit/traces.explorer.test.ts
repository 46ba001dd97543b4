import { describe, expect, it } from 'vitest';
import { spanRows } from '@/components/traces/span-tree';
import { formatDuration, formatUsdNanos } from '@/components/traces/format';

const span = (spanId: string, parentSpanId: string | null, startedAt: number) => ({ spanId, parentSpanId, startedAt });

describe('spanRows', () => {
  it('orders depth-first with children in start order and marks orphans at the root level', () => {
    const rows = spanRows([
      span('c2', 'root', 30),
      span('orphan', 'missing', 5),
      span('root', null, 0),
      span('c1', 'root', 10),
      span('g1', 'c1', 12),
    ]);
    expect(rows.map((r) => [r.span.spanId, r.depth, r.orphan])).toEqual([
      ['root', 0, false],
      ['c1', 1, false],
      ['g1', 2, false],
      ['c2', 1, false],
      ['orphan', 0, true],
    ]);
    expect(rows[0].childCount).toBe(2);
  });

  it('never loops on a parent cycle and shows every span once', () => {
    const rows = spanRows([span('a', 'b', 0), span('b', 'a', 1), span('self', 'self', 2)]);
    expect(rows.map((r) => r.span.spanId).sort()).toEqual(['a', 'b', 'self']);
    expect(rows.every((r) => r.depth === 0 || !r.orphan)).toBe(true);
  });
});

describe('formatting', () => {
  it.each([
    [null, '—'],
    [0, '$0.00'],
    [1, '$0.000000001'],
    [1_500_000, '$0.0015'],
    [12_345_678, '$0.0123'],
    [2_500_000_000, '$2.50'],
  ])('formatUsdNanos(%s) = %s', (nanos, text) => {
    expect(formatUsdNanos(nanos)).toBe(text);
  });

  it.each([
    [850, '850 ms'],
    [1250, '1.25 s'],
    [12_300, '12.3 s'],
    [125_000, '2m 05s'],
    [3_720_000, '1h 02m'],
  ])('formatDuration(%s) = %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});
