import { describe, expect, it } from 'vitest';
import { spanRows } from '@/components/traces/span-tree';
import { formatDuration, formatUsdNanos } from '@/components/traces/format';
import { formatTimestamp } from '@/components/format';
import { missingContentMessage, spanCaseWarning } from '@/components/traces/span-case';

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

describe('formatTimestamp', () => {
  // Mid-year local times, so no time zone moves either across a year boundary.
  const now = new Date(2025, 5, 15, 12).getTime();

  it('leaves the year out for a time of the current year', () => {
    const text = formatTimestamp(new Date(2025, 2, 3, 9, 30, 15).getTime(), now);
    expect(text).not.toMatch(/2025/);
    expect(text).toMatch(/3/);
  });

  it('shows the year for a time of another year (a trace started last year, or at 0)', () => {
    expect(formatTimestamp(new Date(2024, 10, 28, 5, 34, 35).getTime(), now)).toMatch(/2024/);
    expect(formatTimestamp(new Date(1970, 5, 1).getTime(), now)).toMatch(/1970/);
  });
});

describe('Add to dataset copy', () => {
  const variables = {
    inputType: 'variables' as const,
    messages: [{ role: 'user' as const, content: 'Hi {{company}} in {{language}}' }],
  };

  it('warns before adding that text cannot fill a prompt with several variables, with an object to edit it to', () => {
    const warning = spanCaseWarning(variables, { input: 'Where is my order?', inputFormat: 'text' });
    expect(warning?.message).toMatch(/must be a JSON object/);
    expect(warning?.example).toBe('{"company": "…", "language": "…"}');
  });

  it('does not warn when the input can run', () => {
    expect(spanCaseWarning(variables, { input: '{"company":"Acme","language":"en"}', inputFormat: 'json' })).toBeNull();
    const userMessage = {
      inputType: 'user_message' as const,
      messages: [{ role: 'system' as const, content: 'Be brief.' }],
    };
    expect(spanCaseWarning(userMessage, { input: 'Where is my order?', inputFormat: 'text' })).toBeNull();
    expect(spanCaseWarning(null, { input: 'x', inputFormat: 'text' })).toBeNull();
  });

  it('says which part a span without content lacks', () => {
    const errorSpan = missingContentMessage(JSON.stringify({ input: [{ role: 'user', content: 'Hi' }], output: null }));
    expect(errorSpan).toMatch(/has an input but no output/);
    expect(errorSpan).not.toMatch(/no input/);
    expect(missingContentMessage(JSON.stringify({ output: 'Hello' }))).toMatch(/has an output but no input/);
    expect(missingContentMessage(JSON.stringify({ input: '' }))).toMatch(/no input and no output/);
    expect(missingContentMessage('not json')).toMatch(/not an object/);
  });
});
