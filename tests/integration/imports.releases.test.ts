import { describe, expect, it } from 'vitest';
import { newOrganization, newTeam } from '../helpers/api';
import { promptWithVersions } from '../helpers/prompts';
import { bundle, bundlePrompt, importBundle } from '../helpers/imports';

// M10 state in the lossless bundle: a label's traffic split and the release policy go out with an
// export and come back with an import (API.md "Moving prompts in and out", "Safe releases").

const policy = {
  protectedLabels: ['production', 'staging'],
  requireEvaluation: true,
  maxPassRateDrop: 0.05,
  maxRegressions: 1,
};

describe('splits and release policies in bundles', () => {
  it('an exported split and policy are imported as they were', async () => {
    const { org, admin } = await newTeam();
    const { base, ids } = await promptWithVersions(admin, org.id, 3);
    expect((await admin.call('PUT', `${base}/release-policy`, { body: policy })).status).toBe(200);
    const split = [
      { versionId: ids[1], weight: 70 },
      { versionId: ids[2], weight: 30 },
    ];
    const moved = await admin.call('PUT', `${base}/labels/production`, {
      body: { split, override: { reason: 'canary' } },
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);

    const exported = (await admin.call('GET', `${base}/export`)).body;
    const [prompt] = exported.prompts;
    expect(prompt.releasePolicy).toEqual(policy);
    expect(prompt.labels).toContainEqual({
      label: 'production',
      version: 2,
      split: [
        { version: 2, weight: 70 },
        { version: 3, weight: 30 },
      ],
    });
    // The history keeps the split move as the history list shows it, versions by number.
    expect(prompt.labelHistory.at(-1)).toEqual({
      label: 'production',
      fromVersion: 1,
      toVersion: 2,
      at: expect.any(String),
      source: 'move',
      fromSplit: null,
      toSplit: [
        { version: 2, weight: 70 },
        { version: 3, weight: 30 },
      ],
      override: { reason: 'canary' },
      userId: admin.id,
      clientId: 'promptloop-cli',
      evaluationId: null,
    });

    const other = await newOrganization(admin);
    const imported = await importBundle(admin, other.id, { document: exported });
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
    const promptId = imported.body.prompts[0].promptId;
    const target = `/organizations/${other.id}/prompts/${promptId}`;
    const policyAfter = (await admin.call('GET', `${target}/release-policy`)).body;
    expect(policyAfter).toMatchObject({ ...policy, isDefault: false });
    const labels = (await admin.call('GET', `${target}/labels`)).body.items;
    const production = labels.find((l: { label: string }) => l.label === 'production');
    expect(production.version).toBe(2);
    expect(production.splitId).toMatch(/^spl_/);
    expect(production.split.map((e: { version: number; weight: number }) => [e.version, e.weight])).toEqual([
      [2, 70],
      [3, 30],
    ]);
    const history = (await admin.call('GET', `${target}/label-history`, { query: 'label=production' })).body.items;
    expect(history).toHaveLength(1);
    expect(history[0]).toMatchObject({ source: 'import', fromVersionId: null, toVersionId: production.versionId });
    expect(history[0].toSplit).toEqual(
      production.split.map((e: any) => ({ versionId: e.versionId, weight: e.weight })),
    );
    // The imported policy gates at once: a move to a version production never pointed at needs an evaluation.
    const v1 = (await admin.call('GET', `${target}/versions/1`)).body.id;
    const blocked = await admin.call('PUT', `${target}/labels/production`, { body: { versionId: v1 } });
    expect(blocked.status, JSON.stringify(blocked.body)).toBe(409);
    expect(blocked.body.error.code).toBe('promotion_blocked');
  });

  it('a bad split or policy is refused with pointers, and nothing is stored', async () => {
    const { org, editor } = await newTeam();
    const document = bundle([
      bundlePrompt(
        'Split',
        {
          labels: [
            {
              label: 'production',
              version: 1,
              split: [
                { version: 1, weight: 60 },
                { version: 2, weight: 39 },
              ],
            },
            {
              label: 'canary',
              version: 1,
              split: [
                { version: 1, weight: 50 },
                { version: 9, weight: 50 },
              ],
            },
          ],
          releasePolicy: { protectedLabels: ['Prod'], requireEvaluation: 'yes', maxPassRateDrop: 2 },
        },
        2,
      ),
    ]);
    const refused = await importBundle(editor, org.id, { document });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('import_rejected');
    const paths = refused.body.error.details.items.map((item: { path: string }) => item.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/prompts/0/labels/0/split',
        '/prompts/0/labels/1/split/1/version',
        '/prompts/0/releasePolicy/protectedLabels/0',
        '/prompts/0/releasePolicy/requireEvaluation',
        '/prompts/0/releasePolicy/maxPassRateDrop',
        '/prompts/0/releasePolicy/maxRegressions',
      ]),
    );
    expect((await editor.call('GET', `/organizations/${org.id}/prompts`)).body.items).toEqual([]);
  });

  it('a prompt in setup keeps the default policy, and says so', async () => {
    const { org, editor } = await newTeam();
    const document = bundle([
      bundlePrompt('Setup', { state: 'setup', versions: [], labels: [], releasePolicy: policy }, 0),
    ]);
    const imported = await importBundle(editor, org.id, { document });
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
    expect(imported.body.prompts[0].notes).toContain(
      'The release policy is not kept: a prompt in setup has the default policy.',
    );
    const base = `/organizations/${org.id}/prompts/${imported.body.prompts[0].promptId}`;
    expect((await editor.call('GET', `${base}/release-policy`)).body).toMatchObject({ isDefault: true });
  });

  it('an editor’s import keeps the default policy (writing one is admin-only), and says so; a dry run too', async () => {
    const { org, editor, admin } = await newTeam();
    const document = bundle([bundlePrompt('Gated', { releasePolicy: policy })]);
    const note = 'The release policy is not kept: only an admin sets one, so the prompt has the default policy.';
    const dry = await importBundle(editor, org.id, { document, dryRun: true });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    expect(dry.body.prompts[0].notes).toContain(note);
    const imported = await importBundle(editor, org.id, { document });
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
    expect(imported.body.prompts[0].notes).toContain(note);
    const base = `/organizations/${org.id}/prompts/${imported.body.prompts[0].promptId}`;
    expect((await editor.call('GET', `${base}/release-policy`)).body).toMatchObject({ isDefault: true });
    // An admin's import of the same document keeps it, without the note.
    const other = await newOrganization(admin);
    const byAdmin = await importBundle(admin, other.id, { document });
    expect(byAdmin.status, JSON.stringify(byAdmin.body)).toBe(201);
    expect(byAdmin.body.prompts[0].notes).not.toContain(note);
    const adminBase = `/organizations/${other.id}/prompts/${byAdmin.body.prompts[0].promptId}`;
    expect((await admin.call('GET', `${adminBase}/release-policy`)).body).toMatchObject({
      ...policy,
      isDefault: false,
    });
  });

  it('what the rules decide against the document is noted: a label version its split overrides, a state', async () => {
    const { org, editor } = await newTeam();
    const document = bundle([
      bundlePrompt(
        'Canary',
        {
          labels: [
            { label: 'production', version: 1, split: null },
            {
              label: 'canary',
              version: 2,
              split: [
                { version: 1, weight: 70 },
                { version: 2, weight: 30 },
              ],
            },
          ],
        },
        2,
      ),
      bundlePrompt('Declared active', { state: 'active', labels: [{ label: 'staging', version: 1, split: null }] }),
      bundlePrompt('Declared setup', { state: 'setup' }),
    ]);
    const imported = await importBundle(editor, org.id, { document });
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
    const [canary, active, setup] = imported.body.prompts;
    expect(canary.notes).toContain(
      'Label "canary": version 2 is not kept; with its split the label names version 1, the one with the largest weight.',
    );
    expect(active.notes).toContain(
      'State "active" is not kept: without a production label the prompt is imported in setup.',
    );
    expect(setup.notes).toContain('State "setup" is not kept: with a production label the prompt is imported active.');
    const states = await Promise.all(
      [active, setup].map(async (row: { promptId: string }) => {
        const prompt = await editor.call('GET', `/organizations/${org.id}/prompts/${row.promptId}`);
        return prompt.body.state;
      }),
    );
    expect(states).toEqual(['setup', 'active']);
  });
});
