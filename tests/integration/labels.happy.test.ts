import { describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { auditLog, promptLabelHistory } from '@/db/schema';
import { newTeam } from '../helpers/api';
import { caller } from '../helpers/trpc';
import { insertEvaluation, promptWithVersions } from '../helpers/prompts';

describe('labels', () => {
  it('move, then roll back: labels, prompt JSON, version labels and history follow at once', async () => {
    const { org, admin, editor, viewer } = await newTeam();
    const { base, ids, prompt } = await promptWithVersions(admin, org.id, 3);
    const [v1, , v3] = ids;

    const moved = await editor.call('PUT', `${base}/labels/production`, { body: { versionId: v3 } });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body).toEqual({
      label: 'production',
      versionId: v3,
      version: 3,
      updatedAt: expect.any(String),
      updatedBy: editor.id,
      splitId: null,
      split: null,
    });
    const promptJson = (await viewer.call('GET', base)).body;
    expect(promptJson.productionVersionId).toBe(v3);
    expect(promptJson.labels).toEqual([
      { label: 'production', versionId: v3, version: 3, splitId: null },
      { label: 'staging', versionId: v1, version: 1, splitId: null },
    ]);
    expect((await viewer.call('GET', `${base}/versions/3`)).body.labels).toEqual(['production']);
    expect((await viewer.call('GET', `${base}/versions/1`)).body.labels).toEqual(['staging']);

    const rolledBack = await admin.call('PUT', `${base}/labels/production`, { body: { versionId: v1 } });
    expect(rolledBack.body).toMatchObject({ label: 'production', versionId: v1, version: 1, updatedBy: admin.id });
    expect((await viewer.call('GET', base)).body.productionVersionId).toBe(v1);

    const labels = await viewer.call('GET', `${base}/labels`);
    expect(labels.status).toBe(200);
    expect(labels.body.items.map((l: { label: string; version: number }) => [l.label, l.version])).toEqual([
      ['production', 1],
      ['staging', 1],
    ]);

    const history = await viewer.call('GET', `${base}/label-history`, { query: 'label=production' });
    expect(history.body.items).toEqual([
      {
        promptId: prompt.id,
        label: 'production',
        fromVersionId: v3,
        toVersionId: v1,
        fromVersion: 3,
        toVersion: 1,
        userId: admin.id,
        clientId: 'promptloop-cli',
        evaluationId: null,
        at: expect.any(String),
        source: 'move',
        toSplit: null,
        fromSplit: null,
        override: null,
      },
      {
        promptId: prompt.id,
        label: 'production',
        fromVersionId: v1,
        toVersionId: v3,
        fromVersion: 1,
        toVersion: 3,
        userId: editor.id,
        clientId: 'promptloop-cli',
        evaluationId: null,
        at: expect.any(String),
        source: 'move',
        toSplit: null,
        fromSplit: null,
        override: null,
      },
      expect.objectContaining({
        label: 'production',
        fromVersionId: null,
        toVersionId: v1,
        evaluationId: expect.stringMatching(/^eval_/),
        source: 'move',
      }),
    ]);
    expect(history.body.nextCursor).toBeNull();

    const db = await getDb();
    const audits = await db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.targetId, prompt.id), eq(auditLog.operation, 'label.move')));
    expect(audits).toHaveLength(2);
  });

  it('a new label is created with a history row from null; moving to the same version is a no-op', async () => {
    const { org, admin } = await newTeam();
    const { base, ids } = await promptWithVersions(admin, org.id, 2);
    const created = await admin.call('PUT', `${base}/labels/canary-2`, { body: { versionId: ids[1] } });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ label: 'canary-2', versionId: ids[1], version: 2 });
    const same = await admin.call('PUT', `${base}/labels/canary-2`, { body: { versionId: ids[1] } });
    expect(same.status).toBe(200);
    expect(same.body).toEqual(created.body);
    const history = (await admin.call('GET', `${base}/label-history`, { query: 'label=canary-2' })).body.items;
    expect(history).toHaveLength(1);
    expect(history[0]).toMatchObject({ fromVersionId: null, toVersionId: ids[1], fromVersion: null, toVersion: 2 });
  });

  it('remove: 204, history row to null, the label is gone; production cannot be removed', async () => {
    const { org, admin, editor } = await newTeam();
    const { base, ids } = await promptWithVersions(admin, org.id, 1);
    const removed = await editor.call('DELETE', `${base}/labels/staging`);
    expect(removed.status).toBe(204);
    expect(removed.body).toBeNull();
    expect((await admin.call('GET', `${base}/labels`)).body.items.map((l: { label: string }) => l.label)).toEqual([
      'production',
    ]);
    expect((await admin.call('GET', base)).body.labels.map((l: { label: string }) => l.label)).toEqual(['production']);
    const history = (await admin.call('GET', `${base}/label-history`, { query: 'label=staging' })).body.items;
    expect(history[0]).toMatchObject({
      label: 'staging',
      fromVersionId: ids[0],
      toVersionId: null,
      fromVersion: 1,
      toVersion: null,
      userId: editor.id,
    });

    const again = await editor.call('DELETE', `${base}/labels/staging`);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('not_found');
    const production = await editor.call('DELETE', `${base}/labels/production`);
    expect(production.status).toBe(409);
    expect(production.body.error).toMatchObject({
      code: 'invalid_state',
      details: { state: 'active', label: 'production' },
    });

    // A removed label can be set again.
    expect((await editor.call('PUT', `${base}/labels/staging`, { body: { versionId: ids[0] } })).status).toBe(200);
  });

  it('an evaluationId naming a completed comparison of that version is recorded in the history', async () => {
    const { org, admin } = await newTeam();
    const { base, ids, prompt } = await promptWithVersions(admin, org.id, 2);
    const evaluationId = await insertEvaluation({
      organizationId: org.id,
      promptId: prompt.id,
      versionId: ids[1],
      createdBy: admin.id,
    });
    const moved = await admin.call('PUT', `${base}/labels/production`, { body: { versionId: ids[1], evaluationId } });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    const [latest] = (await admin.call('GET', `${base}/label-history`)).body.items;
    expect(latest).toMatchObject({ label: 'production', fromVersionId: ids[0], toVersionId: ids[1], evaluationId });
  });

  it('10 concurrent moves of production (by two users): exactly 10 history rows chaining from → to; the label ends at the last row’s target', async () => {
    const { org, admin, editor } = await newTeam();
    const { base, ids, prompt } = await promptWithVersions(admin, org.id, 11);
    const results = await Promise.all(
      ids
        .slice(1)
        .map((versionId, i) =>
          (i % 2 ? admin : editor).call('PUT', `${base}/labels/production`, { body: { versionId } }),
        ),
    );
    for (const r of results) expect(r.status, JSON.stringify(r.body)).toBe(200);

    const db = await getDb();
    const rows = await db
      .select()
      .from(promptLabelHistory)
      .where(and(eq(promptLabelHistory.promptId, prompt.id), eq(promptLabelHistory.label, 'production')))
      .orderBy(promptLabelHistory.id);
    // The baseline's row, then exactly one per move.
    expect(rows).toHaveLength(11);
    for (let i = 1; i < rows.length; i++) expect(rows[i].fromVersionId).toBe(rows[i - 1].toVersionId);
    const last = rows[10].toVersionId;
    expect(
      (await admin.call('GET', `${base}/labels`)).body.items.find((l: { label: string }) => l.label === 'production')
        .versionId,
    ).toBe(last);
    expect((await admin.call('GET', base)).body.productionVersionId).toBe(last);
  });

  it('concurrent moves that repeat targets stay chained (a move to the current version writes nothing)', async () => {
    const { org, admin } = await newTeam();
    const { base, ids, prompt } = await promptWithVersions(admin, org.id, 3);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        admin.call('PUT', `${base}/labels/production`, { body: { versionId: ids[i % 3] } }),
      ),
    );
    for (const r of results) expect(r.status, JSON.stringify(r.body)).toBe(200);
    const db = await getDb();
    const rows = await db
      .select()
      .from(promptLabelHistory)
      .where(and(eq(promptLabelHistory.promptId, prompt.id), eq(promptLabelHistory.label, 'production')))
      .orderBy(promptLabelHistory.id);
    for (let i = 1; i < rows.length; i++) {
      expect(rows[i].fromVersionId).toBe(rows[i - 1].toVersionId);
      expect(rows[i].toVersionId).not.toBe(rows[i].fromVersionId);
    }
    expect((await admin.call('GET', base)).body.productionVersionId).toBe(rows[rows.length - 1].toVersionId);
  });

  it('10 concurrent first moves of a new label: one creates it (from null), exactly 10 history rows, chained', async () => {
    const { org, admin } = await newTeam();
    const { base, ids, prompt } = await promptWithVersions(admin, org.id, 11);
    const results = await Promise.all(
      ids.slice(1).map((versionId) => admin.call('PUT', `${base}/labels/candidate`, { body: { versionId } })),
    );
    for (const r of results) expect(r.status, JSON.stringify(r.body)).toBe(200);
    const db = await getDb();
    const rows = await db
      .select()
      .from(promptLabelHistory)
      .where(and(eq(promptLabelHistory.promptId, prompt.id), eq(promptLabelHistory.label, 'candidate')))
      .orderBy(promptLabelHistory.id);
    expect(rows).toHaveLength(10);
    expect(rows[0].fromVersionId).toBeNull();
    for (let i = 1; i < rows.length; i++) expect(rows[i].fromVersionId).toBe(rows[i - 1].toVersionId);
    expect(new Set(rows.map((r) => r.toVersionId)).size).toBe(10);
    const label = (await admin.call('GET', `${base}/labels`)).body.items.find(
      (l: { label: string }) => l.label === 'candidate',
    );
    expect(label.versionId).toBe(rows[9].toVersionId);
  });

  it('history pages newest first with limit and cursor, across labels', async () => {
    const { org, admin } = await newTeam();
    const { base, ids } = await promptWithVersions(admin, org.id, 3);
    for (const versionId of [ids[1], ids[2], ids[0], ids[2]]) {
      expect((await admin.call('PUT', `${base}/labels/staging`, { body: { versionId } })).status).toBe(200);
    }
    // 2 baseline rows + 4 moves.
    const all = (await admin.call('GET', `${base}/label-history`)).body.items;
    expect(all).toHaveLength(6);
    const paged: unknown[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: { status: number; body: { items: unknown[]; nextCursor: string | null } } = await admin.call(
        'GET',
        `${base}/label-history`,
        {
          query: `limit=4${cursor ? `&cursor=${cursor}` : ''}`,
        },
      );
      expect(page.status).toBe(200);
      paged.push(...page.body.items);
      cursor = page.body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(2);
    expect(paged).toEqual(all);
    const staging = (await admin.call('GET', `${base}/label-history`, { query: 'label=staging&limit=2' })).body;
    expect(staging.items.map((i: { toVersion: number }) => i.toVersion)).toEqual([3, 1]);
    const rest = (
      await admin.call('GET', `${base}/label-history`, { query: `label=staging&cursor=${staging.nextCursor}` })
    ).body;
    expect(rest.items.map((i: { toVersion: number }) => i.toVersion)).toEqual([3, 2, 1]);
    expect(rest.nextCursor).toBeNull();
    expect((await admin.call('GET', `${base}/label-history`, { query: 'label=nothing-here' })).body).toEqual({
      items: [],
      nextCursor: null,
    });
  });

  it('tRPC: labels, moveLabel, removeLabel and history', async () => {
    const { org, admin } = await newTeam();
    const { ids, prompt } = await promptWithVersions(admin, org.id, 2);
    const trpc = await caller(admin.id);
    const input = { organizationId: org.id, promptId: prompt.id };
    const moved = await trpc.versions.moveLabel({ ...input, label: 'production', versionId: ids[1] });
    expect(moved).toMatchObject({ label: 'production', versionId: ids[1], version: 2, updatedBy: admin.id });
    expect(await trpc.versions.removeLabel({ ...input, label: 'staging' })).toBeNull();
    expect((await trpc.versions.labels(input)).items.map((l) => l.label)).toEqual(['production']);
    const history = await trpc.versions.history({ ...input, label: 'production', limit: 1 });
    expect(history.items).toEqual([
      expect.objectContaining({ fromVersionId: ids[0], toVersionId: ids[1], clientId: 'dashboard', userId: admin.id }),
    ]);
    expect(history.nextCursor).toEqual(expect.any(String));
    expect((await trpc.versions.history({ ...input, cursor: history.nextCursor! })).items.length).toBeGreaterThan(0);
  });
});
