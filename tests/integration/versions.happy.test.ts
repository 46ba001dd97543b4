import { describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { auditLog, promptLabelHistory, promptVersions } from '@/db/schema';
import { runInTransaction } from '@/server/context';
import { newId } from '@/server/ids';
import { publishBaselineVersion } from '@/server/prompts/versions';
import { newTeam } from '../helpers/api';
import { caller, rejection } from '../helpers/trpc';
import { activePrompt, createPrompt, publishBaseline, systemContent, writeDraft } from '../helpers/prompts';

const fullContent = (text: string) => ({
  ...systemContent(text),
  modelRouteId: 'local/echo',
  modelId: 'echo',
  temperature: 1,
  outputSchema: '',
  customMetrics: [],
  tools: [],
  maxOutputTokens: null,
});

describe('publishBaselineVersion', () => {
  it('creates immutable version 1 on staging and production, makes the prompt active, and records the evaluation', async () => {
    const { org, admin } = await newTeam();
    const prompt = await createPrompt(admin, org.id);
    const draft = await writeDraft(admin, org.id, prompt.id, 'Baseline text');
    const v1 = await publishBaseline(admin, org.id, prompt.id);
    expect(v1).toMatchObject({ number: 1, id: expect.stringMatching(/^ver_/) });

    const got = await admin.call('GET', `/organizations/${org.id}/prompts/${prompt.id}`);
    expect(got.body).toMatchObject({ state: 'active', versionCount: 1, productionVersionId: v1.id });
    expect(got.body.labels).toEqual([
      { label: 'production', versionId: v1.id, version: 1, splitId: null },
      { label: 'staging', versionId: v1.id, version: 1, splitId: null },
    ]);

    const version = await admin.call('GET', `/organizations/${org.id}/prompts/${prompt.id}/versions/1`);
    expect(version.status).toBe(200);
    expect(version.body).toEqual({
      id: v1.id,
      promptId: prompt.id,
      number: 1,
      content: fullContent('Baseline text'),
      createdAt: expect.any(String),
      createdBy: admin.id,
      labels: ['production', 'staging'],
    });

    const db = await getDb();
    const [row] = await db.select().from(promptVersions).where(eq(promptVersions.id, v1.id));
    expect(row).toMatchObject({
      draftUserId: admin.id,
      draftRevision: draft.revision,
      sourceEvaluationId: v1.evaluationId,
      createdByClient: 'dashboard',
    });
    const history = await admin.call('GET', `/organizations/${org.id}/prompts/${prompt.id}/label-history`);
    expect(history.body.items).toHaveLength(2);
    for (const item of history.body.items) {
      expect(item).toMatchObject({
        fromVersionId: null,
        toVersionId: v1.id,
        fromVersion: null,
        toVersion: 1,
        evaluationId: v1.evaluationId,
        userId: admin.id,
      });
    }
    const audits = await db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.targetId, prompt.id), eq(auditLog.operation, 'version.publish_baseline')));
    expect(audits).toHaveLength(1);
  });

  it('is idempotent for the same evaluation and refuses another snapshot', async () => {
    const { org, admin } = await newTeam();
    const prompt = await createPrompt(admin, org.id);
    await writeDraft(admin, org.id, prompt.id, 'Baseline');
    const first = await publishBaseline(admin, org.id, prompt.id);
    const db = await getDb();
    const actor = { userId: admin.id, clientId: 'dashboard', human: true };
    const again = await runInTransaction(db, (tx, afterCommit) =>
      publishBaselineVersion(
        { db: tx, afterCommit, actor },
        {
          organizationId: org.id,
          promptId: prompt.id,
          content: first.content,
          draftUserId: admin.id,
          draftRevision: first.draftRevision,
          evaluationId: first.evaluationId,
        },
      ),
    );
    expect(again).toEqual({ id: first.id, number: 1 });

    const other = await runInTransaction(db, (tx, afterCommit) =>
      publishBaselineVersion(
        { db: tx, afterCommit, actor },
        {
          organizationId: org.id,
          promptId: prompt.id,
          content: first.content,
          draftUserId: admin.id,
          draftRevision: first.draftRevision,
          evaluationId: newId('eval'),
        },
      ),
    ).catch((e) => e);
    expect(other).toMatchObject({ code: 'invalid_state', details: { state: 'active' } });

    expect(await db.select().from(promptVersions).where(eq(promptVersions.promptId, prompt.id))).toHaveLength(1);
    expect(await db.select().from(promptLabelHistory).where(eq(promptLabelHistory.promptId, prompt.id))).toHaveLength(
      2,
    );
  });

  it('rolls back with the caller’s transaction', async () => {
    const { org, admin } = await newTeam();
    const prompt = await createPrompt(admin, org.id);
    const db = await getDb();
    const failed = await runInTransaction(db, async (tx, afterCommit) => {
      await publishBaselineVersion(
        { db: tx, afterCommit, actor: { userId: admin.id, clientId: 'dashboard', human: true } },
        {
          organizationId: org.id,
          promptId: prompt.id,
          content: fullContent('x'),
          draftUserId: admin.id,
          draftRevision: 1,
          evaluationId: newId('eval'),
        },
      );
      throw new Error('caller failed later');
    }).catch((e) => e);
    expect(failed.message).toBe('caller failed later');
    const got = await admin.call('GET', `/organizations/${org.id}/prompts/${prompt.id}`);
    expect(got.body).toMatchObject({ state: 'setup', versionCount: 0, productionVersionId: null, labels: [] });
  });
});

describe('save version', () => {
  it('saves the exact draft revision as the next number, records user and client, changes no label, and is audited', async () => {
    const { org, admin, editor } = await newTeam();
    const { prompt, v1, base } = await activePrompt(editor, org.id);
    const draft = await writeDraft(editor, org.id, prompt.id, 'Second take');
    const saved = await editor.call('POST', `${base}/versions`, { body: { draftRevision: draft.revision } });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    expect(saved.body).toEqual({
      id: expect.stringMatching(/^ver_/),
      promptId: prompt.id,
      number: 2,
      content: draft.content,
      createdAt: expect.any(String),
      createdBy: editor.id,
      labels: [],
    });

    const got = (await admin.call('GET', base)).body;
    expect(got).toMatchObject({ versionCount: 2, productionVersionId: v1.id });
    expect(got.labels.map((l: { version: number }) => l.version)).toEqual([1, 1]);

    const db = await getDb();
    const [row] = await db.select().from(promptVersions).where(eq(promptVersions.id, saved.body.id));
    expect(row).toMatchObject({
      createdBy: editor.id,
      createdByClient: 'promptloop-cli',
      draftUserId: editor.id,
      draftRevision: draft.revision,
    });
    const audits = await db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.targetId, prompt.id), eq(auditLog.operation, 'version.save')));
    expect(audits).toHaveLength(1);
    expect(audits[0]).toMatchObject({
      userId: editor.id,
      details: { versionId: saved.body.id, number: 2, draftRevision: draft.revision },
    });

    // A user who never wrote a draft saves revision 0: the latest version's content.
    const fresh = await admin.call('POST', `${base}/versions`, { body: { draftRevision: 0 } });
    expect(fresh.status, JSON.stringify(fresh.body)).toBe(201);
    expect(fresh.body).toMatchObject({ number: 3, content: draft.content });
  });

  it('saving the same draft revision again returns the same version, with or without an Idempotency-Key; once the draft moved on, that revision is stale (409) except for a keyed replay', async () => {
    const { org, admin } = await newTeam();
    const { prompt, base } = await activePrompt(admin, org.id);
    const draft = await writeDraft(admin, org.id, prompt.id, 'Take two');
    const headers = { 'idempotency-key': 'save-version-key-1' };
    const first = await admin.call('POST', `${base}/versions`, { body: { draftRevision: draft.revision }, headers });
    expect(first.status).toBe(201);
    const replay = await admin.call('POST', `${base}/versions`, { body: { draftRevision: draft.revision }, headers });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);

    const again = await admin.call('POST', `${base}/versions`, { body: { draftRevision: draft.revision } });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotency-replayed')).toBeNull();
    expect(again.body.id).toBe(first.body.id);

    const moved = await writeDraft(admin, org.id, prompt.id, 'Take three');
    const late = await admin.call('POST', `${base}/versions`, { body: { draftRevision: draft.revision } });
    expect(late.status).toBe(409);
    expect(late.body.error).toMatchObject({ code: 'draft_conflict', details: { currentRevision: moved.revision } });
    // The keyed replay still answers what it answered first.
    const keyed = await admin.call('POST', `${base}/versions`, { body: { draftRevision: draft.revision }, headers });
    expect(keyed.status).toBe(201);
    expect(keyed.headers.get('idempotency-replayed')).toBe('true');
    expect(keyed.body.id).toBe(first.body.id);
    expect((await admin.call('GET', base)).body.versionCount).toBe(2);
  });

  it('a draft never written since initialize saves as version 1 again, not a copy', async () => {
    const { org, admin } = await newTeam();
    const { base } = await activePrompt(admin, org.id);
    const draft = (await admin.call('GET', `${base}/draft`)).body;
    const fromBaseline = await admin.call('POST', `${base}/versions`, { body: { draftRevision: draft.revision } });
    expect(fromBaseline.status).toBe(201);
    expect(fromBaseline.body.number).toBe(1);
    expect((await admin.call('GET', base)).body.versionCount).toBe(1);
  });

  it('two identical saves racing make one version; different users’ saves racing get distinct numbers', async () => {
    const { org, admin, editor } = await newTeam();
    const { prompt, base } = await activePrompt(admin, org.id);
    const mine = await writeDraft(admin, org.id, prompt.id, 'Mine');
    const theirs = await writeDraft(editor, org.id, prompt.id, 'Theirs');
    const results = await Promise.all([
      ...Array.from({ length: 4 }, () =>
        admin.call('POST', `${base}/versions`, { body: { draftRevision: mine.revision } }),
      ),
      ...Array.from({ length: 4 }, () =>
        editor.call('POST', `${base}/versions`, { body: { draftRevision: theirs.revision } }),
      ),
    ]);
    for (const r of results) expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(new Set(results.slice(0, 4).map((r) => r.body.id)).size).toBe(1);
    expect(new Set(results.slice(4).map((r) => r.body.id)).size).toBe(1);
    expect(new Set(results.map((r) => r.body.number))).toEqual(new Set([2, 3]));
    const db = await getDb();
    expect(await db.select().from(promptVersions).where(eq(promptVersions.promptId, prompt.id))).toHaveLength(3);
    expect((await admin.call('GET', base)).body.versionCount).toBe(3);
  });

  it('lists newest first with limit and cursor; get by number shows its labels', async () => {
    const { org, admin, viewer } = await newTeam();
    const { prompt, base } = await activePrompt(admin, org.id);
    for (let i = 2; i <= 5; i++) {
      const draft = await writeDraft(admin, org.id, prompt.id, `Take ${i}`);
      expect((await admin.call('POST', `${base}/versions`, { body: { draftRevision: draft.revision } })).status).toBe(
        201,
      );
    }
    const all = await viewer.call('GET', `${base}/versions`);
    expect(all.status).toBe(200);
    expect(all.body.items.map((v: { number: number }) => v.number)).toEqual([5, 4, 3, 2, 1]);
    expect(all.body.nextCursor).toBeNull();
    expect(all.body.items[4].labels).toEqual(['production', 'staging']);

    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { items: { number: number }[]; nextCursor: string | null } } = await viewer.call(
        'GET',
        `${base}/versions`,
        {
          query: `limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        },
      );
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.items.map((v) => v.number));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual([5, 4, 3, 2, 1]);

    const third = await viewer.call('GET', `${base}/versions/3`);
    expect(third.body).toMatchObject({
      number: 3,
      content: { messages: [{ role: 'system', content: 'Take 3' }] },
      labels: [],
    });
  });

  it('works through tRPC with the contract’s procedure names', async () => {
    const { org, admin, viewer } = await newTeam();
    const { prompt, v1 } = await activePrompt(admin, org.id);
    const draft = await writeDraft(admin, org.id, prompt.id, 'Via tRPC');
    const trpc = await caller(admin.id);
    const saved = await trpc.versions.save({
      organizationId: org.id,
      promptId: prompt.id,
      draftRevision: draft.revision,
    });
    expect(saved).toMatchObject({ number: 2, createdBy: admin.id, labels: [] });
    expect(
      (await trpc.versions.save({ organizationId: org.id, promptId: prompt.id, draftRevision: draft.revision })).id,
    ).toBe(saved.id);
    const list = await trpc.versions.list({ organizationId: org.id, promptId: prompt.id, limit: 1 });
    expect(list.items.map((v) => v.number)).toEqual([2]);
    expect(list.nextCursor).toEqual(expect.any(String));
    expect((await trpc.versions.get({ organizationId: org.id, promptId: prompt.id, number: 1 })).id).toBe(v1.id);

    const viewerTrpc = await caller(viewer.id);
    const refused = await rejection(
      viewerTrpc.versions.save({ organizationId: org.id, promptId: prompt.id, draftRevision: 0 }),
    );
    expect(refused.code).toBe('FORBIDDEN');
    const missing = await rejection(trpc.versions.get({ organizationId: org.id, promptId: prompt.id, number: 9 }));
    expect(missing.code).toBe('NOT_FOUND');
  });
});
