import { describe, expect, it } from 'vitest';
import { stoppedSide, type EvalResult } from '@/components/evals/types';
import { joinCases, matchesFilter, type Filter } from '@/components/evals/useResults';

// The evaluation page's result filters: a case counts under every filter it matches, so the Errors
// chip counts a regression whose candidate errored, as the run's summary counts its errors.

const result = (position: number, status: EvalResult['status'], passed: boolean | null = null): EvalResult =>
  ({
    id: `res_${position}_${status}`,
    caseId: `case_${position}`,
    position,
    status,
    passed,
    input: '',
    expectedOutput: '',
  }) as EvalResult;

const filters: Filter[] = ['regression', 'failed', 'error', 'review', 'improved'];
const countsOf = (candidate: EvalResult[], production: EvalResult[]) => {
  const rows = joinCases(candidate, production);
  return Object.fromEntries(filters.map((f) => [f, rows.filter((row) => matchesFilter(row, f)).length]));
};

describe('evaluation result filters', () => {
  it('a candidate error where production passed is a regression and an error', () => {
    const candidate = [result(0, 'error'), result(1, 'error'), result(2, 'scored', false), result(3, 'scored', true)];
    const production = [
      result(0, 'scored', true),
      result(1, 'scored', true),
      result(2, 'scored', true),
      result(3, 'error'),
    ];
    expect(countsOf(candidate, production)).toEqual({ regression: 3, failed: 1, error: 3, review: 0, improved: 1 });
  });

  it('a single run: failures, errors and reviews by the candidate alone', () => {
    const candidate = [
      result(0, 'error'),
      result(1, 'scored', false),
      result(2, 'pending_review'),
      result(3, 'scored', true),
    ];
    expect(countsOf(candidate, [])).toEqual({ regression: 0, failed: 1, error: 1, review: 1, improved: 0 });
  });
});

describe('a side that stopped', () => {
  it('is one that was cancelled or failed: its pending cases will not run', () => {
    expect(stoppedSide({ status: 'cancelled' })).toBe(true);
    expect(stoppedSide({ status: 'failed' })).toBe(true);
    for (const status of ['pending', 'running', 'paused', 'completed'] as const)
      expect(stoppedSide({ status })).toBe(false);
    expect(stoppedSide(null)).toBe(false);
  });
});
