import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { evalResults, prompts } from '@/db/schema';
import { startFakeProvider, type FakeProvider } from '../helpers/openai-server';
import { newRetrievalKey, retrieve } from '../helpers/retrieval';
import {
  auditOps,
  drain,
  evaluationRows,
  importRows,
  echoRows,
  pause,
  resultRows,
  saveVersion,
  setupFixture,
} from '../helpers/evals';

let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
  process.env.MODEL_ROUTES = JSON.stringify([
    { id: 'fake/flaky', provider: 'fake', name: 'Flaky', baseUrl: fake.baseUrl, modelId: 'flaky' },
  ]);
  process.env.MODEL_RETRY_BASE_MS = '0';
});
afterAll(async () => {
  delete process.env.MODEL_ROUTES;
  delete process.env.MODEL_RETRY_BASE_MS;
  await fake.close();
});

const evalPath = (orgId: string, id: string, rest = '') => `/organizations/${orgId}/evals/${id}${rest}`;

describe('initialize baseline', () => {
  it('the whole path: setup → draft → dataset → initialize → version 1 on staging and production → version 2 → comparison → promote', async () => {
    const f = await setupFixture({ cases: 3 });
    const initialized = await f.editor.call('POST', `${f.base}/initialize`, {
      body: { draftRevision: f.draft.revision, scoringMethod: 'expected' },
    });
    expect(initialized.status).toBe(201);
    expect(initialized.body).toMatchObject({
      kind: 'baseline',
      status: 'pending',
      scope: 'quick',
      versionId: null,
      version: null,
      totalCases: 3,
      datasetSize: 3,
      pendingCases: 3,
      productionRunId: null,
      productionVersionId: null,
      production: null,
      scoring: { method: 'expected' },
    });
    expect((await f.editor.call('GET', `${f.base}/scoring`)).body.method).toBe('expected');
    // An application already asking for production gets 404 until the baseline publishes, then
    // version 1 (on Postgres the 404 is kept in memory: the publish must drop it).
    const key = await newRetrievalKey(f.editor.call, f.base);
    for (let i = 0; i < 3; i++)
      expect((await retrieve(f.prompt.id, key.secret)).body.error.code).toBe('label_not_assigned');
    await drain();
    expect((await retrieve(f.prompt.id, key.secret)).body).toMatchObject({ version: 1, label: 'production' });

    const done = (await f.editor.call('GET', evalPath(f.org.id, initialized.body.id))).body;
    expect(done).toMatchObject({ status: 'completed', scoredCases: 3, passedCases: 3, passRate: 1, version: 1 });
    const prompt = (await f.editor.call('GET', f.base)).body;
    expect(prompt).toMatchObject({ state: 'active', versionCount: 1, productionVersionId: done.versionId });
    expect(prompt.labels.map((l: any) => [l.label, l.version])).toEqual([
      ['production', 1],
      ['staging', 1],
    ]);
    const v1 = (await f.editor.call('GET', `${f.base}/versions/1`)).body;
    expect(v1.content.messages[0].content).toBe('Repeat the question.');
    // Initialize again once active: invalid_state.
    const again = await f.editor.call('POST', `${f.base}/initialize`, {
      body: { draftRevision: f.draft.revision, scoringMethod: 'expected' },
    });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'invalid_state', details: { state: 'active' } });

    const v2 = await saveVersion(f.editor, f.org.id, f.prompt.id, 'Repeat the question exactly.');
    const comparison = await f.editor.call('POST', `${f.base}/evals`, { body: { versionId: v2.id, scope: 'quick' } });
    expect(comparison.status).toBe(201);
    // The baseline run executed exactly version 1's content over the same cases: it is reused as production evidence.
    expect(comparison.body.productionRunId).toBe(done.candidateRunId);
    expect(comparison.body.production).toMatchObject({ reused: true, status: 'completed', passedCases: 3 });
    await drain();
    const compared = (await f.editor.call('GET', evalPath(f.org.id, comparison.body.id))).body;
    expect(compared).toMatchObject({ status: 'completed', passedCases: 3, productionVersion: 1, version: 2 });
    expect(compared.production).toMatchObject({ status: 'completed', passedCases: 3 });

    const moved = await f.editor.call('PUT', `${f.base}/labels/production`, {
      body: { versionId: v2.id, evaluationId: compared.id },
    });
    expect(moved.status).toBe(200);
    const history = (await f.editor.call('GET', `${f.base}/label-history`, { query: 'label=production' })).body.items;
    expect(history[0]).toMatchObject({ toVersionId: v2.id, evaluationId: compared.id });
    expect(await auditOps(f.org.id)).toEqual(['evaluation.initialize', 'evaluation.start']);
  });

  it('refusals: draft_conflict, unrunnable draft, empty dataset, strict body, archived; nothing is created', async () => {
    const f = await setupFixture({ cases: 0 });
    const initialize = (body: unknown) => f.editor.call('POST', `${f.base}/initialize`, { body });
    const stale = await initialize({ draftRevision: f.draft.revision - 1, scoringMethod: 'expected' });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ code: 'draft_conflict', details: { currentRevision: f.draft.revision } });
    const empty = await initialize({ draftRevision: f.draft.revision, scoringMethod: 'expected' });
    expect(empty.status).toBe(409);
    expect(empty.body.error).toMatchObject({ code: 'invalid_state', details: { state: 'empty_dataset' } });
    for (const body of [
      { draftRevision: f.draft.revision },
      { draftRevision: f.draft.revision, scoringMethod: 'vibes' },
      { draftRevision: f.draft.revision, scoringMethod: 'expected', scope: 'quick' },
    ]) {
      expect((await initialize(body)).status).toBe(400);
    }
    // Another user's draft has no message yet: not runnable.
    await importRows(f.editor, f.org.id, f.prompt.id, echoRows(1));
    const admin = await f.admin.call('POST', `${f.base}/initialize`, {
      body: { draftRevision: 0, scoringMethod: 'expected' },
    });
    expect(admin.status).toBe(409);
    expect(admin.body.error).toMatchObject({ code: 'invalid_state', details: { state: 'draft_not_runnable' } });
    expect(await evaluationRows(f.prompt.id)).toEqual([]);
    expect((await f.editor.call('POST', `${f.base}/archive`)).status).toBe(200);
    const archived = await initialize({ draftRevision: f.draft.revision, scoringMethod: 'expected' });
    expect(archived.status).toBe(409);
    expect(archived.body.error.details.state).toBe('archived');
    expect(await evaluationRows(f.prompt.id)).toEqual([]);
    expect(await auditOps(f.org.id)).toEqual([]);
  });

  it('one baseline at a time: the same snapshot returns it, another is baseline_in_progress; publishing waits for the last review', async () => {
    const f = await setupFixture({ cases: 2 });
    const first = await f.editor.call('POST', `${f.base}/initialize`, {
      body: { draftRevision: f.draft.revision, scoringMethod: 'review' },
    });
    expect(first.status).toBe(201);
    const same = await f.editor.call('POST', `${f.base}/initialize`, {
      body: { draftRevision: f.draft.revision, scoringMethod: 'review' },
    });
    expect(same.status).toBe(201);
    expect(same.body.id).toBe(first.body.id);
    const other = await f.editor.call('POST', `${f.base}/initialize`, {
      body: { draftRevision: f.draft.revision, scoringMethod: 'expected' },
    });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({
      code: 'invalid_state',
      details: { state: 'baseline_in_progress', evaluationId: first.body.id },
    });

    await drain();
    const waiting = (await f.editor.call('GET', evalPath(f.org.id, first.body.id))).body;
    expect(waiting).toMatchObject({ status: 'completed', pendingReviewCases: 2, versionId: null });
    expect((await f.editor.call('GET', f.base)).body.state).toBe('setup');
    // Still in progress while it awaits review.
    expect(
      (
        await f.editor.call('POST', `${f.base}/initialize`, {
          body: { draftRevision: f.draft.revision, scoringMethod: 'expected' },
        })
      ).status,
    ).toBe(409);

    const results = (await f.editor.call('GET', evalPath(f.org.id, first.body.id, '/results'))).body.items;
    const partial = await f.editor.call('POST', evalPath(f.org.id, first.body.id, '/reviews'), {
      body: { reviews: [{ resultId: results[0].id, decision: 'mark_correct' }] },
    });
    expect(partial.body.pendingReviewCases).toBe(1);
    expect((await f.editor.call('GET', f.base)).body.state).toBe('setup');
    // The last review lands: version 1 is published in the same transaction (a failed case does not block it).
    const last = await f.editor.call('POST', evalPath(f.org.id, first.body.id, '/reviews'), {
      body: { reviews: [{ resultId: results[1].id, decision: 'mark_incorrect' }] },
    });
    expect(last.status).toBe(200);
    expect(last.body).toMatchObject({ pendingReviewCases: 0, scoredCases: 2, passedCases: 1, version: 1 });
    expect((await f.editor.call('GET', f.base)).body).toMatchObject({ state: 'active', versionCount: 1 });
  });

  it('a baseline awaiting review can be cancelled: its reviews are refused, it never publishes, and another snapshot may start', async () => {
    const f = await setupFixture({ cases: 2 });
    const first = (
      await f.editor.call('POST', `${f.base}/initialize`, {
        body: { draftRevision: f.draft.revision, scoringMethod: 'review' },
      })
    ).body;
    await drain();
    expect((await f.editor.call('GET', evalPath(f.org.id, first.id))).body).toMatchObject({
      status: 'completed',
      pendingReviewCases: 2,
    });
    const cancelled = await f.editor.call('POST', evalPath(f.org.id, first.id, '/cancel'));
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', versionId: null });
    // Cancelling again: nothing is pending any more.
    const again = await f.editor.call('POST', evalPath(f.org.id, first.id, '/cancel'));
    expect(again.status).toBe(409);
    expect(again.body.error.details.state).toBe('cancelled');
    // What awaited review stays unreviewed: a review is refused, records nothing and publishes nothing.
    const datasetRevision = (await f.editor.call('GET', `${f.base}/dataset`)).body.revision;
    const results = (await f.editor.call('GET', evalPath(f.org.id, first.id, '/results'))).body.items;
    const reviewed = await f.editor.call('POST', evalPath(f.org.id, first.id, '/reviews'), {
      body: { reviews: results.map((r: { id: string }) => ({ resultId: r.id, decision: 'accept_generated' })) },
    });
    expect(reviewed.status).toBe(409);
    expect(reviewed.body.error).toMatchObject({ code: 'invalid_state', details: { state: 'cancelled' } });
    const after = (await f.editor.call('GET', evalPath(f.org.id, first.id, '/results'))).body.items;
    expect(after.map((r: { status: string; review: unknown }) => [r.status, r.review])).toEqual([
      ['pending_review', null],
      ['pending_review', null],
    ]);
    expect((await f.editor.call('GET', evalPath(f.org.id, first.id))).body).toMatchObject({
      status: 'cancelled',
      pendingReviewCases: 2,
      versionId: null,
    });
    expect((await f.editor.call('GET', `${f.base}/dataset`)).body.revision).toBe(datasetRevision);
    expect((await f.editor.call('GET', f.base)).body).toMatchObject({ state: 'setup', versionCount: 0 });

    const second = await f.editor.call('POST', `${f.base}/initialize`, {
      body: { draftRevision: f.draft.revision, scoringMethod: 'expected' },
    });
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    await drain();
    expect((await f.editor.call('GET', f.base)).body.state).toBe('active');
  });

  it('a completed evaluation with nothing awaiting review cannot be cancelled', async () => {
    const f = await setupFixture({ cases: 1 });
    const first = (
      await f.editor.call('POST', `${f.base}/initialize`, {
        body: { draftRevision: f.draft.revision, scoringMethod: 'expected' },
      })
    ).body;
    await drain();
    const refused = await f.editor.call('POST', evalPath(f.org.id, first.id, '/cancel'));
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'invalid_state', details: { state: 'completed' } });
    expect((await f.editor.call('GET', evalPath(f.org.id, first.id))).body.status).toBe('completed');
  });

  it('a cancelled baseline never publishes and cannot be retried; a new initialize may start', async () => {
    const f = await setupFixture({ cases: 2 });
    const first = (
      await f.editor.call('POST', `${f.base}/initialize`, {
        body: { draftRevision: f.draft.revision, scoringMethod: 'expected' },
      })
    ).body;
    const cancelled = await f.editor.call('POST', evalPath(f.org.id, first.id, '/cancel'));
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    await drain();
    expect((await f.editor.call('GET', f.base)).body.state).toBe('setup');
    const retry = await f.editor.call('POST', evalPath(f.org.id, first.id, '/retry'), { body: { side: 'candidate' } });
    expect(retry.status).toBe(409);
    const production = await f.editor.call('POST', evalPath(f.org.id, first.id, '/retry'), {
      body: { side: 'production' },
    });
    expect(production.status).toBe(409);
    expect(production.body.error.details.state).toBe('no_production_side');

    const second = await f.editor.call('POST', `${f.base}/initialize`, {
      body: { draftRevision: f.draft.revision, scoringMethod: 'expected' },
    });
    expect(second.status).toBe(201);
    expect(second.body.id).not.toBe(first.id);
    await drain();
    expect((await f.editor.call('GET', f.base)).body.state).toBe('active');
    expect((await f.editor.call('GET', evalPath(f.org.id, first.id))).body.status).toBe('cancelled');
  });

  it('a failed side (provider errors) is retried with the same frozen inputs and then publishes', async () => {
    const f = await setupFixture({ cases: 2 });
    const path = `/organizations/${f.org.id}/prompts/${f.prompt.id}/draft`;
    const draft = await f.editor.call('PUT', path, {
      body: {
        content: {
          messages: [{ role: 'system', content: 'Repeat.' }],
          inputType: 'user_message',
          modelRouteId: 'fake/flaky',
        },
        revision: f.draft.revision,
      },
    });
    expect(draft.status).toBe(200);
    fake.script([{ kind: 'status', status: 400, body: '{"error":{"message":"bad"}}' }]);
    const e = (
      await f.editor.call('POST', `${f.base}/initialize`, {
        body: { draftRevision: draft.body.revision, scoringMethod: 'expected' },
      })
    ).body;
    await drain();
    const failed = (await f.editor.call('GET', evalPath(f.org.id, e.id))).body;
    expect(failed).toMatchObject({ status: 'failed', errorCases: 2 });
    expect((await f.editor.call('GET', f.base)).body.state).toBe('setup');

    fake.script([
      { kind: 'ok', text: 'case 1' },
      { kind: 'ok', text: 'case 2' },
    ]);
    const retried = await f.editor.call('POST', evalPath(f.org.id, e.id, '/retry'), { body: { side: 'candidate' } });
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ status: 'running', errorCases: 0, pendingCases: 2 });
    await drain();
    const done = (await f.editor.call('GET', evalPath(f.org.id, e.id))).body;
    expect(done.status).toBe('completed');
    expect(done.errorCases).toBe(0);
    expect(fake.requests.every((r) => r.body.messages[0].content === 'Repeat.')).toBe(true);
    const db = await getDb();
    const [row] = await db.select().from(prompts).where(eq(prompts.id, f.prompt.id));
    expect(row.state).toBe('active');
    expect(await auditOps(f.org.id)).toEqual(['evaluation.initialize', 'evaluation.retry']);
  });

  it('a paused baseline resumes and publishes', async () => {
    const f = await setupFixture({ cases: 2 });
    const e = (
      await f.editor.call('POST', `${f.base}/initialize`, {
        body: { draftRevision: f.draft.revision, scoringMethod: 'expected' },
      })
    ).body;
    await pause(e.id);
    await drain();
    const rows = await resultRows(e.candidateRunId);
    expect(rows.every((r) => r.status === 'pending')).toBe(true);
    const resumed = await f.editor.call('POST', evalPath(f.org.id, e.id, '/resume'));
    expect(resumed.status).toBe(202);
    await drain();
    expect((await f.editor.call('GET', f.base)).body.state).toBe('active');
    const db = await getDb();
    const scored = await db.select().from(evalResults).where(eq(evalResults.runId, e.candidateRunId));
    expect(scored.every((r) => r.status === 'scored')).toBe(true);
  });
});
