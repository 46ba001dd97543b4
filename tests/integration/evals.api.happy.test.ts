import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { evalRuns, promptLabels } from '@/db/schema';
import { caller } from '../helpers/trpc';
import {
  auditOps,
  comparisonFixture,
  drain,
  echoRows,
  importRows,
  resultRows,
  runRows,
  setPlan,
} from '../helpers/evals';

describe('evaluations: start, read, reuse', () => {
  it('starts a comparison: pins production, freezes the first 10 cases, version content and scoring, with counts that add up', async () => {
    const f = await comparisonFixture({ cases: 12 });
    const started = await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' } });
    expect(started.status).toBe(201);
    const e = started.body;
    expect(e).toMatchObject({
      id: expect.stringMatching(/^eval_/),
      promptId: f.prompt.id,
      kind: 'comparison',
      versionId: f.v2.id,
      version: 2,
      status: 'pending',
      scope: 'quick',
      rerunBoth: false,
      totalCases: 10,
      datasetSize: 12,
      pendingCases: 10,
      scoredCases: 0,
      passedCases: 0,
      failedCases: 0,
      pendingReviewCases: 0,
      errorCases: 0,
      passRate: 0,
      productionVersionId: f.v1.id,
      productionVersion: 1,
      productionRunId: expect.stringMatching(/^run_/),
      candidateRunId: expect.stringMatching(/^run_/),
      scoring: { method: 'expected' },
      completedAt: null,
      error: null,
    });
    expect(e.candidate).toMatchObject({ status: 'pending', totalCases: 10, pendingCases: 10, reused: false });
    expect(e.production).toMatchObject({ status: 'pending', totalCases: 10, reused: false });

    const runs = await runRows([e.candidateRunId, e.productionRunId]);
    const candidate = runs.find((r) => r.id === e.candidateRunId)!;
    const production = runs.find((r) => r.id === e.productionRunId)!;
    expect(candidate.versionId).toBe(f.v2.id);
    expect((candidate.content as any).messages[0].content).toBe('You answer support questions, briefly.');
    expect(production.versionId).toBe(f.v1.id);
    expect((production.content as any).messages[0].content).toBe('You answer support questions.');
    expect(candidate.casesDigest).toBe(production.casesDigest);
    const results = await resultRows(e.candidateRunId);
    expect(results.map((r) => r.position)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(results.every((r) => r.status === 'pending')).toBe(true);

    // Reads: get, list (newest first), results by position then side.
    const got = await f.viewer.call('GET', `/organizations/${f.org.id}/evals/${e.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(e);
    const listed = await f.viewer.call('GET', f.evals);
    expect(listed.body).toEqual({ items: [e], nextCursor: null });
    const page = await f.viewer.call('GET', `/organizations/${f.org.id}/evals/${e.id}/results`, { query: 'limit=3' });
    expect(page.body.items.map((r: any) => [r.position, r.side])).toEqual([
      [1, 'candidate'],
      [1, 'production'],
      [2, 'candidate'],
    ]);
    expect(page.body.items[0]).toMatchObject({
      status: 'pending',
      input: 'case 1',
      expectedOutput: 'case 1',
      output: null,
      passed: null,
      review: null,
      assertions: [],
    });
    const next = await f.viewer.call('GET', `/organizations/${f.org.id}/evals/${e.id}/results`, {
      query: `limit=3&cursor=${page.body.nextCursor}`,
    });
    expect(next.body.items.map((r: any) => [r.position, r.side])).toEqual([
      [2, 'production'],
      [3, 'candidate'],
      [3, 'production'],
    ]);
    const productionOnly = await f.viewer.call('GET', `/organizations/${f.org.id}/evals/${e.id}/results`, {
      query: 'side=production&limit=100',
    });
    expect(productionOnly.body.items).toHaveLength(10);
    expect(productionOnly.body.items.every((r: any) => r.side === 'production')).toBe(true);
    expect(await auditOps(f.org.id)).toEqual(['evaluation.start']);
  });

  it('comprehensive on Pro runs every case; production is read at acceptance', async () => {
    const f = await comparisonFixture({ cases: 12 });
    await setPlan(f.org.id, 'pro');
    const started = await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'comprehensive' } });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ totalCases: 12, datasetSize: 12, scope: 'comprehensive' });
    // Moving production afterwards does not change what this evaluation pinned.
    const db = await getDb();
    await db.update(promptLabels).set({ versionId: f.v2.id }).where(eq(promptLabels.promptId, f.prompt.id));
    const got = await f.editor.call('GET', `/organizations/${f.org.id}/evals/${started.body.id}`);
    expect(got.body.productionVersionId).toBe(f.v1.id);
  });

  it('reuses completed production evidence; rerunBoth forces a fresh production run; the candidate is always fresh', async () => {
    const f = await comparisonFixture({ cases: 3 });
    const first = (await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' } })).body;
    await drain();
    const done = (await f.editor.call('GET', `/organizations/${f.org.id}/evals/${first.id}`)).body;
    expect(done).toMatchObject({ status: 'completed', scoredCases: 3, passedCases: 3, passRate: 1, pendingCases: 0 });
    expect(done.production).toMatchObject({ status: 'completed', scoredCases: 3, passedCases: 3 });

    const estimate = await f.editor.call('GET', `${f.evals}/estimate`, { query: `versionId=${f.v2.id}&scope=quick` });
    expect(estimate.body).toEqual({
      scope: 'quick',
      datasetSize: 3,
      totalCases: 3,
      candidateCases: 3,
      productionCases: 0,
      reusedProductionRunId: first.productionRunId,
      credits: 3,
      // The first comparison ran 3 cases on each side of the month's 200 Free credits.
      creditsRemaining: 194,
      allowed: true,
      reason: null,
      incompatibleCases: 0,
      warnings: [],
    });

    const second = (await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' } })).body;
    expect(second.id).not.toBe(first.id);
    expect(second.productionRunId).toBe(first.productionRunId);
    expect(second.candidateRunId).not.toBe(first.candidateRunId);
    expect(second.production).toMatchObject({ reused: true, status: 'completed', scoredCases: 3 });
    expect(second.status).toBe('pending');

    const fresh = (
      await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick', rerunBoth: true } })
    ).body;
    expect(fresh.productionRunId).not.toBe(first.productionRunId);
    expect(fresh.production).toMatchObject({ reused: false, status: 'pending', pendingCases: 3 });
    await drain();
    const finished = (await f.editor.call('GET', `/organizations/${f.org.id}/evals/${second.id}`)).body;
    expect(finished.status).toBe('completed');

    // A changed dataset is different evidence: no reuse.
    await importRows(f.editor, f.org.id, f.prompt.id, echoRows(1, 'extra'));
    const changed = (await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' } })).body;
    expect([first.productionRunId, fresh.productionRunId]).not.toContain(changed.productionRunId);
    expect(changed.totalCases).toBe(4);
    const db = await getDb();
    const [run] = await db.select().from(evalRuns).where(eq(evalRuns.id, changed.productionRunId));
    expect(run.status).toBe('pending');
  });

  it('the dashboard (tRPC) uses the same operations and JSON', async () => {
    const f = await comparisonFixture({ cases: 2 });
    const trpc = await caller(f.editor.id);
    const estimate = await trpc.evals.estimate({
      organizationId: f.org.id,
      promptId: f.prompt.id,
      versionId: f.v2.id,
      scope: 'quick',
    });
    expect(estimate).toMatchObject({
      candidateCases: 2,
      productionCases: 2,
      credits: 4,
      allowed: true,
      reusedProductionRunId: null,
    });
    const started = await trpc.evals.start({
      organizationId: f.org.id,
      promptId: f.prompt.id,
      versionId: f.v2.id,
      scope: 'quick',
    });
    expect(started).toMatchObject({ kind: 'comparison', totalCases: 2 });
    const rest = await f.editor.call('GET', `/organizations/${f.org.id}/evals/${started.id}`);
    expect(rest.body).toEqual(started);
    const list = await trpc.evals.list({ organizationId: f.org.id, promptId: f.prompt.id, limit: 10 });
    expect(list.items.map((e) => e.id)).toEqual([started.id]);
    const results = await trpc.evals.results({
      organizationId: f.org.id,
      evaluationId: started.id,
      side: 'candidate',
      limit: 10,
    });
    expect(results.items).toHaveLength(2);
    const cancelled = await trpc.evals.cancel({ organizationId: f.org.id, evaluationId: started.id });
    expect(cancelled.status).toBe('cancelled');
  });

  it('lists page newest first', async () => {
    const f = await comparisonFixture({ cases: 1 });
    const ids: string[] = [];
    for (const rerunBoth of [false, true]) {
      const started = await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick', rerunBoth } });
      ids.push(started.body.id);
    }
    const first = await f.viewer.call('GET', f.evals, { query: 'limit=1' });
    expect(first.body.items.map((e: any) => e.id)).toEqual([ids[1]]);
    const second = await f.viewer.call('GET', f.evals, { query: `limit=1&cursor=${first.body.nextCursor}` });
    expect(second.body).toEqual({ items: [expect.objectContaining({ id: ids[0] })], nextCursor: null });
  });
});
