import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { auditLog, prompts } from '@/db/schema';
import { newOrganization, newTeam, newUser, type TestUser } from '../helpers/api';
import { setPlan, setReadOnly } from '../helpers/evals';
import {
  bundle,
  bundlePrompt,
  importBundle,
  importPath,
  rejectedItems,
  storedContent,
  type Json,
} from '../helpers/imports';
import { writeDraft } from '../helpers/prompts';

// Refusals of import and export: every rule with its JSON-pointer path, all or nothing, and the
// edge's own answers (API.md "Moving prompts in and out", "Input hygiene", "Error codes").

async function storedNothing(organizationId: string) {
  const db = await getDb();
  expect(await db.select().from(prompts).where(eq(prompts.organizationId, organizationId))).toEqual([]);
  expect(
    await db
      .select()
      .from(auditLog)
      .where(eq(auditLog.operation, 'prompt.import'))
      .then((rows) => rows.filter((r) => r.organizationId === organizationId)),
  ).toEqual([]);
}

// Imports `document` and returns the items of its 422 (failing the test on any other answer).
async function refused(user: TestUser, organizationId: string, document: unknown, extra: Json = {}) {
  const result = await importBundle(user, organizationId, { document, ...extra });
  const items = rejectedItems(result);
  await storedNothing(organizationId);
  return items;
}

const ok = (name = 'Fine') => bundlePrompt(name);
const textCase = (input: string, expectedOutput = '') => ({
  input,
  expectedOutput,
  inputFormat: 'text',
  referenceFormat: 'text',
});

describe('the bundle frame (mapper), 422 with paths', () => {
  it('format, formatVersion, prompts and the shape of each prompt', async () => {
    const { org, editor } = await newTeam();
    expect(await refused(editor, org.id, { ...bundle([ok()]), format: 'langfuse' })).toEqual([
      { path: '/format', message: 'Must be "promptloop.bundle".' },
    ]);
    expect((await refused(editor, org.id, { ...bundle([ok()]), formatVersion: 2 })).map((i) => i.path)).toEqual([
      '/formatVersion',
    ]);
    expect((await refused(editor, org.id, [bundle([ok()])])).map((i) => i.path)).toEqual(['']);
    expect((await refused(editor, org.id, { ...bundle([]), prompts: {} })).map((i) => i.path)).toEqual(['/prompts']);
    const items = await refused(
      editor,
      org.id,
      bundle([
        ok('A'),
        'not a prompt',
        { ...ok('C'), name: 7 },
        { ...ok('D'), state: 'live' },
        { ...ok('E'), versions: undefined },
        { ...ok('F'), versions: [{ version: 1.5, content: storedContent('x'), createdAt: null }] },
        { ...ok('G'), versions: [{ version: 1, content: storedContent('x'), createdAt: 20240101 }] },
        { ...ok('H'), labels: [{ label: 'production' }] },
        { ...ok('I'), scoring: 'judge' },
        { ...ok('J'), dataset: [] },
      ]),
    );
    expect(items.map((i) => i.path)).toEqual([
      '/prompts/1',
      '/prompts/2/name',
      '/prompts/3/state',
      '/prompts/4/versions',
      '/prompts/5/versions/0/version',
      '/prompts/6/versions/0/createdAt',
      '/prompts/7/labels/0/version',
      '/prompts/8/scoring',
      '/prompts/9/dataset',
    ]);
  });
});

describe('the shared rules, 422 with paths, nothing stored', () => {
  it('content is checked as save version checks it, with paths into the content', async () => {
    const { org, editor } = await newTeam();
    const messages = [
      { role: 'system', content: 'a' },
      { role: 'user', content: 'b' },
      { role: 'robot', content: 'c' },
    ];
    const items = await refused(
      editor,
      org.id,
      bundle([
        ok('A'),
        bundlePrompt('B', {
          versions: [
            { version: 1, content: storedContent('x', { messages }), createdAt: null },
            { version: 2, content: storedContent('x', { colour: 'red', temperature: 3 }), createdAt: null },
            { version: 3, content: storedContent('x', { outputSchema: '{"type": 12}' }), createdAt: null },
            {
              version: 4,
              content: storedContent('x', { tools: [{ type: 'function', name: 'a b' }] }),
              createdAt: null,
            },
            {
              version: 5,
              content: storedContent('x', { modelRouteId: 'openai/gpt-4o', modelId: 'gpt-3' }),
              createdAt: null,
            },
            { version: 6, content: 'text', createdAt: null },
          ],
          labels: [],
        }),
      ]),
    );
    expect(items.map((i) => i.path)).toEqual([
      '/prompts/1/versions/0/content/messages/2/role',
      '/prompts/1/versions/1/content/temperature',
      '/prompts/1/versions/1/content/colour',
      '/prompts/1/versions/2/content/outputSchema',
      '/prompts/1/versions/3/content/tools/0/name',
      '/prompts/1/versions/4/content/modelId',
      '/prompts/1/versions/5/content',
    ]);
    expect(items[1].message).toMatch(/2/);
    expect(items[2].message).toBe('Unknown field.');
    expect(items[5].message).toBe('Model route openai/gpt-4o serves gpt-4o, not gpt-3.');
  });

  it('names: trimmed, 1 to 200 characters, unique in the document (the second is refused)', async () => {
    const { org, editor } = await newTeam();
    const items = await refused(editor, org.id, bundle([ok('  Same '), ok(' '), ok('x'.repeat(201)), ok('Same')]));
    expect(items).toEqual([
      { path: '/prompts/1/name', message: 'Give a name of 1 to 200 characters.' },
      { path: '/prompts/2/name', message: 'Give a name of 1 to 200 characters.' },
      {
        path: '/prompts/3/name',
        message:
          'Another prompt of this document (/prompts/0) is named "Same" already: rename one of them in the document.',
      },
    ]);
    // Trimmed, the stored name has no surrounding spaces.
    const created = await importBundle(editor, org.id, { document: bundle([ok('  Spaced  ')]) });
    expect(created.body.prompts[0].name).toBe('Spaced');
  });

  it('versions: numbers unique and in range, createdAt an ISO date-time', async () => {
    const { org, editor } = await newTeam();
    const version = (n: number, createdAt: string | null = null) => ({
      version: n,
      content: storedContent('x'),
      createdAt,
    });
    const items = await refused(
      editor,
      org.id,
      bundle([
        bundlePrompt('A', {
          versions: [
            version(1),
            version(2),
            version(1),
            version(0),
            version(2_147_483_648),
            version(3, 'yesterday'),
            version(4, '2024-02-30T00:00:00Z'),
            version(5, '0000-06-01T00:00:00Z'),
            version(6, '9999-12-31T23:59:59-01:00'),
          ],
          labels: [],
        }),
      ]),
    );
    expect(items.map((i) => i.path)).toEqual([
      '/prompts/0/versions/2/version',
      '/prompts/0/versions/3/version',
      '/prompts/0/versions/4/version',
      '/prompts/0/versions/5/createdAt',
      '/prompts/0/versions/6/createdAt',
      '/prompts/0/versions/7/createdAt',
      '/prompts/0/versions/8/createdAt',
    ]);
    expect(items[0].message).toBe('Version 1 appears more than once in this prompt.');
  });

  it('the largest version number imports (a bundle the service exported); saving after it is 409 invalid_state', async () => {
    const { org, editor } = await newTeam();
    const last = bundlePrompt('Last', {
      versions: [{ version: 2_147_483_647, content: storedContent('x'), createdAt: null }],
      labels: [{ label: 'production', version: 2_147_483_647 }],
    });
    const imported = await importBundle(editor, org.id, { document: bundle([last]) });
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
    const base = `/organizations/${org.id}/prompts/${imported.body.prompts[0].promptId}`;
    await writeDraft(editor, org.id, imported.body.prompts[0].promptId, 'After the last');
    const draft = (await editor.call('GET', `${base}/draft`)).body;
    const saved = await editor.call('POST', `${base}/versions`, { body: { draftRevision: draft.revision } });
    expect(saved.status, JSON.stringify(saved.body)).toBe(409);
    expect(saved.body.error).toMatchObject({ code: 'invalid_state', details: { state: 'version_numbers_exhausted' } });
    expect((await editor.call('GET', `${base}/versions`)).body.items.map((v: any) => v.number)).toEqual([
      2_147_483_647,
    ]);
  });

  it('labels: the label pattern, one version per label, a version that is imported', async () => {
    const { org, editor } = await newTeam();
    const items = await refused(
      editor,
      org.id,
      bundle([
        bundlePrompt('A', {
          labels: [
            { label: 'production', version: 2 },
            { label: 'Prod!', version: 1 },
            { label: 'production', version: 1 },
            { label: 'canary', version: 9 },
          ],
        }),
      ]),
    );
    expect(items.map((i) => i.path)).toEqual(['/prompts/0/labels/1', '/prompts/0/labels/2', '/prompts/0/labels/3']);
    expect(items[2].message).toBe('Label "canary" points at version 9, which is not imported.');
  });

  it('labels: at most 100 per prompt', async () => {
    const { org, editor } = await newTeam();
    const labels = Array.from({ length: 101 }, (_, i) => ({ label: `l-${i}`, version: 1 }));
    const items = await refused(editor, org.id, bundle([bundlePrompt('A', { labels })]));
    expect(items).toEqual([
      { path: '/prompts/0/labels/100', message: 'A prompt holds at most 100 labels; this one has 101.' },
    ]);
    const fits = await importBundle(editor, org.id, {
      document: bundle([bundlePrompt('B', { labels: labels.slice(0, 100) })]),
    });
    expect(fits.status, JSON.stringify(fits.body)).toBe(201);
    expect(fits.body.prompts[0].labels).toBe(100);
  });

  it('scoring: as set scoring takes it', async () => {
    const { org, editor } = await newTeam();
    const items = await refused(
      editor,
      org.id,
      bundle([
        bundlePrompt('A', { scoring: { method: 'vibes' } }),
        bundlePrompt('B', { scoring: { method: 'expected', rubric: 'Be nice.' } }),
        bundlePrompt('C', { scoring: { method: 'judge', rubric: '' } }),
        bundlePrompt('D', { scoring: { method: 'judge', extra: true } }),
      ]),
    );
    expect(items.map((i) => i.path)).toEqual([
      '/prompts/0/scoring/method',
      '/prompts/1/scoring/rubric',
      '/prompts/2/scoring/rubric',
      '/prompts/3/scoring/extra',
    ]);
  });

  it('cases: as add case takes each row; one bad case in the last prompt stores nothing at all', async () => {
    const { org, editor } = await newTeam();
    const items = await refused(
      editor,
      org.id,
      bundle([
        ok('A'),
        ok('B'),
        bundlePrompt('C', {
          dataset: {
            cases: [
              textCase('fine'),
              { input: 'not json', expectedOutput: '', inputFormat: 'json', referenceFormat: 'text' },
              { input: '', expectedOutput: '' },
              { input: 'x', expectedOutput: 'y', weight: 2 },
            ],
          },
        }),
      ]),
    );
    expect(items.map((i) => i.path)).toEqual([
      '/prompts/2/dataset/cases/1/input',
      '/prompts/2/dataset/cases/2/input',
      '/prompts/2/dataset/cases/3/weight',
    ]);
  });

  it('capacity: more unique cases than the plan holds is refused at the first case past it', async () => {
    const { org, editor } = await newTeam();
    const cases = Array.from({ length: 11 }, (_, i) => textCase(`q${i}`));
    const items = await refused(editor, org.id, bundle([ok('A'), bundlePrompt('B', { dataset: { cases } })]));
    expect(items).toEqual([
      {
        path: '/prompts/1/dataset/cases/10',
        message: 'The Free plan holds at most 10 cases per dataset; this prompt brings 11.',
      },
    ]);
    // Duplicates do not count: 10 unique and one repeated fit on Free.
    const fits = await importBundle(editor, org.id, {
      document: bundle([bundlePrompt('C', { dataset: { cases: [...cases.slice(0, 10), cases[0]] } })]),
    });
    expect(fits.status).toBe(201);
    // Pro holds 500: 501 is refused there.
    await setPlan(org.id, 'pro');
    expect(
      (await importBundle(editor, org.id, { document: bundle([bundlePrompt('D', { dataset: { cases } })]) })).status,
    ).toBe(201);
    const many = Array.from({ length: 501 }, (_, i) => textCase(`q${i}`));
    const over = rejectedItems(
      await importBundle(editor, org.id, { document: bundle([bundlePrompt('E', { dataset: { cases: many } })]) }),
    );
    expect(over).toEqual([
      {
        path: '/prompts/0/dataset/cases/500',
        message: 'The Pro plan holds at most 500 cases per dataset; this prompt brings 501.',
      },
    ]);
  });

  it('bounds: at most 1,000 prompts per document; versions only by the body size, as saving; labels 100, as moving', async () => {
    const { org, editor } = await newTeam();
    const setup = (name: string) => ({ name, versions: [] });
    const tooMany = { ...bundle([]), prompts: Array.from({ length: 1001 }, (_, i) => setup(`p${i}`)) };
    expect(await refused(editor, org.id, tooMany)).toEqual([
      { path: '/prompts/1000', message: 'A document can bring at most 1000 prompts.' },
    ]);
    // What a prompt can reach by saving versions and moving labels exports, and so imports again.
    const versions = Array.from({ length: 1001 }, (_, i) => ({
      version: i + 1,
      content: storedContent('x'),
      createdAt: null,
    }));
    const labels = Array.from({ length: 100 }, (_, i) => ({ label: `l${i}`, version: 1 }));
    const many = await importBundle(editor, org.id, { document: bundle([bundlePrompt('A', { versions, labels })]) });
    expect(many.status, JSON.stringify(many.body)).toBe(201);
    expect(many.body.prompts[0]).toMatchObject({ versions: 1001, labels: 100 });
    // Exactly 1,000 prompts is fine.
    const most = await importBundle(editor, org.id, {
      document: { ...bundle([]), prompts: tooMany.prompts.slice(0, 1000) },
    });
    expect(most.status).toBe(201);
    expect(most.body.prompts).toHaveLength(1000);
  });

  it('lists at most 100 problems and says how many there are', async () => {
    const { org, editor } = await newTeam();
    const result = await importBundle(editor, org.id, {
      document: { ...bundle([]), prompts: Array.from({ length: 150 }, () => ({ name: '', versions: [] })) },
    });
    expect(result.body.error.message).toBe(
      'The import was rejected: 150 problems (the first 100 are listed). Nothing was imported.',
    );
    expect(result.body.error.details.items).toHaveLength(100);
  });
});

describe('refused before any business rule: 400, 403, 404', () => {
  it('poison strings anywhere in the document → 400 invalid_request with the path, nothing stored', async () => {
    const { org, editor } = await newTeam();
    for (const poison of ['a\u0000b', 'lone \ud800 surrogate']) {
      const document = bundle([ok('A'), bundlePrompt('B', { dataset: { cases: [textCase(poison)] } })]);
      const result = await editor.call('POST', importPath(org.id), { body: { source: 'promptloop', document } });
      expect(result.status).toBe(400);
      expect(result.body.error.code).toBe('invalid_request');
      expect(result.body.error.details.issues.map((i: any) => i.path)).toEqual([
        'document.prompts.1.dataset.cases.0.input',
      ]);
      const inName = await editor.call('POST', importPath(org.id), {
        body: { source: 'promptloop', document: bundle([ok(poison)]) },
      });
      expect(inName.status).toBe(400);
      expect(inName.body.error.details.issues[0].path).toBe('document.prompts.0.name');
    }
    await storedNothing(org.id);
  });

  it('poison strings inside JSON-encoded fields (outputSchema, a schema metric, json cases) → 400 with the path', async () => {
    const { org, editor, admin } = await newTeam();
    // JSON text whose escapes decode to U+0000 or a lone surrogate: the body's own strings are clean.
    const schema = '{"type":"object","description":"x\\ud800y"}';
    const nul = '{"a":"\\u0000"}';
    const cases = [
      textCase('Hello'),
      { input: nul, expectedOutput: '', inputFormat: 'json', referenceFormat: 'text' },
      { input: '{}', expectedOutput: nul, inputFormat: 'text', referenceFormat: 'json' },
    ];
    const document = bundle([
      ok('A'),
      bundlePrompt('B', {
        versions: [
          {
            version: 1,
            content: storedContent('x', {
              outputSchema: schema,
              customMetrics: [{ name: 'shape', type: 'matches_schema', value: schema }],
            }),
            createdAt: '2025-01-01T00:00:00.000Z',
          },
        ],
        labels: [{ label: 'production', version: 1, split: null }],
        dataset: { cases },
      }),
    ]);
    const result = await editor.call('POST', importPath(org.id), { body: { source: 'promptloop', document } });
    expect(result.status, JSON.stringify(result.body)).toBe(400);
    expect(result.body.error.code).toBe('invalid_request');
    expect(result.body.error.details.issues.map((i: any) => i.path)).toEqual([
      'document.prompts.1.versions.0.content.outputSchema',
      'document.prompts.1.versions.0.content.customMetrics.0.value',
      'document.prompts.1.dataset.cases.1.input',
      'document.prompts.1.dataset.cases.2.expectedOutput',
    ]);
    expect(result.body.error.details.issues[0].message).toBe(
      'Inside the JSON at description: Must not contain an unpaired surrogate (invalid Unicode).',
    );
    // Not recorded for idempotency (a 400): the same key with a clean document is a fresh decision.
    const key = { 'idempotency-key': 'poison-json-1' };
    expect(
      (await editor.call('POST', importPath(org.id), { body: { source: 'promptloop', document }, headers: key }))
        .status,
    ).toBe(400);
    await storedNothing(org.id);
    // The same text in a text-format case is text, not JSON: it imports.
    const asText = bundle([bundlePrompt('C', { dataset: { cases: [textCase(nul, nul)] } })]);
    const clean = await editor.call('POST', importPath(org.id), {
      body: { source: 'promptloop', document: asText },
      headers: key,
    });
    expect(clean.status, JSON.stringify(clean.body)).toBe(201);
    // The dataset's own import route answers the same way, before its 422 row checks.
    const prompt = (await admin.call('POST', `/organizations/${org.id}/prompts`, { body: { name: 'D' } })).body;
    const rows = await editor.call('POST', `/organizations/${org.id}/prompts/${prompt.id}/dataset/import`, {
      body: {
        revision: 0,
        rows: [
          { input: 'fine', expectedOutput: '' },
          { input: nul, expectedOutput: '', inputFormat: 'json' },
        ],
      },
    });
    expect(rows.status, JSON.stringify(rows.body)).toBe(400);
    expect(rows.body.error.details.issues.map((i: any) => i.path)).toEqual(['rows.1.input']);
  });

  it('deep nesting, a string document and unknown fields → 400', async () => {
    const { org, editor } = await newTeam();
    let deep: unknown = 'bottom';
    for (let i = 0; i < 70; i++) deep = [deep];
    const nested = await editor.call('POST', importPath(org.id), {
      body: { source: 'promptloop', document: { prompts: deep } },
    });
    expect(nested.status).toBe(400);
    expect(nested.body.error.code).toBe('invalid_request');
    for (const document of [JSON.stringify(bundle([ok()])), 42, null]) {
      const result = await editor.call('POST', importPath(org.id), { body: { source: 'promptloop', document } });
      expect(result.status).toBe(400);
      expect(result.body.error.details.issues[0].path).toBe('document');
    }
    const unknown = await editor.call('POST', importPath(org.id), {
      body: { source: 'promptloop', document: bundle([]), extra: 1 },
    });
    expect(unknown.status).toBe(400);
    const badSource = await editor.call('POST', importPath(org.id), {
      body: { source: 'notion', document: bundle([]) },
    });
    expect(badSource.status).toBe(400);
    await storedNothing(org.id);
  });

  it('roles: a viewer is 403 forbidden (dry run too); a stranger gets 404; a read-only organization 403', async () => {
    const { org, viewer, editor } = await newTeam();
    const document = bundle([ok()]);
    for (const dryRun of [false, true]) {
      const result = await importBundle(viewer, org.id, { document, dryRun });
      expect(result.status).toBe(403);
      expect(result.body.error.code).toBe('forbidden');
    }
    const stranger = await newUser();
    expect((await importBundle(stranger, org.id, { document })).status).toBe(404);
    expect((await stranger.call('GET', `/organizations/${org.id}/export`)).status).toBe(404);
    await setReadOnly(org.id, true);
    const readOnly = await importBundle(editor, org.id, { document });
    expect(readOnly.status).toBe(403);
    expect(readOnly.body.error.code).toBe('read_only');
    // Export is a read: it still works.
    expect((await viewer.call('GET', `/organizations/${org.id}/export`)).status).toBe(200);
    await storedNothing(org.id);
  });

  it('export: another organization’s prompt is 404, a bad cursor 400, a limit parameter 400', async () => {
    const owner = await newUser();
    const mine = await newOrganization(owner);
    const other = await newUser();
    const theirs = await newOrganization(other);
    const prompt = (await other.call('POST', `/organizations/${theirs.id}/prompts`, { body: { name: 'Secret' } })).body;
    expect((await owner.call('GET', `/organizations/${mine.id}/prompts/${prompt.id}/export`)).status).toBe(404);
    expect((await owner.call('GET', `/organizations/${theirs.id}/prompts/${prompt.id}/export`)).status).toBe(404);
    for (const cursor of [
      'nope',
      Buffer.from('["x","y"]').toString('base64url'),
      Buffer.from('[1]').toString('base64url'),
    ]) {
      const result = await owner.call('GET', `/organizations/${mine.id}/export`, { query: `cursor=${cursor}` });
      expect(result.status).toBe(400);
      expect(result.body.error.code).toBe('invalid_request');
    }
    expect((await owner.call('GET', `/organizations/${mine.id}/export`, { query: 'limit=5' })).status).toBe(400);
    // A cursor's time outside what Postgres stores is "not valid" with its path (it reached the database
    // and came back as "cannot be stored"), here and in every list keyed by a time.
    for (const time of ['0000-01-01T00:00:00.000Z', '+275760-09-13T00:00:00.000Z', '-000001-01-01T00:00:00.000Z']) {
      const cursor = Buffer.from(JSON.stringify([time, 'prm_x'])).toString('base64url');
      for (const list of ['export', 'members', 'warnings']) {
        const result = await owner.call('GET', `/organizations/${mine.id}/${list}`, { query: `cursor=${cursor}` });
        expect(result.status, `${list} ${time}`).toBe(400);
        expect(result.body.error.details.issues, `${list} ${time}`).toEqual([
          { path: 'cursor', message: 'Invalid cursor' },
        ]);
      }
    }
  });
});
