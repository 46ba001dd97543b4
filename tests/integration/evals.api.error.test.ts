import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { evalResults, evalRuns, evaluations } from '@/db/schema';
import { activePrompt, createPrompt } from '../helpers/prompts';
import {
  auditOps,
  comparisonFixture,
  drain,
  evaluationRows,
  pause,
  resultRows,
  runRows,
  saveVersion,
  setPlan,
} from '../helpers/evals';

const evalPath = (orgId: string, id: string, rest = '') => `/organizations/${orgId}/evals/${id}${rest}`;

describe('evaluations: refusals change nothing', () => {
  it('strict bodies: overrides, unknown fields, bad scope and missing fields are 400', async () => {
    const f = await comparisonFixture({ cases: 1 });
    for (const body of [
      { versionId: f.v2.id, scope: 'quick', modelRouteId: 'openai/gpt-4o' },
      { versionId: f.v2.id, scope: 'quick', temperature: 0 },
      { versionId: f.v2.id, scope: 'quick', settings: {} },
      { versionId: f.v2.id, scope: 'everything' },
      { versionId: f.v2.id },
      { scope: 'quick' },
      { versionId: f.v2.id, scope: 'quick', rerunBoth: 'yes' },
    ]) {
      const refused = await f.editor.call('POST', f.evals, { body });
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error.code).toBe('invalid_request');
    }
    const dup = await f.editor.call('POST', f.evals, {
      rawBody: `{"versionId":"${f.v2.id}","scope":"quick","scope":"quick"}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(dup.status).toBe(400);
    expect(await evaluationRows(f.prompt.id)).toEqual([]);
  });

  it('setup and archived prompts are invalid_state; a version of another prompt is 404; an empty dataset is invalid_state', async () => {
    const f = await comparisonFixture({ cases: 0 });
    const empty = await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' } });
    expect(empty.status).toBe(409);
    expect(empty.body.error).toMatchObject({ code: 'invalid_state', details: { state: 'empty_dataset' } });

    const setup = await createPrompt(f.editor, f.org.id, 'In setup');
    const inSetup = await f.editor.call('POST', `/organizations/${f.org.id}/prompts/${setup.id}/evals`, {
      body: { versionId: f.v2.id, scope: 'quick' },
    });
    expect(inSetup.status).toBe(409);
    expect(inSetup.body.error).toMatchObject({ code: 'invalid_state', details: { state: 'setup' } });

    const other = await activePrompt(f.editor, f.org.id, 'Another prompt');
    const foreign = await f.editor.call('POST', f.evals, { body: { versionId: other.v1.id, scope: 'quick' } });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('not_found');
    const bogus = await f.editor.call('POST', f.evals, { body: { versionId: 'ver_nope', scope: 'quick' } });
    expect(bogus.status).toBe(404);

    expect((await f.editor.call('POST', `${f.base}/archive`)).status).toBe(200);
    const archived = await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' } });
    expect(archived.status).toBe(409);
    expect(archived.body.error).toMatchObject({ code: 'invalid_state', details: { state: 'archived' } });
    expect(await evaluationRows(f.prompt.id)).toEqual([]);
    expect(await auditOps(f.org.id)).toEqual([]);
  });

  it('comprehensive on Free is 403 plan_required (quick works)', async () => {
    const f = await comparisonFixture({ cases: 2 });
    const refused = await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'comprehensive' } });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'plan_required', details: { requiredPlan: 'pro' } });
    const estimate = await f.editor.call('GET', `${f.evals}/estimate`, {
      query: `versionId=${f.v2.id}&scope=comprehensive`,
    });
    expect(estimate.body).toMatchObject({ allowed: false, reason: 'plan_required' });
    expect(await evaluationRows(f.prompt.id)).toEqual([]);
  });

  it('cancel, resume and retry refuse the wrong state with invalid_state and change nothing', async () => {
    const f = await comparisonFixture({ cases: 2 });
    const e = (await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' } })).body;

    const resume = await f.editor.call('POST', evalPath(f.org.id, e.id, '/resume'));
    expect(resume.status).toBe(409);
    expect(resume.body.error).toMatchObject({ code: 'invalid_state', details: { state: 'pending' } });
    const retry = await f.editor.call('POST', evalPath(f.org.id, e.id, '/retry'), { body: { side: 'candidate' } });
    expect(retry.status).toBe(409);
    expect(retry.body.error).toMatchObject({ code: 'invalid_state', details: { state: 'pending' } });
    const badSide = await f.editor.call('POST', evalPath(f.org.id, e.id, '/retry'), { body: { side: 'both' } });
    expect(badSide.status).toBe(400);

    await drain();
    const cancel = await f.editor.call('POST', evalPath(f.org.id, e.id, '/cancel'));
    expect(cancel.status).toBe(409);
    expect(cancel.body.error).toMatchObject({ code: 'invalid_state', details: { state: 'completed' } });
    const after = await f.editor.call('GET', evalPath(f.org.id, e.id));
    expect(after.body.status).toBe('completed');

    // Retrying reused production evidence is refused even when that run is failed.
    const second = (await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' } })).body;
    expect(second.productionRunId).toBe(e.productionRunId);
    const db = await getDb();
    await db.update(evalRuns).set({ status: 'failed' }).where(eq(evalRuns.id, second.productionRunId));
    const reused = await f.editor.call('POST', evalPath(f.org.id, second.id, '/retry'), {
      body: { side: 'production' },
    });
    expect(reused.status).toBe(409);
    expect(reused.body.error).toMatchObject({ code: 'invalid_state', details: { state: 'reused_evidence' } });
    expect(await auditOps(f.org.id)).toEqual(['evaluation.start', 'evaluation.start']);
  });

  it('cancel keeps partial results, stops pending work, and a cancelled evaluation cannot be cancelled again', async () => {
    const f = await comparisonFixture({ cases: 3 });
    const e = (await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' } })).body;
    // One case already finished on the candidate side before the cancel.
    const db = await getDb();
    const [first] = await db
      .select()
      .from(evalResults)
      .where(eq(evalResults.runId, e.candidateRunId))
      .orderBy(evalResults.position)
      .limit(1);
    await db
      .update(evalResults)
      .set({ status: 'scored', output: first.input, passed: true, score: 1 })
      .where(eq(evalResults.id, first.id));

    const cancelled = await f.editor.call('POST', evalPath(f.org.id, e.id, '/cancel'));
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({
      status: 'cancelled',
      scoredCases: 1,
      passedCases: 1,
      pendingCases: 2,
      totalCases: 3,
    });
    expect(cancelled.body.completedAt).not.toBeNull();
    expect((await runRows([e.candidateRunId, e.productionRunId])).map((r) => r.status)).toEqual([
      'cancelled',
      'cancelled',
    ]);
    await drain();
    const after = (await f.editor.call('GET', evalPath(f.org.id, e.id))).body;
    expect(after).toMatchObject({ status: 'cancelled', scoredCases: 1, pendingCases: 2 });
    const again = await f.editor.call('POST', evalPath(f.org.id, e.id, '/cancel'));
    expect(again.status).toBe(409);
    expect(again.body.error.details.state).toBe('cancelled');

    // Retrying the cancelled candidate side re-runs only its unfinished cases.
    const retried = await f.editor.call('POST', evalPath(f.org.id, e.id, '/retry'), { body: { side: 'candidate' } });
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ status: 'running', scoredCases: 1, pendingCases: 2 });
    expect(retried.body.production.status).toBe('cancelled');
  });

  it('archiving the prompt cancels its unfinished evaluations (nothing more runs or is charged); finished ones stay', async () => {
    const f = await comparisonFixture({ cases: 3 });
    const done = (await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' } })).body;
    await drain();
    expect((await f.editor.call('GET', evalPath(f.org.id, done.id))).body.status).toBe('completed');
    const v3 = await saveVersion(f.editor, f.org.id, f.prompt.id, 'Answer in one sentence.');
    const open = (await f.editor.call('POST', f.evals, { body: { versionId: v3.id, scope: 'quick' } })).body;
    expect(open.status).toMatch(/pending|running/);

    expect((await f.editor.call('POST', `${f.base}/archive`)).status).toBe(200);
    expect((await f.editor.call('GET', evalPath(f.org.id, open.id))).body).toMatchObject({
      status: 'cancelled',
      pendingCases: 3,
    });
    await drain();
    const after = await runRows([open.candidateRunId]);
    expect(after.map((r) => r.status)).toEqual(['cancelled']);
    expect((await resultRows(open.candidateRunId)).filter((r) => r.charged || r.status !== 'pending')).toEqual([]);
    expect((await f.editor.call('GET', evalPath(f.org.id, done.id))).body.status).toBe('completed');
    expect(await auditOps(f.org.id)).toEqual(expect.arrayContaining(['evaluation.cancel']));
  });

  it('paused evaluations resume (202) when eligible, and only then', async () => {
    const f = await comparisonFixture({ cases: 2 });
    const e = (await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' } })).body;
    await pause(e.id);
    const paused = await f.editor.call('GET', evalPath(f.org.id, e.id));
    expect(paused.body.status).toBe('paused');
    const resumed = await f.editor.call('POST', evalPath(f.org.id, e.id, '/resume'));
    expect(resumed.status).toBe(202);
    expect(resumed.body.status).toBe('running');
    expect((await runRows([e.candidateRunId, e.productionRunId])).map((r) => r.status)).toEqual(['pending', 'pending']);
    await drain();
    expect((await f.editor.call('GET', evalPath(f.org.id, e.id))).body.status).toBe('completed');
  });

  it('a paused comprehensive evaluation after a downgrade to Free: resume is 403 plan_required', async () => {
    const f = await comparisonFixture({ cases: 2 });
    const db = await getDb();
    await setPlan(f.org.id, 'pro');
    const e = (await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'comprehensive' } })).body;
    await pause(e.id);
    await setPlan(f.org.id, 'free');
    const refused = await f.editor.call('POST', evalPath(f.org.id, e.id, '/resume'));
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('plan_required');
    const [row] = await db.select().from(evaluations).where(eq(evaluations.id, e.id));
    expect(row.status).toBe('paused');
  });
});
