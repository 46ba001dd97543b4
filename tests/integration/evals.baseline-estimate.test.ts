import { describe, expect, it } from 'vitest';
import { caller } from '../helpers/trpc';
import { drain, evaluationRows, setupFixture } from '../helpers/evals';

// The dashboard's preview before "Initialize baseline" (evals.estimateBaseline): what initialize
// would run and cost now, in the shape of a comparison's estimate, without starting anything.
describe('baseline estimate', () => {
  it('counts the draft’s cases and credits, starts nothing, and says why a start would be refused', async () => {
    const f = await setupFixture({ cases: 3 });
    const ids = { organizationId: f.org.id, promptId: f.prompt.id };
    const editor = await caller(f.editor.id);
    const estimate = await editor.evals.estimateBaseline({ ...ids, scoringMethod: 'expected' });
    expect(estimate).toMatchObject({
      scope: 'quick',
      datasetSize: 3,
      totalCases: 3,
      candidateCases: 3,
      productionCases: 0,
      reusedProductionRunId: null,
      credits: 3,
      incompatibleCases: 0,
      warnings: [],
      allowed: true,
      reason: null,
    });
    expect(estimate.creditsRemaining).toBeGreaterThan(0);
    expect(await evaluationRows(f.prompt.id)).toEqual([]);

    // A viewer may look but could not start it.
    const viewer = await caller(f.viewer.id);
    expect(await viewer.evals.estimateBaseline({ ...ids, scoringMethod: 'expected' })).toMatchObject({
      credits: 3,
      allowed: false,
      reason: 'forbidden',
    });

    // The estimate matches what initialize then charges; once published, a baseline is refused.
    const started = await editor.evals.initialize({
      ...ids,
      draftRevision: f.draft.revision,
      scoringMethod: 'expected',
    });
    expect(started.totalCases).toBe(estimate.totalCases);
    await drain();
    const after = await editor.evals.estimateBaseline({ ...ids, scoringMethod: 'expected' });
    expect(after.creditsRemaining).toBe(estimate.creditsRemaining - estimate.credits);
    expect(after).toMatchObject({ allowed: false, reason: 'invalid_state' });
  });
});
