import { describe, expect, it } from 'vitest';
import { caller } from '../helpers/trpc';
import { comparisonFixture, drain, evaluationRows, setupFixture } from '../helpers/evals';

describe('evaluations never execute twice', () => {
  it('Idempotency-Key: the same body replays the same evaluation; another body is 422', async () => {
    const f = await comparisonFixture({ cases: 2 });
    const headers = { 'idempotency-key': 'start-key-0001' };
    const first = await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' }, headers });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotency-replayed')).toBeNull();
    const replay = await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' }, headers });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    const other = await f.editor.call('POST', f.evals, {
      body: { versionId: f.v2.id, scope: 'quick', rerunBoth: true },
      headers,
    });
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('idempotency_conflict');
    expect(await evaluationRows(f.prompt.id)).toHaveLength(1);
    // After completion the key still replays the original answer.
    await drain();
    const late = await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' }, headers });
    expect(late.headers.get('idempotency-replayed')).toBe('true');
    expect(late.body.id).toBe(first.body.id);
  });

  it('without a key, 5 identical starts racing create one evaluation (and one set of runs)', async () => {
    const f = await comparisonFixture({ cases: 3 });
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' } })),
    );
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201, 201]);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    const rows = await evaluationRows(f.prompt.id);
    expect(rows).toHaveLength(1);
    // The same start through the dashboard while it is unfinished returns it as well.
    const trpc = await caller(f.editor.id);
    const again = await trpc.evals.start({
      organizationId: f.org.id,
      promptId: f.prompt.id,
      versionId: f.v2.id,
      scope: 'quick',
    });
    expect(again.id).toBe(rows[0].id);
    // A different start (rerunBoth) is a different evaluation; once the first is finished, the same start runs anew.
    const different = await f.editor.call('POST', f.evals, {
      body: { versionId: f.v2.id, scope: 'quick', rerunBoth: true },
    });
    expect(different.body.id).not.toBe(rows[0].id);
    await drain();
    const later = await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' } });
    expect([rows[0].id, different.body.id]).not.toContain(later.body.id);
    // Another user's identical start is their own evaluation.
    const byAdmin = await f.admin.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' } });
    expect(byAdmin.body.id).not.toBe(later.body.id);
  });

  it('without a key, 5 identical initializes racing create one baseline', async () => {
    const f = await setupFixture({ cases: 2 });
    const body = { draftRevision: f.draft.revision, scoringMethod: 'review' };
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => f.editor.call('POST', `${f.base}/initialize`, { body })),
    );
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201, 201]);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect(await evaluationRows(f.prompt.id)).toHaveLength(1);
    // With a key: replayed, and a different body is 422.
    const headers = { 'idempotency-key': 'init-key-0001' };
    const keyed = await f.editor.call('POST', `${f.base}/initialize`, { body, headers });
    expect(keyed.body.id).toBe(answers[0].body.id);
    const replay = await f.editor.call('POST', `${f.base}/initialize`, { body, headers });
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    const conflict = await f.editor.call('POST', `${f.base}/initialize`, {
      body: { ...body, scoringMethod: 'expected' },
      headers,
    });
    expect(conflict.status).toBe(422);
    expect(await evaluationRows(f.prompt.id)).toHaveLength(1);
  });
});
