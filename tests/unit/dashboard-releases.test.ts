import { describe, expect, it } from 'vitest';
import type { Evaluation, EvalResult, Label, LabelHistoryItem } from '@/components/evals/types';
import {
  checkEvaluation,
  checkSplit,
  draftOf,
  gateOn,
  parsePolicyDraft,
  pointedAtBefore,
  protectedLabelError,
  regressedCaseIds,
  splitText,
  suggestedComparison,
} from '@/components/releases/rules';
import { splitCurlSnippet, splitTypescriptSnippet } from '@/components/releases/snippets';
import { overrideReasonError } from '@/components/releases/OverrideForm';
import { releasePolicyInput } from '@/server/releases/schemas';
import { moveLabelInput } from '@/server/prompts/schemas';

const numbers: Record<string, number> = { ver_a: 1, ver_b: 2, ver_c: 3 };
const numberOf = (id: string) => numbers[id];
const policy = { protectedLabels: ['production'], requireEvaluation: true, maxPassRateDrop: 0, maxRegressions: 0 };

function side(passRate: number, pendingReviewCases = 0) {
  return {
    runId: 'run_x',
    reused: false,
    status: 'completed' as const,
    totalCases: 4,
    scoredCases: 4,
    passedCases: Math.round(passRate * 4),
    failedCases: 4 - Math.round(passRate * 4),
    pendingReviewCases,
    errorCases: 0,
    pendingCases: 0,
    passRate,
  };
}

function evaluation(patch: Partial<Evaluation> = {}): Evaluation {
  return {
    id: 'eval_1',
    promptId: 'prm_1',
    kind: 'comparison',
    versionId: 'ver_b',
    version: 2,
    status: 'completed',
    productionVersionId: 'ver_a',
    productionVersion: 1,
    candidate: side(1),
    production: side(1),
    ...patch,
  } as Evaluation;
}

function result(caseId: string, position: number, status: EvalResult['status'], passed: boolean | null): EvalResult {
  return { caseId, position, status, passed } as EvalResult;
}

describe('the release gate as the dashboard forecasts it', () => {
  const base = { policy, label: 'production', newVersionIds: ['ver_b'], current: ['ver_a'], numberOf };

  it('is on only for a protected label whose policy requires a comparison', () => {
    expect(gateOn(policy, 'production')).toBe(true);
    expect(gateOn(policy, 'staging')).toBe(false);
    expect(gateOn({ ...policy, requireEvaluation: false }, 'production')).toBe(false);
    expect(gateOn(undefined, 'production')).toBe(false);
  });

  it('asks for a comparison when none is chosen', () => {
    const verdict = checkEvaluation({ ...base, evaluation: null, regressions: null });
    expect(verdict.reasons).toHaveLength(1);
    expect(verdict.reasons[0]).toContain('requires a completed comparison of v2 against v1');
  });

  it('names production as the baseline of a protected label that points at nothing yet', () => {
    const canary = { ...base, label: 'canary', baselineLabel: 'production' };
    const verdict = checkEvaluation({ ...canary, evaluation: null, regressions: null });
    expect(verdict.reasons[0]).toContain('against v1, the version “production” serves now');
    const stale = checkEvaluation({
      ...canary,
      current: ['ver_c'],
      evaluation: evaluation(),
      regressions: [],
    });
    expect(stale.reasons.join(' ')).toContain('not the version “production” serves now');
  });

  it('passes a completed comparison of the candidate against the current version within the thresholds', () => {
    const verdict = checkEvaluation({ ...base, evaluation: evaluation(), regressions: [] });
    expect(verdict).toEqual({ reasons: [], counting: false, regressions: [] });
    // Regressions still loading: no reason yet, but the verdict says it is not final.
    expect(checkEvaluation({ ...base, evaluation: evaluation(), regressions: null }).counting).toBe(true);
  });

  it('refuses a drop beyond maxPassRateDrop, regressions beyond the limit, pending reviews and a stale baseline', () => {
    const verdict = checkEvaluation({
      ...base,
      evaluation: evaluation({
        candidate: side(0.5, 1),
        productionVersionId: 'ver_c',
        productionVersion: 3,
      }),
      regressions: ['case_1', 'case_2'],
    });
    expect(verdict.reasons.join('\n')).toMatch(/compared against v3/);
    expect(verdict.reasons.join('\n')).toMatch(/1 result is still pending review/);
    expect(verdict.reasons.join('\n')).toMatch(/\(50%\) is more than 0 percentage points below production’s \(100%\)/);
    expect(verdict.reasons.join('\n')).toMatch(/2 cases regressed/);
    // Within the allowed drop (50 points) and regressions (2), against the current version: accepted.
    const lenient = checkEvaluation({
      ...base,
      policy: { ...policy, maxPassRateDrop: 0.5, maxRegressions: 2 },
      evaluation: evaluation({ candidate: side(0.5) }),
      regressions: ['case_1', 'case_2'],
    });
    expect(lenient.reasons).toEqual([]);
  });

  it('refuses an evaluation of another candidate, one not completed, and a split adding two new versions', () => {
    const other = checkEvaluation({
      ...base,
      evaluation: evaluation({ versionId: 'ver_c', version: 3 }),
      regressions: [],
    });
    expect(other.reasons).toEqual(['The evaluation’s candidate is v3.']);
    const running = checkEvaluation({ ...base, evaluation: evaluation({ status: 'running' }), regressions: [] });
    expect(running.reasons[0]).toMatch(/is running/);
    // Its partial figures are not judged: not completed is the one reason.
    const cancelled = checkEvaluation({
      ...base,
      evaluation: evaluation({ status: 'cancelled', candidate: side(0.25) }),
      regressions: ['case_1'],
    });
    expect(cancelled.reasons).toEqual([
      'The evaluation is cancelled; only a completed comparison can justify a promotion.',
    ]);
    const split = checkEvaluation({
      ...base,
      newVersionIds: ['ver_b', 'ver_c'],
      evaluation: evaluation(),
      regressions: [],
    });
    expect(split.reasons[0]).toMatch(/adds 2 versions/);
  });

  it('counts as regressions the cases that passed on production and failed or errored on the candidate', () => {
    const production = [
      result('c1', 0, 'scored', true),
      result('c2', 1, 'scored', true),
      result('c3', 2, 'scored', false),
      result('c4', 3, 'scored', true),
    ];
    const candidate = [
      result('c4', 3, 'error', null),
      result('c1', 0, 'scored', false),
      result('c2', 1, 'pending_review', null),
      result('c3', 2, 'scored', false),
    ];
    // c2 is still pending review (undecided: it blocks on its own); c3 did not pass on production either.
    expect(regressedCaseIds(candidate, production)).toEqual(['c1', 'c4']);
  });

  it('treats every version the label served (now, moved to, or inside a split) as a rollback target', () => {
    const current = { versionId: 'ver_c', split: null } as unknown as Label;
    const history = [
      { toVersionId: 'ver_a', toSplit: null },
      {
        toVersionId: 'ver_c',
        toSplit: [
          { versionId: 'ver_c', weight: 90 },
          { versionId: 'ver_b', weight: 10 },
        ],
      },
    ] as LabelHistoryItem[];
    expect([...pointedAtBefore(current, history)].sort()).toEqual(['ver_a', 'ver_b', 'ver_c']);
    expect(
      splitText(
        [
          { versionId: 'ver_c', weight: 90 },
          { versionId: 'ver_b', weight: 10 },
        ],
        numberOf,
      ),
    ).toBe('v3 90% · v2 10%');
  });
});

describe('the comparison a move preselects', () => {
  it('takes the newest completed comparison of a new version against what the label serves', () => {
    const older = evaluation({ id: 'eval_old', completedAt: '2026-11-01T10:00:00.000Z' });
    const newer = evaluation({ id: 'eval_new', completedAt: '2026-11-02T10:00:00.000Z' });
    expect(suggestedComparison([older, newer], ['ver_b'], ['ver_a'])?.id).toBe('eval_new');
    expect(suggestedComparison([newer, older], ['ver_b'], ['ver_a'])?.id).toBe('eval_new');
  });

  it('passes over comparisons that could not justify the move', () => {
    const candidates = ['ver_b'];
    const current = ['ver_a'];
    const otherCandidate = evaluation({ id: 'e1', versionId: 'ver_c' });
    const staleProduction = evaluation({ id: 'e2', productionVersionId: 'ver_c' });
    const baseline = evaluation({ id: 'e3', kind: 'baseline', productionVersionId: null });
    const running = evaluation({ id: 'e4', status: 'running' });
    expect(suggestedComparison([otherCandidate, staleProduction, baseline, running], candidates, current)).toBeNull();
    const fitting = evaluation({ id: 'e5' });
    expect(suggestedComparison([otherCandidate, fitting, running], candidates, current)?.id).toBe('e5');
  });

  it('suggests nothing when the move brings in no new version', () => {
    expect(suggestedComparison([evaluation()], [], ['ver_a'])).toBeNull();
  });
});

describe('the release policy form', () => {
  it('shows fractions as percentages and sends percentages as fractions the API accepts', () => {
    const draft = draftOf({ ...policy, maxPassRateDrop: 0.025, maxRegressions: 3 });
    expect(draft.maxPassRateDropPercent).toBe('2.5');
    const parsed = parsePolicyDraft({ ...draft, protectedLabels: ['production', 'eu-west'] });
    expect(parsed.errors).toBeNull();
    expect(parsed.policy).toEqual({
      protectedLabels: ['production', 'eu-west'],
      requireEvaluation: true,
      maxPassRateDrop: 0.025,
      maxRegressions: 3,
    });
    expect(releasePolicyInput.safeParse(parsed.policy).success).toBe(true);
    expect(parsePolicyDraft({ ...draft, maxPassRateDropPercent: '100' }).policy?.maxPassRateDrop).toBe(1);
  });

  it('says what is wrong next to each field', () => {
    const parsed = parsePolicyDraft({
      protectedLabels: ['production'],
      requireEvaluation: true,
      maxPassRateDropPercent: '101',
      maxRegressions: '1.5',
    });
    expect(parsed.errors).toEqual({
      maxPassRateDrop: expect.stringMatching(/0 to 100/),
      maxRegressions: expect.stringMatching(/whole number/),
    });
    expect(parsePolicyDraft({ ...draftOf(policy), maxPassRateDropPercent: '-1' }).errors?.maxPassRateDrop).toBeTruthy();
    expect(protectedLabelError('Prod', [])).toMatch(/lowercase/);
    expect(protectedLabelError('production', ['production'])).toMatch(/already protected/);
    expect(
      protectedLabelError(
        'x',
        Array.from({ length: 10 }, (_, i) => `l${i}`),
      ),
    ).toMatch(/At most 10/);
    expect(protectedLabelError('canary', [])).toBeNull();
  });

  it('asks an override for 1 to 500 characters that are not only spaces', () => {
    expect(overrideReasonError('')).toMatch(/Say why/);
    expect(overrideReasonError('   ')).toMatch(/Say why/);
    expect(overrideReasonError('x'.repeat(501))).toMatch(/500 characters/);
    expect(overrideReasonError('Hotfix')).toBeNull();
  });
});

describe('the split form', () => {
  it('accepts 2 to 4 distinct versions with whole weights 1 to 99 summing to 100, as the API does', () => {
    const check = checkSplit([
      { versionId: 'ver_a', weight: '90' },
      { versionId: 'ver_b', weight: '10' },
    ]);
    expect(check.split).toEqual([
      { versionId: 'ver_a', weight: 90 },
      { versionId: 'ver_b', weight: 10 },
    ]);
    expect(moveLabelInput.safeParse({ split: check.split }).success).toBe(true);
  });

  it('says the total when the weights do not sum to 100, and what is wrong with each row', () => {
    const check = checkSplit([
      { versionId: 'ver_a', weight: '90' },
      { versionId: 'ver_a', weight: '5' },
      { versionId: '', weight: '0' },
    ]);
    expect(check.split).toBeNull();
    expect(check.total).toBe(95);
    expect(check.totalError).toBe('The weights add up to 95%; they must add up to 100%.');
    expect(check.rowErrors).toEqual([
      {},
      { versionId: 'This version is already in the split.' },
      { versionId: 'Choose a version.', weight: 'A whole number from 1 to 99.' },
    ]);
    expect(checkSplit([{ versionId: 'ver_a', weight: '100' }]).totalError).toMatch(/2 to 4 versions/);
  });

  it('counts what was typed: 100 and 0 make 100, and the rows say what is out of range', () => {
    const check = checkSplit([
      { versionId: 'ver_a', weight: '100' },
      { versionId: 'ver_b', weight: '0' },
    ]);
    expect(check).toMatchObject({ split: null, total: 100, totalError: null });
    expect(check.rowErrors).toEqual([
      { weight: 'A whole number from 1 to 99.' },
      { weight: 'A whole number from 1 to 99.' },
    ]);
    // A weight that is not a whole number: its row says so, and no sum is claimed.
    expect(
      checkSplit([
        { versionId: 'ver_a', weight: '50' },
        { versionId: 'ver_b', weight: 'half' },
      ]).totalError,
    ).toBeNull();
  });
});

describe('the split snippets', () => {
  it('send the subject and name the label', () => {
    const curl = splitCurlSnippet('http://127.0.0.1:3000', 'prm_1', 'canary', 'usr_1');
    expect(curl).toContain("curl 'http://127.0.0.1:3000/api/v1/prompts/prm_1?label=canary'");
    expect(curl).toContain("-H 'Promptloop-Subject: usr_1'");
    const ts = splitTypescriptSnippet('http://127.0.0.1:3000', 'prm_1', 'canary', 'usr_1');
    expect(ts).toContain("pl.getPrompt('prm_1', { label: 'canary', subject: 'usr_1' })");
  });
});
