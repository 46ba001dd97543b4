import { describe, expect, it } from 'vitest';
import { and, eq, inArray } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { auditLog, organizations } from '@/db/schema';
import { newTeam } from '../helpers/api';

async function setup() {
  const team = await newTeam();
  const prompt = (
    await team.editor.call('POST', `/organizations/${team.org.id}/prompts`, { body: { name: 'With data' } })
  ).body;
  const base = `/organizations/${team.org.id}/prompts/${prompt.id}/dataset`;
  return { ...team, prompt, base };
}

describe('datasets', () => {
  it('add, update, delete and reorder cases; every write bumps the revision and is audited', async () => {
    const { editor, viewer, base, org } = await setup();
    const a = await editor.call('POST', `${base}/cases`, {
      body: { revision: 0, row: { input: 'What is 2+2?', expectedOutput: '4' } },
    });
    expect(a.status).toBe(201);
    expect(a.body).toEqual({
      id: expect.stringMatching(/^case_/),
      position: 1,
      input: 'What is 2+2?',
      expectedOutput: '4',
      inputFormat: 'text',
      referenceFormat: 'text',
      source: null,
      warnings: [],
    });
    const b = await editor.call('POST', `${base}/cases`, {
      body: {
        revision: 1,
        row: { input: '{"q":1}', expectedOutput: '{"a":1}', inputFormat: 'json', referenceFormat: 'json' },
      },
    });
    expect(b.body).toMatchObject({ position: 2, inputFormat: 'json', referenceFormat: 'json' });
    const c = await editor.call('POST', `${base}/cases`, {
      body: { revision: 2, row: { input: 'Third', expectedOutput: '' } },
    });
    expect(c.body.position).toBe(3);

    const updated = await editor.call('PUT', `${base}/cases/${a.body.id}`, {
      body: { revision: 3, row: { input: 'What is 3+3?', expectedOutput: '6' } },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id: a.body.id, position: 1, input: 'What is 3+3?', expectedOutput: '6' });

    const reordered = await editor.call('PUT', `${base}/order`, {
      body: { revision: 4, caseIds: [c.body.id, a.body.id, b.body.id] },
    });
    expect(reordered.status).toBe(200);
    expect(reordered.body.revision).toBe(5);
    expect(reordered.body.rows.map((r: any) => [r.id, r.position])).toEqual([
      [c.body.id, 1],
      [a.body.id, 2],
      [b.body.id, 3],
    ]);

    const deleted = await editor.call('DELETE', `${base}/cases/${c.body.id}`, { query: 'revision=5' });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ revision: 6, count: 2, capacity: 10 });
    expect(deleted.body.rows.map((r: any) => [r.id, r.position])).toEqual([
      [a.body.id, 1],
      [b.body.id, 2],
    ]);
    const read = await viewer.call('GET', base);
    expect(read.body).toEqual(deleted.body);

    const db = await getDb();
    const ops = (
      await db
        .select()
        .from(auditLog)
        .where(and(eq(auditLog.organizationId, org.id), inArray(auditLog.targetType, ['dataset', 'case'])))
    ).map((e) => [e.operation, e.targetType, e.targetId.split('_')[0]]);
    // A one-case write names the case; a reorder, the dataset.
    expect(ops.sort()).toEqual(
      [
        ['dataset.addCase', 'case', 'case'],
        ['dataset.addCase', 'case', 'case'],
        ['dataset.addCase', 'case', 'case'],
        ['dataset.deleteCase', 'case', 'case'],
        ['dataset.reorder', 'dataset', 'ds'],
        ['dataset.updateCase', 'case', 'case'],
      ].sort(),
    );
  });

  it('an update may keep its own pair; reordering an empty dataset with [] works', async () => {
    const { editor, base } = await setup();
    expect((await editor.call('PUT', `${base}/order`, { body: { revision: 0, caseIds: [] } })).status).toBe(200);
    const a = await editor.call('POST', `${base}/cases`, {
      body: { revision: 1, row: { input: 'x', expectedOutput: 'y' } },
    });
    const same = await editor.call('PUT', `${base}/cases/${a.body.id}`, {
      body: { revision: 2, row: { input: 'x', expectedOutput: 'y', referenceFormat: 'text' } },
    });
    expect(same.status).toBe(200);
  });

  it('update changes only the fields given', async () => {
    const { editor, base } = await setup();
    const a = (
      await editor.call('POST', `${base}/cases`, {
        body: { revision: 0, row: { input: '{"q": 1}', expectedOutput: 'one', inputFormat: 'json' } },
      })
    ).body;
    const onlyInput = await editor.call('PUT', `${base}/cases/${a.id}`, {
      body: { revision: 1, row: { input: '{"q": 2}' } },
    });
    expect(onlyInput.body).toEqual({ ...a, input: '{"q": 2}' });
    const onlyFormat = await editor.call('PUT', `${base}/cases/${a.id}`, {
      body: { revision: 2, row: { expectedOutput: '2', referenceFormat: 'json' } },
    });
    expect(onlyFormat.body).toEqual({ ...a, input: '{"q": 2}', expectedOutput: '2', referenceFormat: 'json' });
  });

  it('capacity follows the plan: Pro holds 500; rows are kept when the plan shrinks', async () => {
    const { editor, base, org } = await setup();
    const db = await getDb();
    await db.update(organizations).set({ plan: 'pro' }).where(eq(organizations.id, org.id));
    const rows = Array.from({ length: 12 }, (_, i) => ({ input: `q${i}`, expectedOutput: `a${i}` }));
    const imported = await editor.call('POST', `${base}/import`, { body: { revision: 0, rows } });
    expect(imported.status).toBe(200);
    expect((await editor.call('GET', base)).body).toMatchObject({ count: 12, capacity: 500 });

    await db.update(organizations).set({ plan: 'free' }).where(eq(organizations.id, org.id));
    const after = await editor.call('GET', base);
    expect(after.body).toMatchObject({ count: 12, capacity: 10 });
    expect(after.body.rows).toHaveLength(12);
    const full = await editor.call('POST', `${base}/cases`, {
      body: { revision: 1, row: { input: 'one more', expectedOutput: '' } },
    });
    expect(full.status).toBe(409);
    expect(full.body.error).toMatchObject({
      code: 'invalid_state',
      details: { state: 'at_capacity', count: 12, capacity: 10 },
    });
    // Deleting still works below the shrunken capacity.
    expect(
      (await editor.call('DELETE', `${base}/cases/${after.body.rows[0].id}`, { query: 'revision=1' })).status,
    ).toBe(200);
  });

  it('near capacity on a server that cannot sell Pro (no Stripe), the warning advises no upgrade', async () => {
    expect(process.env.STRIPE_SECRET_KEY).toBeUndefined();
    const { editor, base, org } = await setup();
    const rows = Array.from({ length: 9 }, (_, i) => ({ input: `q${i}`, expectedOutput: `a${i}` }));
    expect((await editor.call('POST', `${base}/import`, { body: { revision: 0, rows } })).status).toBe(200);
    const warnings = (
      await editor.call('GET', `/organizations/${org.id}/warnings`, { query: 'kind=dataset_near_capacity' })
    ).body.items;
    expect(warnings).toHaveLength(1);
    expect(warnings[0].message).toBe('The dataset of “With data” holds 9 of 10 cases allowed on the Free plan.');
  });
});
