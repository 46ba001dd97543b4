import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asc, eq, inArray } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { evalResults, webhookDeliveries, webhookEvents } from '@/db/schema';
import { runInTransaction, type Actor } from '@/server/context';
import { saveVersion as saveVersionService } from '@/server/prompts/versions';
import { moveLabel } from '@/server/releases/move-label';
import { refreshEvaluation } from '@/server/evals/engine/progress';
import { raiseWarning, raiseWarnings, resolveWarning } from '@/server/warnings/service';
import { newId } from '@/server/ids';
import { newTeam, type TestUser } from '../helpers/api';
import { activePrompt, writeDraft } from '../helpers/prompts';
import { comparisonFixture, drain, saveVersion, setupFixture } from '../helpers/evals';
import { bundle, bundlePrompt, importBundle } from '../helpers/imports';
import { startFakeProvider, type FakeProvider } from '../helpers/openai-server';

// Events (API.md "Webhooks"): written by the transaction that made the change, one pending
// delivery per enabled endpoint that subscribes to the type, with the payload
// { type, timestamp, organizationId, data } and `data` the resource as the API returns it.
// The delivery worker is another module's: these tests read the outbox rows.

// This file's targets are local (http://127.0.0.1): both settings on, before any config() read.
process.env.WEBHOOK_ALLOW_HTTP = 'true';
process.env.WEBHOOK_ALLOW_PRIVATE = 'true';

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

const hooks = (orgId: string) => `/organizations/${orgId}/webhooks`;

async function subscribe(admin: TestUser, orgId: string, events: string[], url = 'http://127.0.0.1:9/hook') {
  const created = await admin.call('POST', hooks(orgId), { body: { url, events } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.webhook as { id: string };
}

type Delivered = typeof webhookDeliveries.$inferSelect & {
  body: { type: string; timestamp: string; organizationId: string; data: any };
  eventAt: Date;
};

// The endpoint's deliveries, oldest first, with the parsed payload of their event.
async function deliveriesTo(webhookId: string): Promise<Delivered[]> {
  const rows = await (
    await getDb()
  )
    .select({ delivery: webhookDeliveries, payload: webhookEvents.payload, eventAt: webhookEvents.createdAt })
    .from(webhookDeliveries)
    .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
    .where(eq(webhookDeliveries.webhookId, webhookId))
    .orderBy(asc(webhookDeliveries.createdAt), asc(webhookDeliveries.id));
  return rows.map((r) => ({ ...r.delivery, body: JSON.parse(r.payload), eventAt: r.eventAt }));
}

async function eventsOf(organizationId: string) {
  return (await getDb()).select().from(webhookEvents).where(eq(webhookEvents.organizationId, organizationId));
}

// Every delivery is pending and due, and its payload is exactly the four fields.
function expectEnvelope(delivery: Delivered, type: string, organizationId: string) {
  expect(delivery).toMatchObject({ status: 'pending', attempts: 0, type, organizationId });
  expect(delivery.nextAttemptAt).not.toBeNull();
  expect(Object.keys(delivery.body)).toEqual(['type', 'timestamp', 'organizationId', 'data']);
  expect(delivery.body.type).toBe(type);
  expect(delivery.body.organizationId).toBe(organizationId);
  expect(delivery.body.timestamp).toBe(delivery.eventAt.toISOString());
}

const ofType = (deliveries: Delivered[], type: string) => deliveries.filter((d) => d.type === type);

describe('with WEBHOOK_ALLOW_HTTP and WEBHOOK_ALLOW_PRIVATE', () => {
  it('http:// and local targets are accepted (localhost, 127.0.0.1, 10.x, [::1])', async () => {
    const { org, admin } = await newTeam();
    for (const url of ['http://localhost:9/hook', 'http://127.0.0.1:9/', 'https://10.0.0.7/hook', 'http://[::1]:9/'])
      expect((await subscribe(admin, org.id, ['warning.opened'], url)).id).toMatch(/^whk_/);
  });

  it('a name is not looked up when it is saved: one that resolves nowhere is accepted too', async () => {
    const { org, admin } = await newTeam();
    expect((await subscribe(admin, org.id, ['warning.opened'], 'https://no-such-host.invalid/hook')).id).toMatch(
      /^whk_/,
    );
  });
});

describe('prompt.version.created', () => {
  it('baseline version 1 and a saved version: data is what GET …/versions/{n} returns; unsubscribed and disabled endpoints get nothing', async () => {
    const { org, admin } = await newTeam();
    const versions = await subscribe(admin, org.id, ['prompt.version.created']);
    const second = await subscribe(admin, org.id, ['evaluation.completed', 'prompt.version.created']);
    const labelsOnly = await subscribe(admin, org.id, ['prompt.label.moved']);
    const disabled = await subscribe(admin, org.id, ['prompt.version.created', 'prompt.label.moved']);
    expect((await admin.call('PATCH', `${hooks(org.id)}/${disabled.id}`, { body: { enabled: false } })).status).toBe(
      200,
    );

    const { prompt, base } = await activePrompt(admin, org.id);
    const v2 = await saveVersion(admin, org.id, prompt.id, 'Version two.');

    const sent = await deliveriesTo(versions.id);
    expect(sent.map((d) => d.type)).toEqual(['prompt.version.created', 'prompt.version.created']);
    for (const d of sent) expectEnvelope(d, 'prompt.version.created', org.id);
    const v1Read = (await admin.call('GET', `${base}/versions/1`)).body;
    expect(v1Read.labels).toEqual(['production', 'staging']);
    expect(sent[0].body.data).toEqual(v1Read);
    expect(sent[1].body.data).toEqual((await admin.call('GET', `${base}/versions/2`)).body);
    expect(sent[1].body.data.id).toBe(v2.id);
    // The receiver learns which prompt the version belongs to.
    expect(sent.map((d) => d.body.data.promptId)).toEqual([prompt.id, prompt.id]);

    // The same events (one event, one delivery per endpoint) reach the other subscriber.
    const other = await deliveriesTo(second.id);
    expect(other.map((d) => d.eventId)).toEqual(sent.map((d) => d.eventId));
    expect(new Set([...other, ...sent].map((d) => d.id)).size).toBe(4);

    // The label-only endpoint got the baseline's two moves and nothing else; the disabled one nothing.
    expect((await deliveriesTo(labelsOnly.id)).map((d) => d.type)).toEqual([
      'prompt.label.moved',
      'prompt.label.moved',
    ]);
    expect(await deliveriesTo(disabled.id)).toEqual([]);
  });

  it('a replayed save (same draft revision) writes no second event', async () => {
    const { org, admin } = await newTeam();
    const hook = await subscribe(admin, org.id, ['prompt.version.created']);
    const { prompt, base } = await activePrompt(admin, org.id);
    const draft = await writeDraft(admin, org.id, prompt.id, 'Once.');
    const first = await admin.call('POST', `${base}/versions`, { body: { draftRevision: draft.revision } });
    const again = await admin.call('POST', `${base}/versions`, { body: { draftRevision: draft.revision } });
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.body.id).toBe(first.body.id);
    expect((await deliveriesTo(hook.id)).map((d) => d.body.data.number)).toEqual([1, 2]);
  });

  it('no endpoint listening: no event row at all', async () => {
    const { org, admin } = await newTeam();
    await subscribe(admin, org.id, ['warning.opened']);
    const { prompt } = await activePrompt(admin, org.id);
    await saveVersion(admin, org.id, prompt.id, 'Nobody listens.');
    expect(await eventsOf(org.id)).toEqual([]);
  });
});

describe('prompt.label.moved', () => {
  it('moves, splits, rollbacks, overrides and removals: data is the label history item; a no-op move writes nothing', async () => {
    const { org, admin } = await newTeam();
    const hook = await subscribe(admin, org.id, ['prompt.label.moved']);
    const { prompt, base, v1 } = await activePrompt(admin, org.id);
    const v2 = await saveVersion(admin, org.id, prompt.id, 'Two.');
    const v3 = await saveVersion(admin, org.id, prompt.id, 'Three.');

    const put = async (label: string, body: unknown) => {
      const moved = await admin.call('PUT', `${base}/labels/${label}`, { body });
      expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    };
    await put('staging', { versionId: v2.id }); // a move
    await put('staging', { versionId: v2.id }); // no-op: no history, no event
    await put('production', {
      split: [
        { versionId: v2.id, weight: 90 },
        { versionId: v1.id, weight: 10 },
      ],
    }); // a split
    await put('production', { versionId: v1.id }); // a rollback
    await put('canary', { versionId: v3.id, override: { reason: 'Hotfix' } }); // a new label, with an override
    expect((await admin.call('DELETE', `${base}/labels/canary`)).status).toBe(204); // a removal

    const history = (await admin.call('GET', `${base}/label-history`, { query: 'limit=100' })).body.items;
    expect(history).toHaveLength(7); // 2 from the baseline, 5 here
    const sent = await deliveriesTo(hook.id);
    for (const d of sent) expectEnvelope(d, 'prompt.label.moved', org.id);
    // One event per history entry, each equal to it (the history is newest first).
    const byHistory = [...history].reverse();
    const data = sent.map((d) => d.body.data);
    expect(data).toHaveLength(7);
    // Each names the prompt whose label moved.
    expect(new Set(data.map((d) => d.promptId))).toEqual(new Set([prompt.id]));
    // The baseline's two moves share their time; compare them as a set, the rest in order.
    expect(data.slice(0, 2).sort((a, b) => a.label.localeCompare(b.label))).toEqual(
      byHistory.slice(0, 2).sort((a, b) => a.label.localeCompare(b.label)),
    );
    expect(data.slice(2)).toEqual(byHistory.slice(2));
    expect(data.slice(2).map((d) => [d.label, d.toVersion, d.toSplit === null, d.override])).toEqual([
      ['staging', 2, true, null],
      ['production', 2, false, null],
      ['production', 1, true, null],
      ['canary', 3, true, { reason: 'Hotfix' }],
      ['canary', null, true, null],
    ]);
  });
});

describe('an import', () => {
  it('sends prompt.version.created per version and prompt.label.moved per label, as the API returns them; a dry run and a refused import send nothing', async () => {
    const { org, admin, editor } = await newTeam();
    const hook = await subscribe(admin, org.id, ['prompt.version.created', 'prompt.label.moved']);
    const document = bundle([
      bundlePrompt('Imported', {
        labels: [
          { label: 'production', version: 2, split: null },
          { label: 'staging', version: 1, split: null },
        ],
      }),
    ]);
    const dry = await importBundle(editor, org.id, { document, dryRun: true });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    const refused = await importBundle(editor, org.id, {
      document: bundle([bundlePrompt('Refused', { labels: [{ label: 'production', version: 9, split: null }] })]),
    });
    expect(refused.status).toBe(422);
    expect(await deliveriesTo(hook.id)).toEqual([]);

    const imported = await importBundle(editor, org.id, { document });
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
    const base = `/organizations/${org.id}/prompts/${imported.body.prompts[0].promptId}`;
    const sent = await deliveriesTo(hook.id);
    for (const d of sent) expectEnvelope(d, d.type, org.id);
    const versions = await Promise.all(
      [1, 2].map(async (n) => (await editor.call('GET', `${base}/versions/${n}`)).body),
    );
    expect(versions.map((v) => v.labels)).toEqual([['staging'], ['production']]);
    const byNumber = (a: any, b: any) => a.number - b.number;
    expect(
      ofType(sent, 'prompt.version.created')
        .map((d) => d.body.data)
        .sort(byNumber),
    ).toEqual(versions);
    const history = (await editor.call('GET', `${base}/label-history`)).body.items;
    expect(history.map((h: any) => [h.label, h.toVersion, h.source])).toEqual(
      expect.arrayContaining([
        ['production', 2, 'import'],
        ['staging', 1, 'import'],
      ]),
    );
    const byLabel = (a: any, b: any) => a.label.localeCompare(b.label);
    expect(
      ofType(sent, 'prompt.label.moved')
        .map((d) => d.body.data)
        .sort(byLabel),
    ).toEqual([...history].sort(byLabel));
    expect(sent).toHaveLength(4);
  });
});

const evalPath = (orgId: string, id: string) => `/organizations/${orgId}/evals/${id}`;

describe('evaluation.completed and evaluation.failed', () => {
  it('a comparison that completes: one evaluation.completed with the Evaluation; a later no-op refresh adds none', async () => {
    const f = await comparisonFixture({ cases: 2 });
    const hook = await subscribe(f.admin, f.org.id, ['evaluation.completed', 'evaluation.failed']);
    const started = await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' } });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    await drain();
    await refreshEvaluation({ db: await getDb() }, started.body.id);

    const sent = await deliveriesTo(hook.id);
    expect(sent.map((d) => d.type)).toEqual(['evaluation.completed']);
    expectEnvelope(sent[0], 'evaluation.completed', f.org.id);
    const read = (await f.editor.call('GET', evalPath(f.org.id, started.body.id))).body;
    expect(read.status).toBe('completed');
    expect(sent[0].body.data).toEqual(read);
  });

  it('a baseline that fails, is retried and completes: failed, then completed (with version 1 and its events)', async () => {
    const f = await setupFixture({ cases: 2 });
    const hook = await subscribe(f.admin, f.org.id, [
      'evaluation.completed',
      'evaluation.failed',
      'prompt.version.created',
      'prompt.label.moved',
    ]);
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
    const failed = await deliveriesTo(hook.id);
    expect(failed.map((d) => d.type)).toEqual(['evaluation.failed']);
    expectEnvelope(failed[0], 'evaluation.failed', f.org.id);
    expect(failed[0].body.data).toEqual((await f.editor.call('GET', evalPath(f.org.id, e.id))).body);
    expect(failed[0].body.data.status).toBe('failed');

    fake.script([
      { kind: 'ok', text: 'case 1' },
      { kind: 'ok', text: 'case 2' },
    ]);
    expect(
      (await f.editor.call('POST', `${evalPath(f.org.id, e.id)}/retry`, { body: { side: 'candidate' } })).status,
    ).toBe(200);
    await drain();
    const sent = await deliveriesTo(hook.id);
    expect(sent.map((d) => d.type).sort()).toEqual([
      'evaluation.completed',
      'evaluation.failed',
      'prompt.label.moved',
      'prompt.label.moved',
      'prompt.version.created',
    ]);
    const completed = ofType(sent, 'evaluation.completed')[0];
    const read = (await f.editor.call('GET', evalPath(f.org.id, e.id))).body;
    expect(read).toMatchObject({ status: 'completed', version: 1 });
    expect(completed.body.data).toEqual(read);
    // All written by the refresh that published version 1: one transaction, one moment.
    const version = ofType(sent, 'prompt.version.created')[0];
    expect(version.body.data).toEqual((await f.editor.call('GET', `${f.base}/versions/1`)).body);
  });

  it('a refresh that finds every result in error fails the evaluation once', async () => {
    const f = await comparisonFixture({ cases: 2 });
    const hook = await subscribe(f.admin, f.org.id, ['evaluation.failed']);
    const started = (await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' } })).body;
    const db = await getDb();
    const runIds = [started.candidateRunId, started.productionRunId].filter(Boolean);
    await db
      .update(evalResults)
      .set({ status: 'error', error: 'provider down' })
      .where(inArray(evalResults.runId, runIds));
    await refreshEvaluation({ db }, started.id);
    await refreshEvaluation({ db }, started.id);
    const sent = await deliveriesTo(hook.id);
    expect(sent.map((d) => d.type)).toEqual(['evaluation.failed']);
    expect(sent[0].body.data).toEqual((await f.editor.call('GET', evalPath(f.org.id, started.id))).body);
  });
});

describe('warning.opened', () => {
  it('when a warning is inserted or reopened after being resolved; not when it is counted again while open', async () => {
    const { org, admin } = await newTeam();
    const hook = await subscribe(admin, org.id, ['warning.opened']);
    const db = await getDb();
    const subjectId = newId('prm');
    const warning = {
      organizationId: org.id,
      kind: 'archived_prompt_used' as const,
      subjectId,
      promptId: subjectId,
      message: 'An archived prompt was retrieved.',
    };
    await raiseWarning(db, warning);
    await raiseWarnings(db, [warning, warning]); // counted again while open: no event
    expect((await deliveriesTo(hook.id)).map((d) => d.type)).toEqual(['warning.opened']);
    const first = (await deliveriesTo(hook.id))[0];
    expectEnvelope(first, 'warning.opened', org.id);
    expect(first.body.data).toMatchObject({ kind: 'archived_prompt_used', count: 1, resolvedAt: null });

    await resolveWarning(db, { organizationId: org.id, kind: 'archived_prompt_used', subjectId });
    await raiseWarning(db, warning); // reopened
    const sent = await deliveriesTo(hook.id);
    expect(sent.map((d) => d.type)).toEqual(['warning.opened', 'warning.opened']);
    const listed = (await admin.call('GET', `/organizations/${org.id}/warnings`)).body.items;
    expect(sent[1].body.data).toEqual(listed.find((w: any) => w.subjectId === subjectId));
    expect(sent[1].body.data).toMatchObject({ count: 4, resolvedAt: null });
    expect(sent[1].body.data.id).toBe(first.body.data.id);
  });

  it('a repeated occurrence id changes nothing and opens nothing; a batch opens each new subject once', async () => {
    const { org, admin } = await newTeam();
    const hook = await subscribe(admin, org.id, ['warning.opened']);
    const db = await getDb();
    const subject = (n: number) => ({
      organizationId: org.id,
      kind: 'webhook_failing' as const,
      subjectId: `whk_subject${n}`,
      message: 'Deliveries are failing.',
      occurrenceId: 'evt_same',
    });
    await raiseWarnings(db, [subject(1), subject(2), subject(1)]);
    await raiseWarnings(db, [subject(1)]);
    const sent = await deliveriesTo(hook.id);
    expect(sent.map((d) => d.body.data.subjectId).sort()).toEqual(['whk_subject1', 'whk_subject2']);
  });
});

describe('warning.opened under concurrency', () => {
  it('concurrent raises, resolves and batches in different orders open each warning exactly once per opening', async () => {
    const { org, admin } = await newTeam();
    const hook = await subscribe(admin, org.id, ['warning.opened']);
    const db = await getDb();
    const archived = (subjectId: string) => ({
      organizationId: org.id,
      kind: 'archived_prompt_used' as const,
      subjectId,
      promptId: subjectId,
      message: 'An archived prompt was retrieved.',
    });
    const one = newId('prm');
    await raiseWarning(db, archived(one));
    await resolveWarning(db, { organizationId: org.id, kind: 'archived_prompt_used', subjectId: one });
    await Promise.all(Array.from({ length: 20 }, () => raiseWarning(db, archived(one))));
    const subjects = Array.from({ length: 6 }, () => newId('prm'));
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        raiseWarnings(db, (i % 2 ? [...subjects].reverse() : subjects).map(archived)),
      ),
    );
    const opened = (await deliveriesTo(hook.id)).map((d) => d.body.data.subjectId);
    expect(opened.filter((s) => s === one)).toHaveLength(2); // the first raise and one reopening
    expect(opened.filter((s) => s !== one).sort()).toEqual([...subjects].sort());
  });
});

describe('rolled back changes have no event', () => {
  const actorOf = (user: TestUser): Actor => ({ userId: user.id, clientId: 'dashboard', human: true });

  it('save version, label move and a warning inside a transaction that then fails: no event, no delivery', async () => {
    const { org, admin } = await newTeam();
    const hook = await subscribe(admin, org.id, ['prompt.version.created', 'prompt.label.moved', 'warning.opened']);
    const { prompt } = await activePrompt(admin, org.id);
    const before = await eventsOf(org.id);
    expect(before).toHaveLength(3); // version 1 and its two labels
    const draft = await writeDraft(admin, org.id, prompt.id, 'Never saved.');
    const db = await getDb();
    await expect(
      runInTransaction(db, async (tx, afterCommit) => {
        const ctx = { db: tx, afterCommit, actor: actorOf(admin) };
        const version = await saveVersionService(ctx, {
          organizationId: org.id,
          promptId: prompt.id,
          draftRevision: draft.revision,
        });
        await moveLabel(ctx, { organizationId: org.id, promptId: prompt.id, label: 'staging', versionId: version.id });
        await raiseWarning(ctx, {
          organizationId: org.id,
          kind: 'key_unused',
          subjectId: 'key_rolledback',
          message: 'Unused.',
        });
        // Everything was written in this transaction, events included.
        expect((await tx.select().from(webhookEvents).where(eq(webhookEvents.organizationId, org.id))).length).toBe(
          before.length + 3,
        );
        throw new Error('the change fails after its events were written');
      }),
    ).rejects.toThrow('the change fails');
    expect(await eventsOf(org.id)).toEqual(before);
    expect(await deliveriesTo(hook.id)).toHaveLength(3);
  });
});
