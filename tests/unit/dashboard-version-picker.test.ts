import { describe, expect, it } from 'vitest';
import type { LabelHistoryItem } from '@/components/evals/types';
import { mergeChoices, missingVersionText, parseVersionNumber } from '@/components/versions/choices';
import { dashboardReason, historyRollbacks } from '@/components/releases/rules';

const version = (number: number, labels: string[] = []) => ({ id: `ver_${number}`, number, labels });

describe('the version picker’s choices', () => {
  it('offers the loaded versions and the ones found by number, each once, newest first', () => {
    const loaded = [version(106, ['staging']), version(105), version(104)];
    const found = [version(1), version(105, ['stale'])];
    expect(mergeChoices(loaded, found).map((v) => v.number)).toEqual([106, 105, 104, 1]);
    // The loaded page's copy wins: its labels are fresh.
    expect(mergeChoices(loaded, found).find((v) => v.number === 105)?.labels).toEqual([]);
    expect(mergeChoices([], [version(3), version(1), version(2)]).map((v) => v.number)).toEqual([3, 2, 1]);
  });

  it('reads a typed version number and says what is wrong next to the field', () => {
    expect(parseVersionNumber('1')).toEqual({ number: 1, error: null });
    expect(parseVersionNumber(' v12 ')).toEqual({ number: 12, error: null });
    expect(parseVersionNumber('V3')).toEqual({ number: 3, error: null });
    expect(parseVersionNumber('').error).toMatch(/Type a version number/);
    expect(parseVersionNumber('v').error).toMatch(/Type a version number/);
    for (const bad of ['0', '-1', '1.5', 'abc', '1e3', '99999999999999999999'])
      expect(parseVersionNumber(bad).error, bad).toMatch(/whole number from 1/);
  });

  it('names a number the prompt does not have', () => {
    expect(missingVersionText(7, 106)).toBe('This prompt has no v7.');
    expect(missingVersionText(200, 106)).toBe('This prompt has no v200: its newest version is v106.');
    expect(missingVersionText(3, undefined)).toBe('This prompt has no v3.');
  });
});

function move(label: string, from: string | null, to: string | null, patch: Partial<LabelHistoryItem> = {}) {
  const number = (id: string | null) => (id ? Number(id.slice(1)) : null);
  return {
    label,
    fromVersionId: from,
    toVersionId: to,
    fromVersion: number(from),
    toVersion: number(to),
    userId: 'usr_a',
    clientId: 'dashboard',
    evaluationId: null,
    at: '2025-01-01T00:00:00.000Z',
    source: 'move',
    toSplit: null,
    fromSplit: null,
    override: null,
    ...patch,
  } as LabelHistoryItem;
}

describe('rollbacks in the label history', () => {
  it('calls a move a rollback only when that label pointed at the version before, not any lower number', () => {
    // Newest first. staging: v1 → v7 → v2 (never served v2: no rollback); production: v1 → v3 → v1 (rollback).
    const items = [
      move('staging', 'v7', 'v2'),
      move('production', 'v3', 'v1'),
      move('staging', 'v1', 'v7'),
      move('production', 'v1', 'v3'),
      move('staging', null, 'v1'),
      move('production', null, 'v1'),
    ];
    expect(historyRollbacks(items)).toEqual([false, true, false, false, false, false]);
  });

  it('counts versions inside an earlier split, and a move back to the version the label left', () => {
    const split = [
      { versionId: 'v1', weight: 90 },
      { versionId: 'v4', weight: 10 },
    ];
    const items = [
      move('canary', 'v5', 'v4'),
      move('canary', 'v1', 'v5'),
      move('canary', 'v4', 'v1', { fromSplit: split }),
      move('canary', 'v1', 'v1', { toSplit: split }),
      move('canary', null, 'v1', { source: 'import' }),
    ];
    // v1 → v5 is new; v5 → v4 goes back to a version of the split; ending a split on one of its own
    // versions is "Split ended", not a rollback; an import never is one.
    expect(historyRollbacks(items)).toEqual([true, false, false, false, false]);
  });

  it('counts a split back to versions the label served as a rollback, and a removal never', () => {
    const split = [
      { versionId: 'v2', weight: 50 },
      { versionId: 'v3', weight: 50 },
    ];
    const items = [
      move('beta', 'v3', 'v2', { toSplit: split }),
      move('beta', 'v2', 'v3'),
      move('beta', null, 'v2'),
      move('beta', 'v9', null),
      move('beta', null, 'v9'),
    ];
    expect(historyRollbacks(items)).toEqual([true, false, false, false, false]);
  });

  it('does not call a move a rollback when the earlier rows of that label were not read', () => {
    expect(historyRollbacks([move('staging', 'v7', 'v2')])).toEqual([false]);
    // Another label's history does not count.
    expect(historyRollbacks([move('staging', 'v7', 'v2'), move('production', 'v1', 'v2')])).toEqual([false, false]);
  });
});

describe('the server’s refusal in the dashboard’s words', () => {
  it('asks to choose a completed comparison instead of passing an evaluationId', () => {
    const server =
      '"production" is protected and requires an evaluation: compare v2 with the version "production" points at now, then pass its evaluationId.';
    const text = dashboardReason(server, 'v1');
    expect(text).toBe(
      '“production” is protected and requires an evaluation: choose a completed comparison of v2 against v1, the version “production” serves now (run one on the Evaluations page if there is none).',
    );
    expect(text).not.toMatch(/evaluationId/);
    expect(dashboardReason(server, null)).toContain('of v2 against what “production” serves now');
  });

  it('keeps the other reasons, with typographic quotes and never the API field name', () => {
    expect(dashboardReason('2 cases are still pending review.', 'v1')).toBe('2 cases are still pending review.');
    expect(
      dashboardReason(
        'The evaluation compared against another version than the one "staging" points at now; run a new comparison.',
        'v1',
      ),
    ).toBe(
      'The evaluation compared against another version than the one “staging” points at now; run a new comparison.',
    );
    expect(dashboardReason('Compare v3 first, then pass its evaluationId.', null)).not.toMatch(/evaluationId/);
  });
});
