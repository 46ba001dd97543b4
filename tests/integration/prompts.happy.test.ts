import { describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { auditLog, datasets, promptLabels, promptVersions } from '@/db/schema';
import { newId } from '@/server/ids';
import { newTeam } from '../helpers/api';

describe('prompts', () => {
  it('create starts in setup with an empty dataset, and is audited', async () => {
    const { org, editor } = await newTeam();
    const created = await editor.call('POST', `/organizations/${org.id}/prompts`, {
      body: { name: '  Support reply  ' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^prm_/),
      name: 'Support reply',
      state: 'setup',
      versionCount: 0,
      createdAt: expect.any(String),
      productionVersionId: null,
      labels: [],
      archivedAt: null,
    });
    const db = await getDb();
    const [dataset] = await db.select().from(datasets).where(eq(datasets.promptId, created.body.id));
    expect(dataset).toMatchObject({ organizationId: org.id, revision: 0 });
    const audits = await db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.organizationId, org.id), eq(auditLog.operation, 'prompt.create')));
    expect(audits).toHaveLength(1);
    expect(audits[0]).toMatchObject({ userId: editor.id, targetId: created.body.id });

    const fetched = await editor.call('GET', `/organizations/${org.id}/prompts/${created.body.id}`);
    expect(fetched.body).toEqual(created.body);
    const dataset2 = await editor.call('GET', `/organizations/${org.id}/prompts/${created.body.id}/dataset`);
    expect(dataset2.body).toEqual({ id: dataset.id, revision: 0, count: 0, capacity: 10, rows: [], warnings: [] });
  });

  it('lists newest first with paging, state filter and case-insensitive search', async () => {
    const { org, admin, viewer } = await newTeam();
    const names = ['Alpha mail', 'beta MAIL', 'Gamma', '100%_off'];
    const ids: string[] = [];
    for (const name of names)
      ids.push((await admin.call('POST', `/organizations/${org.id}/prompts`, { body: { name } })).body.id);
    await admin.call('POST', `/organizations/${org.id}/prompts/${ids[2]}/archive`);

    const first = await viewer.call('GET', `/organizations/${org.id}/prompts`, { query: 'limit=3' });
    expect(first.status).toBe(200);
    expect(first.body.items.map((p: any) => p.name)).toEqual(['100%_off', 'Gamma', 'beta MAIL']);
    const second = await viewer.call('GET', `/organizations/${org.id}/prompts`, {
      query: `limit=3&cursor=${first.body.nextCursor}`,
    });
    expect(second.body.items.map((p: any) => p.name)).toEqual(['Alpha mail']);
    expect(second.body.nextCursor).toBeNull();

    const search = await viewer.call('GET', `/organizations/${org.id}/prompts`, { query: 'search=Mail' });
    expect(search.body.items.map((p: any) => p.name)).toEqual(['beta MAIL', 'Alpha mail']);
    const literal = await viewer.call('GET', `/organizations/${org.id}/prompts`, {
      query: `search=${encodeURIComponent('%_')}`,
    });
    expect(literal.body.items.map((p: any) => p.name)).toEqual(['100%_off']);
    const archived = await viewer.call('GET', `/organizations/${org.id}/prompts`, { query: 'state=archived' });
    expect(archived.body.items.map((p: any) => p.id)).toEqual([ids[2]]);
    const setup = await viewer.call('GET', `/organizations/${org.id}/prompts`, { query: 'state=setup&search=a' });
    expect(setup.body.items.map((p: any) => p.name)).toEqual(['beta MAIL', 'Alpha mail']);
  });

  it('rename and archive; archiving twice returns the prompt unchanged', async () => {
    const { org, admin } = await newTeam();
    const prompt = (await admin.call('POST', `/organizations/${org.id}/prompts`, { body: { name: 'Old' } })).body;
    const renamed = await admin.call('PATCH', `/organizations/${org.id}/prompts/${prompt.id}`, {
      body: { name: 'x'.repeat(200) },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.name).toBe('x'.repeat(200));

    const archived = await admin.call('POST', `/organizations/${org.id}/prompts/${prompt.id}/archive`);
    expect(archived.status).toBe(200);
    expect(archived.body.state).toBe('archived');
    expect(archived.body.archivedAt).toEqual(expect.any(String));
    const again = await admin.call('POST', `/organizations/${org.id}/prompts/${prompt.id}/archive`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(archived.body);
    const db = await getDb();
    const audits = await db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.targetId, prompt.id), eq(auditLog.operation, 'prompt.archive')));
    expect(audits).toHaveLength(1);
  });

  it('reads labels and the production version from saved versions', async () => {
    const { org, admin } = await newTeam();
    const prompt = (await admin.call('POST', `/organizations/${org.id}/prompts`, { body: { name: 'Labelled' } })).body;
    const db = await getDb();
    const versionId = newId('ver');
    const content = {
      messages: [{ role: 'system', content: 'Be brief.' }],
      inputType: 'user_message',
      modelRouteId: 'local/echo',
      modelId: 'echo',
      temperature: 0.5,
      outputSchema: '',
      customMetrics: [],
    };
    await db.insert(promptVersions).values({
      id: versionId,
      organizationId: org.id,
      promptId: prompt.id,
      number: 1,
      content,
      createdBy: admin.id,
      createdByClient: 'test',
    });
    await db.insert(promptLabels).values([
      { organizationId: org.id, promptId: prompt.id, label: 'staging', versionId, updatedBy: admin.id },
      { organizationId: org.id, promptId: prompt.id, label: 'production', versionId, updatedBy: admin.id },
    ]);
    const fetched = await admin.call('GET', `/organizations/${org.id}/prompts/${prompt.id}`);
    expect(fetched.body.productionVersionId).toBe(versionId);
    expect(fetched.body.labels).toEqual([
      { label: 'production', versionId, version: 1, splitId: null },
      { label: 'staging', versionId, version: 1, splitId: null },
    ]);
    // A fresh draft starts from the latest version.
    const draft = await admin.call('GET', `/organizations/${org.id}/prompts/${prompt.id}/draft`);
    expect(draft.body).toMatchObject({ revision: 0, content, variables: [] });
  });

  it('lists the built-in local model route, always available', async () => {
    const { org, viewer } = await newTeam();
    const routes = await viewer.call('GET', `/organizations/${org.id}/model-routes`);
    expect(routes.status).toBe(200);
    expect(routes.body.items[0]).toEqual({
      id: 'local/echo',
      provider: 'local',
      modelId: 'echo',
      name: 'Local deterministic (no provider)',
      available: true,
    });
    expect(routes.body.items.map((r: any) => r.id)).toEqual(
      expect.arrayContaining(['openai/gpt-4o-mini', 'openai/gpt-4o']),
    );
  });
});
