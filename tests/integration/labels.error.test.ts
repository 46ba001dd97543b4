import { describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { promptLabelHistory, promptLabels } from '@/db/schema';
import { newId } from '@/server/ids';
import { newOrganization, newTeam, newUser } from '../helpers/api';
import { createPrompt, insertEvaluation, promptWithVersions } from '../helpers/prompts';

function expectError(result: { status: number; body: any }, status: number, code: string) {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.body.error.code).toBe(code);
}

async function historyCount(promptId: string) {
  const db = await getDb();
  return (await db.select().from(promptLabelHistory).where(eq(promptLabelHistory.promptId, promptId))).length;
}

describe('label errors', () => {
  it('label names outside the pattern are 400 on move, remove and the history filter', async () => {
    const { org, admin } = await newTeam();
    const { base, ids, prompt } = await promptWithVersions(admin, org.id, 1);
    for (const label of ['Production', '-staging', 'staging-', 'a_b', 'a'.repeat(65), 'caf%C3%A9', 'a%20b']) {
      expectError(
        await admin.call('PUT', `${base}/labels/${label}`, { body: { versionId: ids[0] } }),
        400,
        'invalid_request',
      );
      expectError(await admin.call('DELETE', `${base}/labels/${label}`), 400, 'invalid_request');
    }
    expect((await admin.call('PUT', `${base}/labels/${'a'.repeat(64)}`, { body: { versionId: ids[0] } })).status).toBe(
      200,
    );
    expect((await admin.call('PUT', `${base}/labels/7`, { body: { versionId: ids[0] } })).status).toBe(200);
    expectError(await admin.call('GET', `${base}/label-history`, { query: 'label=Bad' }), 400, 'invalid_request');
    expect(await historyCount(prompt.id)).toBe(4);
  });

  it('a prompt holds at most 100 labels: the 101st is 409 invalid_state label_limit, existing ones still move', async () => {
    const { org, admin } = await newTeam();
    const { base, ids, prompt } = await promptWithVersions(admin, org.id, 2);
    const db = await getDb();
    // Two labels exist (production, staging); the rest straight into the table, then over HTTP.
    await db.insert(promptLabels).values(
      Array.from({ length: 97 }, (_, i) => ({
        organizationId: org.id,
        promptId: prompt.id,
        label: `bulk-${i}`,
        versionId: ids[0],
        updatedBy: admin.id,
      })),
    );
    expect((await admin.call('PUT', `${base}/labels/the-100th`, { body: { versionId: ids[0] } })).status).toBe(200);
    const history = await historyCount(prompt.id);
    const over = await admin.call('PUT', `${base}/labels/the-101st`, { body: { versionId: ids[0] } });
    expectError(over, 409, 'invalid_state');
    expect(over.body.error.details).toMatchObject({ state: 'label_limit', limit: 100 });
    expect((await admin.call('GET', `${base}/labels`)).body.items).toHaveLength(100);
    expect(await historyCount(prompt.id)).toBe(history);
    // Moving a label that exists needs no room; removing one makes room.
    expect((await admin.call('PUT', `${base}/labels/bulk-0`, { body: { versionId: ids[1] } })).status).toBe(200);
    expect((await admin.call('DELETE', `${base}/labels/bulk-1`)).status).toBe(204);
    expect((await admin.call('PUT', `${base}/labels/the-101st`, { body: { versionId: ids[0] } })).status).toBe(200);
  });

  it('concurrent new labels cannot pass the limit together', async () => {
    const { org, admin } = await newTeam();
    const { base, ids, prompt } = await promptWithVersions(admin, org.id, 1);
    const db = await getDb();
    const existing = (await db.select().from(promptLabels).where(eq(promptLabels.promptId, prompt.id))).length;
    await db.insert(promptLabels).values(
      Array.from({ length: 98 - existing }, (_, i) => ({
        organizationId: org.id,
        promptId: prompt.id,
        label: `bulk-${i}`,
        versionId: ids[0],
        updatedBy: admin.id,
      })),
    );
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        admin.call('PUT', `${base}/labels/race-${i}`, { body: { versionId: ids[0] } }),
      ),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(2);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(4);
    expect((await db.select().from(promptLabels).where(eq(promptLabels.promptId, prompt.id))).length).toBe(100);
  });

  it('bodies and queries are strict', async () => {
    const { org, admin } = await newTeam();
    const { base, ids } = await promptWithVersions(admin, org.id, 1);
    for (const body of [
      {},
      { versionId: ids[0], extra: 1 },
      { versionId: 5 },
      { versionId: '' },
      { versionId: ids[0], evaluationId: null },
    ]) {
      expectError(await admin.call('PUT', `${base}/labels/staging`, { body }), 400, 'invalid_request');
    }
    for (const query of ['label=', 'label=a&label=b', 'limit=0', 'limit=101', 'foo=bar', 'cursor=zz']) {
      expectError(await admin.call('GET', `${base}/label-history`, { query }), 400, 'invalid_request');
    }
    expectError(await admin.call('GET', `${base}/labels`, { query: 'limit=5' }), 400, 'invalid_request');
  });

  it('viewer 403; another organization 404; versions of other prompts or unknown ids 404', async () => {
    const { org, admin, viewer } = await newTeam();
    const { base, ids, prompt } = await promptWithVersions(admin, org.id, 2);
    const other = await promptWithVersions(admin, org.id, 1);
    expectError(
      await viewer.call('PUT', `${base}/labels/production`, { body: { versionId: ids[1] } }),
      403,
      'forbidden',
    );
    expectError(await viewer.call('DELETE', `${base}/labels/staging`), 403, 'forbidden');
    expect((await viewer.call('GET', `${base}/labels`)).status).toBe(200);
    expect((await viewer.call('GET', `${base}/label-history`)).status).toBe(200);

    const stranger = await newUser();
    const elsewhere = await newOrganization(stranger);
    for (const path of [
      `${base}/labels`,
      `${base}/label-history`,
      `/organizations/${elsewhere.id}/prompts/${prompt.id}/labels`,
    ]) {
      expectError(await stranger.call('GET', path), 404, 'not_found');
    }
    expectError(
      await stranger.call('PUT', `${base}/labels/production`, { body: { versionId: ids[1] } }),
      404,
      'not_found',
    );
    expectError(await stranger.call('DELETE', `${base}/labels/staging`), 404, 'not_found');

    expectError(
      await admin.call('PUT', `${base}/labels/production`, { body: { versionId: other.ids[0] } }),
      404,
      'not_found',
    );
    expectError(
      await admin.call('PUT', `${base}/labels/production`, { body: { versionId: newId('ver') } }),
      404,
      'not_found',
    );
    expectError(
      await admin.call('PUT', `${base}/labels/production`, { body: { versionId: 'not-an-id' } }),
      404,
      'not_found',
    );
    expectError(await admin.call('DELETE', `${base}/labels/never-set`), 404, 'not_found');
    expect(await historyCount(prompt.id)).toBe(2);
  });

  it('setup prompt: every version id is 404, removing production is 409, unknown labels 404', async () => {
    const { org, admin } = await newTeam();
    const { ids } = await promptWithVersions(admin, org.id, 1);
    const prompt = await createPrompt(admin, org.id, 'Still in setup');
    const base = `/organizations/${org.id}/prompts/${prompt.id}`;
    expectError(
      await admin.call('PUT', `${base}/labels/production`, { body: { versionId: ids[0] } }),
      404,
      'not_found',
    );
    const production = await admin.call('DELETE', `${base}/labels/production`);
    expectError(production, 409, 'invalid_state');
    expect(production.body.error.details.state).toBe('setup');
    expectError(await admin.call('DELETE', `${base}/labels/staging`), 404, 'not_found');
    expect((await admin.call('GET', `${base}/labels`)).body).toEqual({ items: [] });
    expect((await admin.call('GET', `${base}/label-history`)).body).toEqual({ items: [], nextCursor: null });
  });

  it('archived prompt: move and remove are 409 invalid_state; reads still work', async () => {
    const { org, admin } = await newTeam();
    const { base, ids } = await promptWithVersions(admin, org.id, 2);
    expect((await admin.call('POST', `${base}/archive`)).status).toBe(200);
    const moved = await admin.call('PUT', `${base}/labels/production`, { body: { versionId: ids[1] } });
    expectError(moved, 409, 'invalid_state');
    expect(moved.body.error.details).toEqual({ state: 'archived' });
    expectError(await admin.call('DELETE', `${base}/labels/staging`), 409, 'invalid_state');
    expect((await admin.call('GET', `${base}/labels`)).body.items).toHaveLength(2);
  });

  it('an evaluationId must be a completed comparison of this prompt whose candidate is the version', async () => {
    const { org, admin } = await newTeam();
    const { base, ids, prompt } = await promptWithVersions(admin, org.id, 3);
    const other = await promptWithVersions(admin, org.id, 2);
    const move = (evaluationId: string, versionId = ids[1]) =>
      admin.call('PUT', `${base}/labels/production`, { body: { versionId, evaluationId } });
    const evaluation = (values: Partial<Parameters<typeof insertEvaluation>[0]>) =>
      insertEvaluation({
        organizationId: org.id,
        promptId: prompt.id,
        versionId: ids[1],
        createdBy: admin.id,
        ...values,
      });

    expectError(await move(newId('eval')), 404, 'not_found');
    expectError(await move('eval_nope'), 404, 'not_found');
    expectError(
      await move(
        await insertEvaluation({
          organizationId: org.id,
          promptId: other.prompt.id,
          versionId: other.ids[1],
          createdBy: admin.id,
        }),
      ),
      404,
      'not_found',
    );

    for (const status of ['running', 'pending', 'failed', 'cancelled', 'paused']) {
      const refused = await move(await evaluation({ status }));
      expectError(refused, 409, 'invalid_state');
      expect(refused.body.error.details.state).toBe(status);
    }
    const baseline = await move(await evaluation({ kind: 'baseline' }));
    expectError(baseline, 409, 'invalid_state');
    expect(baseline.body.error.details).toMatchObject({ state: 'not_comparison', kind: 'baseline' });
    const mismatch = await move(await evaluation({ versionId: ids[2] }));
    expectError(mismatch, 409, 'invalid_state');
    expect(mismatch.body.error.details).toMatchObject({ state: 'candidate_mismatch', candidateVersionId: ids[2] });

    const db = await getDb();
    const rows = await db
      .select()
      .from(promptLabelHistory)
      .where(and(eq(promptLabelHistory.promptId, prompt.id), eq(promptLabelHistory.label, 'production')));
    expect(rows).toHaveLength(1);
    expect((await admin.call('GET', base)).body.productionVersionId).toBe(ids[0]);
  });
});
