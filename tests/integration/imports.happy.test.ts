import { describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { auditLog, prompts } from '@/db/schema';
import { newOrganization, newTeam, newUser } from '../helpers/api';
import { drain, setPlan } from '../helpers/evals';
import { newRetrievalKey, retrieve } from '../helpers/retrieval';
import { activePrompt, publishBaseline, writeDraft } from '../helpers/prompts';
import { bundle, bundlePrompt, exportPages, importBundle, importPath, storedContent } from '../helpers/imports';

// Import and export through the REST API with real tokens (API.md "Moving prompts in and out").

async function promptRows(organizationId: string) {
  const db = await getDb();
  return db.select().from(prompts).where(eq(prompts.organizationId, organizationId));
}

async function importAudits(organizationId: string) {
  const db = await getDb();
  return db
    .select()
    .from(auditLog)
    .where(and(eq(auditLog.organizationId, organizationId), eq(auditLog.operation, 'prompt.import')));
}

describe('import a bundle', () => {
  it('stores versions (numbers, gaps, contents, dates), labels, scoring, cases and states as given', async () => {
    const { org, editor, viewer } = await newTeam();
    const judge = {
      method: 'judge',
      judgeModelRouteId: 'local/judge',
      rubric: 'Pass when polite.',
      rubricIsDefault: false,
    };
    const document = bundle([
      bundlePrompt('Support', {
        versions: [
          { version: 1, content: storedContent('First'), createdAt: '2024-03-01T10:00:00.000Z' },
          { version: 3, content: storedContent('Third', { temperature: 0.2 }), createdAt: '2024-04-01T10:00:00.000Z' },
        ],
        labels: [
          { label: 'production', version: 3 },
          { label: 'staging', version: 1 },
        ],
        labelHistory: [{ label: 'production', fromVersion: 1, toVersion: 3, at: '2024-04-02T00:00:00.000Z' }],
        scoring: judge,
      }),
      bundlePrompt('Drafting', { state: 'setup', versions: [], labels: [], dataset: { cases: [] } }),
      bundlePrompt('Old one', { state: 'archived' }, 1),
    ]);
    const before = Date.now();
    const result = await importBundle(editor, org.id, { document });
    expect(result.status, JSON.stringify(result.body)).toBe(201);
    const [support, drafting, old] = result.body.prompts;
    expect(result.body).toEqual({
      prompts: [
        {
          name: 'Support',
          action: 'create',
          promptId: expect.stringMatching(/^prm_/),
          versions: 2,
          labels: 2,
          cases: 3,
          notes: ['Label history (1 entry) is not replayed: each label gets one import entry.'],
        },
        {
          name: 'Drafting',
          action: 'create',
          promptId: expect.stringMatching(/^prm_/),
          versions: 0,
          labels: 0,
          cases: 0,
          notes: [],
        },
        {
          name: 'Old one',
          action: 'create',
          promptId: expect.stringMatching(/^prm_/),
          versions: 1,
          labels: 1,
          cases: 3,
          notes: [],
        },
      ],
      notes: [],
    });

    const base = `/organizations/${org.id}/prompts/${support.promptId}`;
    const prompt = (await viewer.call('GET', base)).body;
    // versionCount counts the versions (1 and 3); the next save still gets 4.
    expect(prompt).toMatchObject({ name: 'Support', state: 'active', versionCount: 2, archivedAt: null });
    const versions = (await viewer.call('GET', `${base}/versions`)).body.items;
    expect(versions.map((v: any) => [v.number, v.content.messages[0].content, v.createdAt, v.createdBy])).toEqual([
      [3, 'Third', '2024-04-01T10:00:00.000Z', editor.id],
      [1, 'First', '2024-03-01T10:00:00.000Z', editor.id],
    ]);
    expect(versions[0].content).toEqual(storedContent('Third', { temperature: 0.2 }));
    expect(prompt.productionVersionId).toBe(versions[0].id);
    expect((await viewer.call('GET', `${base}/labels`)).body.items.map((l: any) => [l.label, l.version])).toEqual([
      ['production', 3],
      ['staging', 1],
    ]);
    const history = (await viewer.call('GET', `${base}/label-history`)).body.items;
    expect(history).toHaveLength(2);
    for (const entry of history) {
      expect(entry).toMatchObject({
        fromVersionId: null,
        fromVersion: null,
        userId: editor.id,
        evaluationId: null,
        source: 'import',
      });
      expect(entry.clientId).toBe('promptloop-cli');
      expect(Date.parse(entry.at)).toBeGreaterThanOrEqual(before - 1000);
    }
    expect((await viewer.call('GET', `${base}/scoring`)).body).toEqual(judge);
    const dataset = (await viewer.call('GET', `${base}/dataset`)).body;
    expect(
      dataset.rows.map((r: any) => [r.position, r.input, r.expectedOutput, r.inputFormat, r.referenceFormat]),
    ).toEqual([
      [1, 'Hello', 'Hi', 'text', 'text'],
      [2, '{"q":1}', '{"a":1}', 'json', 'json'],
      [3, 'Bye', '', 'text', 'text'],
    ]);

    const setup = (await viewer.call('GET', `/organizations/${org.id}/prompts/${drafting.promptId}`)).body;
    expect(setup).toMatchObject({ state: 'setup', versionCount: 0, labels: [] });
    expect(
      (await viewer.call('GET', `/organizations/${org.id}/prompts/${drafting.promptId}/scoring`)).body.method,
    ).toBe('expected');
    const archived = (await viewer.call('GET', `/organizations/${org.id}/prompts/${old.promptId}`)).body;
    expect(archived.state).toBe('archived');
    expect(Date.parse(archived.archivedAt)).toBeGreaterThanOrEqual(before - 1000);

    const audits = await importAudits(org.id);
    expect(audits.map((a) => [a.targetId, a.userId, a.details]).sort()).toEqual(
      [
        [support.promptId, editor.id, { source: 'promptloop', name: 'Support', versions: 2, labels: 2, cases: 3 }],
        [drafting.promptId, editor.id, { source: 'promptloop', name: 'Drafting', versions: 0, labels: 0, cases: 0 }],
        [old.promptId, editor.id, { source: 'promptloop', name: 'Old one', versions: 1, labels: 1, cases: 3 }],
      ].sort(),
    );
  });

  it('a model route this server lacks is imported as openai/<model> or local/echo, with a note', async () => {
    const { org, editor } = await newTeam();
    const document = bundle([
      bundlePrompt('Routed', {
        versions: [
          {
            version: 1,
            content: storedContent('a', { modelRouteId: 'azure/gpt-4o', modelId: 'gpt-4o' }),
            createdAt: null,
          },
          { version: 2, content: storedContent('b', { modelRouteId: 'acme/big', modelId: 'big-1' }), createdAt: null },
        ],
      }),
    ]);
    const result = await importBundle(editor, org.id, { document });
    expect(result.status, JSON.stringify(result.body)).toBe(201);
    expect(result.body.prompts[0].notes).toEqual([
      'Versions 1, 2 have no createdAt: dated at the import.',
      'Model route "azure/gpt-4o" (model "gpt-4o") does not exist here: version 1 uses "openai/gpt-4o" instead.',
      'Model route "acme/big" (model "big-1") does not exist here: version 2 uses "local/echo" instead.',
    ]);
    const base = `/organizations/${org.id}/prompts/${result.body.prompts[0].promptId}`;
    const versions = (await editor.call('GET', `${base}/versions`)).body.items;
    expect(versions.map((v: any) => [v.number, v.content.modelRouteId, v.content.modelId])).toEqual([
      [2, 'local/echo', 'echo'],
      [1, 'openai/gpt-4o', 'gpt-4o'],
    ]);
  });

  it('an imported active prompt saves max+1, is retrievable by label with a key, and runs a comparison', async () => {
    const { org, editor } = await newTeam();
    const document = bundle([
      bundlePrompt('Echo', {
        versions: [
          { version: 2, content: storedContent('Two'), createdAt: null },
          { version: 7, content: storedContent('Seven'), createdAt: '2024-01-01T00:00:00Z' },
        ],
        labels: [
          { label: 'production', version: 7 },
          { label: 'staging', version: 2 },
        ],
        dataset: { cases: [{ input: 'ping', expectedOutput: 'ping', inputFormat: 'text', referenceFormat: 'text' }] },
      }),
    ]);
    const imported = await importBundle(editor, org.id, { document });
    expect(imported.status).toBe(201);
    const promptId = imported.body.prompts[0].promptId;
    const base = `/organizations/${org.id}/prompts/${promptId}`;
    const versions = (await editor.call('GET', `${base}/versions`)).body.items;
    // A null createdAt takes the import time, and the report says so (nothing changes silently).
    expect(Date.now() - Date.parse(versions.find((v: any) => v.number === 2).createdAt)).toBeLessThan(60_000);
    expect(imported.body.prompts[0].notes).toContain('Version 2 has no createdAt: dated at the import.');

    await writeDraft(editor, org.id, promptId, 'Eight');
    const draft = (await editor.call('GET', `${base}/draft`)).body;
    const saved = await editor.call('POST', `${base}/versions`, { body: { draftRevision: draft.revision } });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    expect(saved.body.number).toBe(8);

    const { secret } = await newRetrievalKey(editor.call, base);
    const byLabel = await retrieve(promptId, secret, { query: 'label=staging' });
    expect(byLabel.status).toBe(200);
    expect(byLabel.body).toMatchObject({ promptId, name: 'Echo', version: 2, label: 'staging' });
    expect(byLabel.body.content.messages).toEqual([{ role: 'system', content: 'Two' }]);
    const production = await retrieve(promptId, secret);
    expect(production.body).toMatchObject({ version: 7, label: 'production', createdAt: '2024-01-01T00:00:00.000Z' });

    const started = await editor.call('POST', `${base}/evals`, { body: { versionId: saved.body.id, scope: 'quick' } });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    await drain();
    const evaluation = (await editor.call('GET', `/organizations/${org.id}/evals/${started.body.id}`)).body;
    expect(evaluation.status).toBe('completed');
  });

  it('an imported setup prompt with versions: initialize runs the latest version and publishes max+1', async () => {
    const { org, editor } = await newTeam();
    const document = bundle([
      bundlePrompt('Later', {
        state: 'setup',
        versions: [
          { version: 1, content: storedContent('One'), createdAt: null },
          { version: 4, content: storedContent('Four'), createdAt: null },
        ],
        labels: [{ label: 'staging', version: 1 }],
        dataset: { cases: [{ input: 'ping', expectedOutput: 'ping', inputFormat: 'text', referenceFormat: 'text' }] },
      }),
    ]);
    const imported = await importBundle(editor, org.id, { document });
    const promptId = imported.body.prompts[0].promptId;
    const base = `/organizations/${org.id}/prompts/${promptId}`;
    expect((await editor.call('GET', base)).body).toMatchObject({ state: 'setup', versionCount: 2 });
    // Save version waits for the baseline, as for any setup prompt.
    expect((await editor.call('POST', `${base}/versions`, { body: { draftRevision: 0 } })).body.error.code).toBe(
      'invalid_state',
    );

    // No draft written: the baseline runs the latest version's content.
    const started = await editor.call('POST', `${base}/initialize`, {
      body: { draftRevision: 0, scoringMethod: 'expected' },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    await drain();
    const evaluation = (await editor.call('GET', `/organizations/${org.id}/evals/${started.body.id}`)).body;
    expect(evaluation).toMatchObject({ status: 'completed', version: 5 });
    const prompt = (await editor.call('GET', base)).body;
    expect(prompt).toMatchObject({ state: 'active', versionCount: 3 });
    const v5 = (await editor.call('GET', `${base}/versions/5`)).body;
    expect(v5.content.messages).toEqual([{ role: 'system', content: 'Four' }]);
    expect(v5.labels).toEqual(['production', 'staging']);
    const staging = (await editor.call('GET', `${base}/label-history`, { query: 'label=staging' })).body.items;
    expect(staging.map((h: any) => [h.fromVersion, h.toVersion, h.source])).toEqual([
      [1, 5, 'move'],
      [null, 1, 'import'],
    ]);
  });

  it('publishBaselineVersion replays for the same evaluation after numbering past imported versions', async () => {
    const { org, editor } = await newTeam();
    const imported = await importBundle(editor, org.id, {
      document: bundle([bundlePrompt('Replay', { state: 'setup', labels: [] }, 2)]),
    });
    const promptId = imported.body.prompts[0].promptId;
    await writeDraft(editor, org.id, promptId, 'Baseline');
    const first = await publishBaseline(editor, org.id, promptId);
    expect(first.number).toBe(3);
    const again = await publishBaseline(editor, org.id, promptId, first.evaluationId);
    expect(again.id).toBe(first.id);
  });
});

describe('export', () => {
  it('one prompt: versions ascending as stored, labels, label history oldest first, scoring, cases', async () => {
    const { org, editor, viewer } = await newTeam();
    const { prompt, v1, base } = await activePrompt(editor, org.id, 'Be kind.');
    await writeDraft(editor, org.id, prompt.id, 'Be kinder.');
    const draft = (await editor.call('GET', `${base}/draft`)).body;
    const v2 = (await editor.call('POST', `${base}/versions`, { body: { draftRevision: draft.revision } })).body;
    await editor.call('PUT', `${base}/labels/production`, { body: { versionId: v2.id } });
    await editor.call('PUT', `${base}/labels/canary`, { body: { versionId: v1.id } });
    await editor.call('DELETE', `${base}/labels/canary`);
    await editor.call('POST', `${base}/dataset/cases`, {
      body: { revision: 0, row: { input: 'b', expectedOutput: 'B' } },
    });
    await editor.call('POST', `${base}/dataset/cases`, {
      body: { revision: 1, row: { input: 'a', expectedOutput: 'A' } },
    });

    const exported = await viewer.call('GET', `${base}/export`);
    expect(exported.status).toBe(200);
    const versions = (await viewer.call('GET', `${base}/versions`)).body.items.reverse();
    expect(exported.body).toEqual({
      format: 'promptloop.bundle',
      formatVersion: 1,
      exportedAt: expect.any(String),
      prompts: [
        {
          name: 'Support answers',
          state: 'active',
          versions: versions.map((v: any) => ({ version: v.number, content: v.content, createdAt: v.createdAt })),
          labels: [
            { label: 'production', version: 2, split: null },
            { label: 'staging', version: 1, split: null },
          ],
          labelHistory: [
            { label: 'staging', fromVersion: null, toVersion: 1, at: expect.any(String) },
            { label: 'production', fromVersion: null, toVersion: 1, at: expect.any(String) },
            { label: 'production', fromVersion: 1, toVersion: 2, at: expect.any(String) },
            { label: 'canary', fromVersion: null, toVersion: 1, at: expect.any(String) },
            { label: 'canary', fromVersion: 1, toVersion: null, at: expect.any(String) },
          ].map((entry) => ({
            ...entry,
            source: 'move',
            fromSplit: null,
            toSplit: null,
            override: null,
            userId: expect.stringMatching(/^usr_/),
            clientId: expect.any(String),
            evaluationId: entry.fromVersion === null && entry.label !== 'canary' ? expect.any(String) : null,
          })),
          scoring: null,
          releasePolicy: null,
          dataset: {
            cases: [
              { input: 'b', expectedOutput: 'B', inputFormat: 'text', referenceFormat: 'text' },
              { input: 'a', expectedOutput: 'A', inputFormat: 'text', referenceFormat: 'text' },
            ],
          },
        },
      ],
    });
    expect(exported.body.prompts[0].versions[0].content).toEqual(storedContent('Be kind.'));
    expect(exported.body.nextCursor).toBeUndefined();

    await editor.call('PUT', `${base}/scoring`, { body: { method: 'judge' } });
    const judged = (await viewer.call('GET', `${base}/export`)).body.prompts[0].scoring;
    expect(judged).toEqual((await viewer.call('GET', `${base}/scoring`)).body);
    expect(judged.rubricIsDefault).toBe(true);
  });

  it('the organization: pages of 25, oldest first, archived included, then nextCursor null', async () => {
    const owner = await newUser();
    const org = await newOrganization(owner);
    const names = Array.from({ length: 26 }, (_, i) => `P${String(i).padStart(2, '0')}`);
    const ids: string[] = [];
    for (const name of names)
      ids.push((await owner.call('POST', `/organizations/${org.id}/prompts`, { body: { name } })).body.id);
    await owner.call('POST', `/organizations/${org.id}/prompts/${ids[3]}/archive`);

    const pages = await exportPages(owner, org.id);
    expect(pages.map((p) => p.prompts.length)).toEqual([25, 1]);
    expect(pages[0].nextCursor).toEqual(expect.any(String));
    expect(pages[1].nextCursor).toBeNull();
    expect(pages.flatMap((p) => p.prompts.map((x: any) => x.name))).toEqual(names);
    expect(pages[0].prompts[3].state).toBe('archived');
    expect(pages[0].prompts[0]).toEqual({
      name: 'P00',
      state: 'setup',
      versions: [],
      labels: [],
      labelHistory: [],
      scoring: null,
      releasePolicy: null,
      dataset: { cases: [] },
    });
    // Another organization's export stays its own; an empty one is one empty page.
    const other = await newOrganization(owner);
    expect(await exportPages(owner, other.id)).toEqual([
      { format: 'promptloop.bundle', formatVersion: 1, exportedAt: expect.any(String), prompts: [], nextCursor: null },
    ]);
  });

  it('round trip: export → import into another organization → export gives the same bundle', async () => {
    const { org, editor } = await newTeam();
    const { prompt, v1, base } = await activePrompt(editor, org.id, 'Answer in French.');
    await writeDraft(editor, org.id, prompt.id, 'Answer in German.');
    const draft = (await editor.call('GET', `${base}/draft`)).body;
    await editor.call('POST', `${base}/versions`, { body: { draftRevision: draft.revision } });
    await editor.call('PUT', `${base}/labels/canary`, { body: { versionId: v1.id } });
    await editor.call('PUT', `${base}/scoring`, { body: { method: 'judge', rubric: 'Be strict.' } });
    await editor.call('POST', `${base}/dataset/import`, {
      body: {
        revision: 0,
        rows: [
          { input: 'x', expectedOutput: 'y' },
          { input: '{"a":[1,2]}', expectedOutput: 'z', inputFormat: 'json' },
        ],
      },
    });
    await editor.call('POST', `/organizations/${org.id}/prompts`, { body: { name: 'Empty setup' } });
    const gone = (await editor.call('POST', `/organizations/${org.id}/prompts`, { body: { name: 'Gone' } })).body;
    await editor.call('POST', `/organizations/${org.id}/prompts/${gone.id}/archive`);

    const [first] = await exportPages(editor, org.id);
    const target = await newOrganization(editor);
    const imported = await importBundle(editor, target.id, { document: first });
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
    expect(imported.body.prompts.map((p: any) => [p.name, p.action])).toEqual([
      ['Support answers', 'create'],
      ['Empty setup', 'create'],
      ['Gone', 'create'],
    ]);
    const [second] = await exportPages(editor, target.id);

    // Label history is not replayed: one import entry per label instead.
    const strip = (page: any) => ({
      ...page,
      exportedAt: null,
      prompts: page.prompts.map((p: any) => ({ ...p, labelHistory: null })),
    });
    expect(strip(second)).toEqual(strip(first));
    expect(second.prompts[0].labelHistory).toEqual(
      ['canary', 'production', 'staging'].map((label) => ({
        label,
        fromVersion: null,
        toVersion: 1,
        at: expect.any(String),
        source: 'import',
        fromSplit: null,
        toSplit: null,
        override: null,
        userId: editor.id,
        clientId: 'promptloop-cli',
        evaluationId: null,
      })),
    );
    expect(second.prompts[0].scoring).toEqual({
      method: 'judge',
      judgeModelRouteId: 'local/judge',
      rubric: 'Be strict.',
      rubricIsDefault: false,
    });
  });
});

describe('conflicts', () => {
  it('skip (default): an existing name, archived or not, is left alone and reported with its id', async () => {
    const { org, editor } = await newTeam();
    const existing = (await editor.call('POST', `/organizations/${org.id}/prompts`, { body: { name: 'Alpha' } })).body;
    await editor.call('POST', `/organizations/${org.id}/prompts/${existing.id}/archive`);
    const result = await importBundle(editor, org.id, {
      document: bundle([bundlePrompt('Alpha'), bundlePrompt('alpha')]),
    });
    expect(result.status).toBe(201);
    expect(result.body.prompts[0]).toEqual({
      name: 'Alpha',
      action: 'skip',
      promptId: existing.id,
      versions: 0,
      labels: 0,
      cases: 0,
      notes: ['A prompt named "Alpha" exists already: nothing was imported for it (onConflict skip).'],
    });
    // Names match case-sensitively.
    expect(result.body.prompts[1]).toMatchObject({ name: 'alpha', action: 'create' });
    expect((await promptRows(org.id)).map((p) => p.name).sort()).toEqual(['Alpha', 'alpha']);
    expect(await importAudits(org.id)).toHaveLength(1);

    // Every row a skip still answers 201.
    const again = await importBundle(editor, org.id, { document: bundle([bundlePrompt('Alpha')]) });
    expect(again.status).toBe(201);
    expect(again.body.prompts.map((p: any) => p.action)).toEqual(['skip']);
  });

  it('rename: "Name (imported)", then "(imported 2)", unique against the organization and the document', async () => {
    const { org, editor } = await newTeam();
    // An archived prompt holds its name too.
    const beta = (await editor.call('POST', `/organizations/${org.id}/prompts`, { body: { name: 'Beta' } })).body;
    await editor.call('POST', `/organizations/${org.id}/prompts/${beta.id}/archive`);
    const first = await importBundle(editor, org.id, {
      onConflict: 'rename',
      document: bundle([bundlePrompt('Beta')]),
    });
    expect(first.body.prompts[0]).toMatchObject({ name: 'Beta (imported)', action: 'create', versions: 2 });
    expect(first.body.prompts[0].notes[0]).toBe('A prompt named "Beta" exists already: imported as "Beta (imported)".');
    const second = await importBundle(editor, org.id, {
      onConflict: 'rename',
      document: bundle([bundlePrompt('Beta')]),
    });
    expect(second.body.prompts[0].name).toBe('Beta (imported 2)');
    // The document itself holds "Gamma (imported)": the renamed Gamma takes the next free name.
    await editor.call('POST', `/organizations/${org.id}/prompts`, { body: { name: 'Gamma' } });
    const third = await importBundle(editor, org.id, {
      onConflict: 'rename',
      document: bundle([bundlePrompt('Gamma'), bundlePrompt('Gamma (imported)'), bundlePrompt('Beta')]),
    });
    expect(third.body.prompts.map((p: any) => p.name)).toEqual([
      'Gamma (imported 2)',
      'Gamma (imported)',
      'Beta (imported 3)',
    ]);
    // A long name is cut so that the whole stays within 200 characters.
    const long = 'L'.repeat(200);
    await editor.call('POST', `/organizations/${org.id}/prompts`, { body: { name: long } });
    const cut = await importBundle(editor, org.id, { onConflict: 'rename', document: bundle([bundlePrompt(long)]) });
    expect(cut.body.prompts[0].name).toBe(`${'L'.repeat(189)} (imported)`);
    const names = (await promptRows(org.id)).map((p) => p.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it('racing imports of one name: one creates it, the other skips it', async () => {
    const { org, editor, admin } = await newTeam();
    const document = bundle([bundlePrompt('Racer')]);
    const results = await Promise.all([
      importBundle(editor, org.id, { document }),
      importBundle(admin, org.id, { document }),
    ]);
    expect(results.map((r) => r.status)).toEqual([201, 201]);
    expect(results.map((r) => r.body.prompts[0].action).sort()).toEqual(['create', 'skip']);
    expect((await promptRows(org.id)).filter((p) => p.name === 'Racer')).toHaveLength(1);
  });
});

describe('dry run and idempotency', () => {
  it('a dry run answers 200 with the same report, promptId null, writes nothing and is not recorded', async () => {
    const { org, editor } = await newTeam();
    await editor.call('POST', `/organizations/${org.id}/prompts`, { body: { name: 'Exists' } });
    const document = bundle([bundlePrompt('New'), bundlePrompt('Exists')]);
    const key = `dry-run-${Date.now()}`;
    const dry = await importBundle(editor, org.id, { document, dryRun: true }, { 'idempotency-key': key });
    expect(dry.status).toBe(200);
    expect(dry.body.prompts.map((p: any) => [p.name, p.action, p.promptId, p.versions, p.cases])).toEqual([
      ['New', 'create', null, 2, 3],
      ['Exists', 'skip', null, 0, 0],
    ]);
    expect((await promptRows(org.id)).map((p) => p.name)).toEqual(['Exists']);
    expect(await importAudits(org.id)).toHaveLength(0);

    // The same key then runs the real import (the dry run was not recorded): no conflict, no replay.
    const real = await importBundle(editor, org.id, { document }, { 'idempotency-key': key });
    expect(real.status).toBe(201);
    expect(real.headers.get('idempotency-replayed')).toBeNull();
    const { promptId, ...rest } = real.body.prompts[0];
    expect(promptId).toMatch(/^prm_/);
    expect(rest).toEqual({ ...dry.body.prompts[0], promptId: undefined, notes: [] });
    expect(real.body.prompts[1].promptId).toMatch(/^prm_/);
  });

  it('Idempotency-Key: the same body replays the stored report; another body is 422 idempotency_conflict', async () => {
    const { org, editor } = await newTeam();
    const key = `import-${Date.now()}`;
    const body = { document: bundle([bundlePrompt('Once')]) };
    const first = await importBundle(editor, org.id, body, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    const replay = await importBundle(editor, org.id, body, { 'idempotency-key': key });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(await promptRows(org.id)).toHaveLength(1);
    const conflict = await importBundle(
      editor,
      org.id,
      { document: bundle([bundlePrompt('Twice')]) },
      { 'idempotency-key': key },
    );
    expect(conflict.status).toBe(422);
    expect(conflict.body.error.code).toBe('idempotency_conflict');
    expect(await promptRows(org.id)).toHaveLength(1);
  });

  it('duplicate cases inside one prompt are kept once and counted in a note', async () => {
    const { org, editor } = await newTeam();
    const hello = { input: 'Hello', expectedOutput: 'Hi', inputFormat: 'text', referenceFormat: 'text' };
    const result = await importBundle(editor, org.id, {
      document: bundle([
        bundlePrompt('Dupes', { dataset: { cases: [hello, hello, { ...hello, expectedOutput: 'Hey' }, hello] } }),
      ]),
    });
    expect(result.body.prompts[0]).toMatchObject({
      cases: 2,
      notes: ['2 duplicate cases (same input and expected output) kept once.'],
    });
  });

  it('a Pro organization takes up to 500 cases per prompt', async () => {
    const { org, editor } = await newTeam();
    await setPlan(org.id, 'pro');
    const cases = Array.from({ length: 500 }, (_, i) => ({
      input: `q${i}`,
      expectedOutput: '',
      inputFormat: 'text',
      referenceFormat: 'text',
    }));
    const result = await importBundle(editor, org.id, {
      document: bundle([bundlePrompt('Big', { dataset: { cases } })]),
    });
    expect(result.status, JSON.stringify(result.body)).toBe(201);
    expect(result.body.prompts[0].cases).toBe(500);
    // At the edge of capacity: the dataset_near_capacity warning is raised as for any dataset write.
    const warnings = (await editor.call('GET', `/organizations/${org.id}/warnings`)).body.items;
    expect(warnings.map((w: any) => [w.kind, w.promptId, w.message.slice(0, 26)])).toContainEqual([
      'dataset_near_capacity',
      result.body.prompts[0].promptId,
      'The dataset of “Big” is fu',
    ]);
  });
});

describe('request size', () => {
  // A body of exactly `bytes` bytes: two prompts of 45 versions whose messages share the room.
  function bodyOfSize(bytes: number) {
    const prompt = (name: string) =>
      bundlePrompt(name, {
        versions: Array.from({ length: 45 }, (_, i) => ({
          version: i + 1,
          content: storedContent(''),
          createdAt: null,
        })),
        labels: [{ label: 'production', version: 45 }],
      });
    const body = { source: 'promptloop', document: bundle([prompt('Big A'), prompt('Big B')]) };
    const messages = body.document.prompts.flatMap((p: any) => p.versions.map((v: any) => v.content.messages[0]));
    const room = bytes - Buffer.byteLength(JSON.stringify(body));
    const each = Math.floor(room / messages.length);
    messages.forEach((m: any, i: number) => (m.content = 'x'.repeat(each + (i === 0 ? room % messages.length : 0))));
    const text = JSON.stringify(body);
    expect(Buffer.byteLength(text)).toBe(bytes);
    return text;
  }

  it('a body just under 8 MiB is imported; its export splits into importable pages; over 8 MiB is 413', async () => {
    const { org, editor } = await newTeam();
    const limit = 8 * 1024 * 1024;
    const accepted = await editor.call('POST', importPath(org.id), {
      rawBody: bodyOfSize(limit - 16),
      headers: { 'content-type': 'application/json' },
    });
    expect(accepted.status, JSON.stringify(accepted.body).slice(0, 500)).toBe(201);
    expect(accepted.body.prompts.map((p: any) => p.versions)).toEqual([45, 45]);

    // Each page stays under ~6 MiB: the two prompts come on two pages.
    const pages = await exportPages(editor, org.id);
    expect(pages.map((p) => p.prompts.map((x: any) => x.name))).toEqual([['Big A'], ['Big B']]);
    for (const page of pages) expect(Buffer.byteLength(JSON.stringify(page))).toBeLessThan(6 * 1024 * 1024 + 1024);

    const refused = await editor.call('POST', importPath(org.id), {
      rawBody: bodyOfSize(limit + 16),
      headers: { 'content-type': 'application/json' },
    });
    expect(refused.status).toBe(413);
    expect(refused.body.error.code).toBe('payload_too_large');
    expect(await promptRows(org.id)).toHaveLength(2);
  });
});
