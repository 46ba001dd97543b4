import { describe, expect, it } from 'vitest';
import { call, newOrganization, newUser } from '../helpers/api';
import { caller, rejection } from '../helpers/trpc';
import { auditOps, comparisonFixture, evaluationRows, setReadOnly } from '../helpers/evals';

describe('evaluations: roles, organizations, read-only', () => {
  it('viewers read but cannot start, initialize, cancel, resume, retry or review (403 forbidden)', async () => {
    const f = await comparisonFixture({ cases: 1 });
    const e = (await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' } })).body;
    const evalBase = `/organizations/${f.org.id}/evals/${e.id}`;
    const writes: [string, unknown][] = [
      [f.evals, { versionId: f.v2.id, scope: 'quick', rerunBoth: true }],
      [`${f.base}/initialize`, { draftRevision: 0, scoringMethod: 'expected' }],
      [`${evalBase}/cancel`, undefined],
      [`${evalBase}/resume`, undefined],
      [`${evalBase}/retry`, { side: 'candidate' }],
      [`${evalBase}/reviews`, { reviews: [{ resultId: 'res_x', decision: 'mark_correct' }] }],
    ];
    for (const [path, body] of writes) {
      const refused = await f.viewer.call('POST', path, { body });
      expect(refused.status, path).toBe(403);
      expect(refused.body.error.code, path).toBe('forbidden');
    }
    expect((await f.viewer.call('GET', `${evalBase}`)).status).toBe(200);
    expect((await f.viewer.call('GET', `${evalBase}/results`)).status).toBe(200);
    expect((await f.viewer.call('GET', f.evals)).status).toBe(200);
    const estimate = await f.viewer.call('GET', `${f.evals}/estimate`, { query: `versionId=${f.v2.id}&scope=quick` });
    expect(estimate.body).toMatchObject({ allowed: false, reason: 'forbidden' });
    // The admin can do what the editor can.
    expect((await f.admin.call('POST', `${evalBase}/cancel`)).status).toBe(200);
    expect((await evaluationRows(f.prompt.id)).length).toBe(1);

    const trpc = await caller(f.viewer.id);
    const refused = await rejection(
      trpc.evals.start({ organizationId: f.org.id, promptId: f.prompt.id, versionId: f.v2.id, scope: 'quick' }),
    );
    expect(refused.cause.code).toBe('forbidden');
  });

  it('another organization’s evaluations, prompts and results look missing (404)', async () => {
    const f = await comparisonFixture({ cases: 1 });
    const e = (await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' } })).body;
    const stranger = await newUser();
    const strangerOrg = await newOrganization(stranger);
    const paths: [string, string, unknown?][] = [
      ['GET', `/organizations/${f.org.id}/evals/${e.id}`],
      ['GET', `/organizations/${f.org.id}/evals/${e.id}/results`],
      ['GET', f.evals],
      ['POST', f.evals, { versionId: f.v2.id, scope: 'quick', rerunBoth: true }],
      ['POST', `/organizations/${f.org.id}/evals/${e.id}/cancel`],
      // Their own organization in the path, our evaluation id: still missing.
      ['GET', `/organizations/${strangerOrg.id}/evals/${e.id}`],
      ['POST', `/organizations/${strangerOrg.id}/evals/${e.id}/cancel`],
      ['GET', `/organizations/${strangerOrg.id}/evals/${e.id}/results`],
      ['POST', `/organizations/${strangerOrg.id}/prompts/${f.prompt.id}/evals`, { versionId: f.v2.id, scope: 'quick' }],
    ];
    for (const [method, path, body] of paths) {
      const refused = await stranger.call(method, path, { body });
      expect(refused.status, `${method} ${path}`).toBe(404);
      expect(refused.body.error.code).toBe('not_found');
    }
    const got = await f.editor.call('GET', `/organizations/${f.org.id}/evals/${e.id}`);
    expect(got.body.status).toBe('pending');
    expect((await evaluationRows(f.prompt.id)).length).toBe(1);

    const trpc = await caller(stranger.id);
    const missing = await rejection(trpc.evals.get({ organizationId: f.org.id, evaluationId: e.id }));
    expect(missing.cause.code).toBe('not_found');
  });

  it('a read-only organization refuses every evaluation write with 403 read_only', async () => {
    const f = await comparisonFixture({ cases: 1 });
    const e = (await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' } })).body;
    await setReadOnly(f.org.id, true);
    for (const [path, body] of [
      [f.evals, { versionId: f.v2.id, scope: 'quick', rerunBoth: true }],
      [`/organizations/${f.org.id}/evals/${e.id}/cancel`, undefined],
      [`/organizations/${f.org.id}/evals/${e.id}/retry`, { side: 'candidate' }],
    ] as [string, unknown][]) {
      const refused = await f.editor.call('POST', path, { body });
      expect(refused.status, path).toBe(403);
      expect(refused.body.error.code).toBe('read_only');
    }
    expect((await f.editor.call('GET', `/organizations/${f.org.id}/evals/${e.id}`)).body.status).toBe('pending');
    expect(await auditOps(f.org.id)).toEqual(['evaluation.start']);
  });

  it('no token is 401 before anything else', async () => {
    const f = await comparisonFixture({ cases: 1 });
    const anonymous = await call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' } });
    expect(anonymous.status).toBe(401);
    expect(await evaluationRows(f.prompt.id)).toEqual([]);
  });
});
