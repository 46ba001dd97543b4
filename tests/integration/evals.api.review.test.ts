import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { datasetCases, datasets, evalResults } from '@/db/schema';
import { call } from '../helpers/api';
import { signToken } from '../helpers/issuer';
import { auditOps, comparisonFixture, drain } from '../helpers/evals';

async function reviewFixture(cases = 4) {
  const f = await comparisonFixture({ cases });
  const scoring = await f.editor.call('PUT', `${f.base}/scoring`, { body: { method: 'review' } });
  expect(scoring.status).toBe(200);
  const e = (await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' } })).body;
  expect(e.scoring).toEqual({ method: 'review' });
  await drain();
  const evalBase = `/organizations/${f.org.id}/evals/${e.id}`;
  const results = (await f.editor.call('GET', `${evalBase}/results`, { query: 'side=candidate' })).body.items;
  return { ...f, e, evalBase, results };
}

describe('evaluation reviews', () => {
  it('each decision: calibration updates the result and the dataset case; scored decisions set passed; counts add up', async () => {
    const f = await reviewFixture(4);
    const waiting = (await f.editor.call('GET', f.evalBase)).body;
    expect(waiting).toMatchObject({ status: 'completed', pendingReviewCases: 4, scoredCases: 0, passRate: 0 });
    expect(f.results.map((r: any) => r.status)).toEqual([
      'pending_review',
      'pending_review',
      'pending_review',
      'pending_review',
    ]);
    const [a, b, c, d] = f.results;
    const db = await getDb();
    const [before] = await db.select().from(datasets).where(eq(datasets.promptId, f.prompt.id));

    const reviewed = await f.editor.call('POST', `${f.evalBase}/reviews`, {
      body: {
        reviews: [
          { resultId: a.id, decision: 'accept_generated' },
          { resultId: b.id, decision: 'accept_corrected', correctedOutput: 'a better answer' },
          { resultId: c.id, decision: 'mark_correct' },
          { resultId: d.id, decision: 'mark_incorrect' },
        ],
      },
    });
    expect(reviewed.status).toBe(200);
    expect(reviewed.body).toMatchObject({
      pendingReviewCases: 0,
      scoredCases: 4,
      passedCases: 2,
      failedCases: 2,
      passRate: 0.5,
      totalCases: 4,
    });
    const after = (await f.editor.call('GET', `${f.evalBase}/results`, { query: 'side=candidate' })).body.items;
    const byId = new Map(after.map((r: any) => [r.id, r]));
    const review = { userId: f.editor.id, clientId: 'promptloop-cli', human: true, at: expect.any(String) };
    expect(byId.get(a.id)).toMatchObject({
      status: 'scored',
      passed: true,
      expectedOutput: a.output,
      review: { decision: 'accept_generated', correctedOutput: null, ...review },
    });
    // The corrected text is the new expectation; the generated output does not match it, so it fails.
    expect(byId.get(b.id)).toMatchObject({
      status: 'scored',
      passed: false,
      expectedOutput: 'a better answer',
      review: { decision: 'accept_corrected', correctedOutput: 'a better answer', ...review },
    });
    expect(byId.get(c.id)).toMatchObject({
      status: 'scored',
      passed: true,
      expectedOutput: c.expectedOutput,
      review: { decision: 'mark_correct' },
    });
    expect(byId.get(d.id)).toMatchObject({ status: 'scored', passed: false, review: { decision: 'mark_incorrect' } });

    const cases = await db.select().from(datasetCases).where(eq(datasetCases.datasetId, before.id));
    expect(cases.find((x) => x.id === b.caseId)!.expectedOutput).toBe('a better answer');
    expect(cases.find((x) => x.id === a.caseId)!.expectedOutput).toBe(a.output);
    const [bumped] = await db.select().from(datasets).where(eq(datasets.id, before.id));
    expect(bumped.revision).toBe(before.revision + 1);

    // Re-review replaces the decision.
    const again = await f.editor.call('POST', `${f.evalBase}/reviews`, {
      body: { reviews: [{ resultId: d.id, decision: 'mark_correct' }] },
    });
    expect(again.body).toMatchObject({ passedCases: 3, failedCases: 1 });
    expect(await auditOps(f.org.id)).toEqual(['evaluation.review', 'evaluation.review', 'evaluation.start']);
  });

  it('production results of the comparison can be reviewed too; a deleted case is calibrated on the result only', async () => {
    const f = await reviewFixture(2);
    const production = (await f.editor.call('GET', `${f.evalBase}/results`, { query: 'side=production' })).body.items;
    const dataset = (await f.editor.call('GET', `${f.base}/dataset`)).body;
    const removed = await f.editor.call('DELETE', `${f.base}/dataset/cases/${production[0].caseId}`, {
      query: `revision=${dataset.revision}`,
    });
    expect(removed.status).toBe(200);
    const reviewed = await f.editor.call('POST', `${f.evalBase}/reviews`, {
      body: {
        reviews: [{ resultId: production[0].id, decision: 'accept_corrected', correctedOutput: production[0].output }],
      },
    });
    expect(reviewed.status).toBe(200);
    expect(reviewed.body.production).toMatchObject({ scoredCases: 1, passedCases: 1, pendingReviewCases: 1 });
  });

  it('a case edited after the run froze it keeps its edit: the calibration scores the result only', async () => {
    const f = await reviewFixture(2);
    const [a, b] = f.results;
    const dataset = (await f.editor.call('GET', `${f.base}/dataset`)).body;
    const edited = await f.editor.call('PUT', `${f.base}/dataset/cases/${a.caseId}`, {
      body: { revision: dataset.revision, row: { expectedOutput: 'a newer expectation' } },
    });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    const reviewed = await f.editor.call('POST', `${f.evalBase}/reviews`, {
      body: {
        reviews: [
          { resultId: a.id, decision: 'accept_generated' },
          { resultId: b.id, decision: 'accept_corrected', correctedOutput: 'a better answer' },
        ],
      },
    });
    expect(reviewed.status).toBe(200);
    expect(reviewed.body).toMatchObject({ scoredCases: 2, pendingReviewCases: 0 });
    const after = (await f.editor.call('GET', `${f.base}/dataset`)).body;
    const expectation = (caseId: string) => after.rows.find((row: any) => row.id === caseId).expectedOutput;
    expect(expectation(a.caseId)).toBe('a newer expectation');
    expect(expectation(b.caseId)).toBe('a better answer');
    expect(after.revision).toBe(dataset.revision + 2);
    const results = (await f.editor.call('GET', `${f.evalBase}/results`, { query: 'side=candidate' })).body.items;
    expect(results.find((r: any) => r.id === a.id)).toMatchObject({ expectedOutput: a.output, passed: true });
  });

  it('a calibration that would repeat another case’s input and expectation → 409 invalid_state duplicate; nothing is recorded', async () => {
    const f = await reviewFixture(2);
    const [a, b] = f.results;
    const dataset = (await f.editor.call('GET', `${f.base}/dataset`)).body;
    const caseA = dataset.rows.find((row: any) => row.id === a.caseId);
    // Case b now asks what case a asks, and expects another answer.
    const updated = await f.editor.call('PUT', `${f.base}/dataset/cases/${b.caseId}`, {
      body: {
        revision: dataset.revision,
        row: {
          input: caseA.input,
          expectedOutput: 'the other answer',
          inputFormat: caseA.inputFormat,
          referenceFormat: caseA.referenceFormat,
        },
      },
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    const before = (await f.editor.call('GET', `${f.base}/dataset`)).body;

    const refused = await f.editor.call('POST', `${f.evalBase}/reviews`, {
      body: {
        reviews: [
          { resultId: b.id, decision: 'mark_correct' },
          { resultId: a.id, decision: 'accept_corrected', correctedOutput: 'the other answer' },
        ],
      },
    });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({
      code: 'invalid_state',
      details: { state: 'duplicate', caseId: b.caseId, resultId: a.id },
    });
    const results = (await f.editor.call('GET', `${f.evalBase}/results`, { query: 'side=candidate' })).body.items;
    expect(results.map((r: any) => [r.status, r.review])).toEqual([
      ['pending_review', null],
      ['pending_review', null],
    ]);
    expect((await f.editor.call('GET', `${f.base}/dataset`)).body).toEqual(before);

    // Another expectation for case a is calibrated as usual.
    const ok = await f.editor.call('POST', `${f.evalBase}/reviews`, {
      body: { reviews: [{ resultId: a.id, decision: 'accept_corrected', correctedOutput: 'a third answer' }] },
    });
    expect(ok.status).toBe(200);
    const after = (await f.editor.call('GET', `${f.base}/dataset`)).body;
    expect(after.revision).toBe(before.revision + 1);
    expect(after.rows.find((row: any) => row.id === a.caseId).expectedOutput).toBe('a third answer');
  });

  it('refusals: unknown result 404, pending result 409, bad bodies 400; nothing is recorded', async () => {
    const f = await reviewFixture(2);
    const other = await f.editor.call('POST', f.evals, {
      body: { versionId: f.v2.id, scope: 'quick', rerunBoth: true },
    });
    const pendingResult = (
      await f.editor.call('GET', `/organizations/${f.org.id}/evals/${other.body.id}/results`, {
        query: 'side=candidate',
      })
    ).body.items[0];
    expect(pendingResult.status).toBe('pending');

    // A result of another evaluation is not part of this one.
    const foreign = await f.editor.call('POST', `${f.evalBase}/reviews`, {
      body: { reviews: [{ resultId: pendingResult.id, decision: 'mark_correct' }] },
    });
    expect(foreign.status).toBe(404);
    const pending = await f.editor.call('POST', `/organizations/${f.org.id}/evals/${other.body.id}/reviews`, {
      body: { reviews: [{ resultId: pendingResult.id, decision: 'mark_correct' }] },
    });
    expect(pending.status).toBe(409);
    expect(pending.body.error).toMatchObject({
      code: 'invalid_state',
      details: { state: 'pending', resultId: pendingResult.id },
    });
    // All or nothing: a valid first item is not kept when the second is refused.
    const mixed = await f.editor.call('POST', `${f.evalBase}/reviews`, {
      body: {
        reviews: [
          { resultId: f.results[0].id, decision: 'mark_correct' },
          { resultId: 'res_00000000000000000000000000', decision: 'mark_correct' },
        ],
      },
    });
    expect(mixed.status).toBe(404);

    for (const body of [
      { reviews: [] },
      { reviews: Array.from({ length: 101 }, (_, i) => ({ resultId: `res_${i}`, decision: 'mark_correct' })) },
      { reviews: [{ resultId: f.results[0].id, decision: 'accept_corrected' }] },
      { reviews: [{ resultId: f.results[0].id, decision: 'accept_corrected', correctedOutput: '' }] },
      { reviews: [{ resultId: f.results[0].id, decision: 'mark_correct', correctedOutput: 'x' }] },
      { reviews: [{ resultId: f.results[0].id, decision: 'approve' }] },
      { reviews: [{ resultId: f.results[0].id, decision: 'mark_correct', human: false }] },
      {
        reviews: [
          { resultId: f.results[0].id, decision: 'mark_correct' },
          { resultId: f.results[0].id, decision: 'mark_incorrect' },
        ],
      },
    ]) {
      const refused = await f.editor.call('POST', `${f.evalBase}/reviews`, { body });
      expect(refused.status, JSON.stringify(body).slice(0, 80)).toBe(400);
    }
    const db = await getDb();
    const [row] = await db.select().from(evalResults).where(eq(evalResults.id, f.results[0].id));
    expect(row).toMatchObject({ status: 'pending_review', review: null });
    expect(await auditOps(f.org.id)).toEqual(['evaluation.start', 'evaluation.start']);
  });

  it('a decision through another OAuth client on /api/v1 is an agent’s: its client and human: false; the CLI’s is human', async () => {
    const f = await reviewFixture(2);
    // API.md: `review.human` is true only for a person in the dashboard or the CLI (the `promptloop-cli` client).
    const agentToken = await signToken({ sub: f.editor.sub, clientId: 'client_agent-x' });
    const byAgent = await call('POST', `${f.evalBase}/reviews`, {
      token: agentToken,
      body: { reviews: [{ resultId: f.results[0].id, decision: 'mark_correct' }] },
    });
    expect(byAgent.status).toBe(200);
    const byCli = await f.editor.call('POST', `${f.evalBase}/reviews`, {
      body: { reviews: [{ resultId: f.results[1].id, decision: 'mark_correct' }] },
    });
    expect(byCli.status).toBe(200);
    const db = await getDb();
    const reviewOf = async (id: string) =>
      (await db.select().from(evalResults).where(eq(evalResults.id, id)))[0].review;
    expect(await reviewOf(f.results[0].id)).toMatchObject({
      decision: 'mark_correct',
      userId: f.editor.id,
      clientId: 'client_agent-x',
      human: false,
    });
    expect(await reviewOf(f.results[1].id)).toMatchObject({ clientId: 'promptloop-cli', human: true });
  });
});
