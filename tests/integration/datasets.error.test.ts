import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { organizations } from '@/db/schema';
import { newTeam, type TestUser } from '../helpers/api';

function expectError(result: { status: number; body: any }, status: number, code: string) {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.body.error.code).toBe(code);
}

// A dataset with two cases at revision 2.
async function setup() {
  const team = await newTeam();
  const prompt = (
    await team.editor.call('POST', `/organizations/${team.org.id}/prompts`, { body: { name: 'Guarded' } })
  ).body;
  const base = `/organizations/${team.org.id}/prompts/${prompt.id}/dataset`;
  const a = (
    await team.editor.call('POST', `${base}/cases`, { body: { revision: 0, row: { input: 'A', expectedOutput: '1' } } })
  ).body;
  const b = (
    await team.editor.call('POST', `${base}/cases`, { body: { revision: 1, row: { input: 'B', expectedOutput: '2' } } })
  ).body;
  return { ...team, prompt, base, a, b };
}

const snapshot = (user: TestUser, base: string) => user.call('GET', base).then((r) => r.body);

describe('dataset rejections change nothing', () => {
  it('stale revision on every write → 409 dataset_conflict with the current revision', async () => {
    const { editor, base, a } = await setup();
    const before = await snapshot(editor, base);
    const attempts = [
      editor.call('POST', `${base}/cases`, { body: { revision: 1, row: { input: 'C', expectedOutput: '3' } } }),
      editor.call('PUT', `${base}/cases/${a.id}`, { body: { revision: 0, row: { input: 'C', expectedOutput: '3' } } }),
      editor.call('DELETE', `${base}/cases/${a.id}`, { query: 'revision=1' }),
      editor.call('PUT', `${base}/order`, { body: { revision: 3, caseIds: [] } }),
      editor.call('POST', `${base}/import`, { body: { revision: 0, rows: [{ input: 'C', expectedOutput: '3' }] } }),
    ];
    for (const result of await Promise.all(attempts)) {
      expectError(result, 409, 'dataset_conflict');
      expect(result.body.error.details).toEqual({ currentRevision: 2 });
    }
    expect(await snapshot(editor, base)).toEqual(before);
  });

  it.each([
    ['missing cases', (a: any) => [a.id]],
    ['an unknown id', (a: any, b: any) => [a.id, b.id, 'case_unknown']],
    ['a repeated id', (a: any, b: any) => [a.id, b.id, a.id]],
    ['nothing', () => []],
  ])('reorder listing %s → 422 invalid_order', async (_label, ids) => {
    const { editor, base, a, b } = await setup();
    const before = await snapshot(editor, base);
    expectError(
      await editor.call('PUT', `${base}/order`, { body: { revision: 2, caseIds: ids(a, b) } }),
      422,
      'invalid_order',
    );
    expect(await snapshot(editor, base)).toEqual(before);
  });

  it.each([
    ['empty input', { input: '', expectedOutput: 'x' }, 'row.input'],
    ['non-string input', { input: 5, expectedOutput: 'x' }, 'row.input'],
    ['unknown format', { input: 'x', expectedOutput: 'y', inputFormat: 'xml' }, 'row.inputFormat'],
    ['json input that is not JSON', { input: '{nope', expectedOutput: 'y', inputFormat: 'json' }, 'row.input'],
    [
      'json reference that is not JSON',
      { input: 'x', expectedOutput: 'nope', referenceFormat: 'json' },
      'row.expectedOutput',
    ],
    ['input too long', { input: 'x'.repeat(100_001), expectedOutput: 'y' }, 'row.input'],
    ['unknown field', { input: 'x', expectedOutput: 'y', notes: 'n' }, 'row.notes'],
  ])('add or update with %s → 400 at %s', async (_label, row, path) => {
    const { editor, base, a } = await setup();
    const before = await snapshot(editor, base);
    for (const result of [
      await editor.call('POST', `${base}/cases`, { body: { revision: 2, row } }),
      await editor.call('PUT', `${base}/cases/${a.id}`, { body: { revision: 2, row } }),
    ]) {
      expectError(result, 400, 'invalid_request');
      expect(result.body.error.details.issues.map((i: any) => i.path)).toContain(path);
    }
    expect(await snapshot(editor, base)).toEqual(before);
  });

  it('add needs input and expectedOutput; update needs at least one field, and the merged row must be valid', async () => {
    const { editor, base, a } = await setup();
    const before = await snapshot(editor, base);
    const missing = await editor.call('POST', `${base}/cases`, { body: { revision: 2, row: { input: 'x' } } });
    expectError(missing, 400, 'invalid_request');
    expect(missing.body.error.details.issues.map((i: any) => i.path)).toEqual(['row.expectedOutput']);
    expectError(
      await editor.call('PUT', `${base}/cases/${a.id}`, { body: { revision: 2, row: {} } }),
      400,
      'invalid_request',
    );
    // The stored expected output "1" is valid JSON, the stored input "A" is not.
    const badMerge = await editor.call('PUT', `${base}/cases/${a.id}`, {
      body: { revision: 2, row: { inputFormat: 'json' } },
    });
    expectError(badMerge, 400, 'invalid_request');
    expect(badMerge.body.error.details.issues).toEqual([{ path: 'row.input', message: expect.any(String) }]);
    expect(await snapshot(editor, base)).toEqual(before);
  });

  it('bad revision parameters → 400', async () => {
    const { editor, base, a } = await setup();
    expectError(await editor.call('DELETE', `${base}/cases/${a.id}`), 400, 'invalid_request');
    expectError(
      await editor.call('DELETE', `${base}/cases/${a.id}`, { query: 'revision=abc' }),
      400,
      'invalid_request',
    );
    expectError(await editor.call('DELETE', `${base}/cases/${a.id}`, { query: 'revision=-1' }), 400, 'invalid_request');
    expectError(
      await editor.call('POST', `${base}/cases`, { body: { row: { input: 'x', expectedOutput: 'y' } } }),
      400,
      'invalid_request',
    );
  });

  it('an exact duplicate pair on add or update → 409 invalid_state duplicate', async () => {
    const { editor, base, a, b } = await setup();
    const before = await snapshot(editor, base);
    const added = await editor.call('POST', `${base}/cases`, {
      body: { revision: 2, row: { input: 'A', expectedOutput: '1' } },
    });
    expectError(added, 409, 'invalid_state');
    expect(added.body.error.details).toEqual({ state: 'duplicate', caseId: a.id });
    const updated = await editor.call('PUT', `${base}/cases/${b.id}`, {
      body: { revision: 2, row: { input: 'A', expectedOutput: '1' } },
    });
    expectError(updated, 409, 'invalid_state');
    expect(await snapshot(editor, base)).toEqual(before);
  });

  it('adding past capacity → 409 invalid_state at_capacity', async () => {
    const { editor, base } = await setup();
    const rows = Array.from({ length: 8 }, (_, i) => ({ input: `fill ${i}`, expectedOutput: '' }));
    expect((await editor.call('POST', `${base}/import`, { body: { revision: 2, rows } })).body.count).toBe(10);
    const before = await snapshot(editor, base);
    const result = await editor.call('POST', `${base}/cases`, {
      body: { revision: 3, row: { input: 'eleventh', expectedOutput: '' } },
    });
    expectError(result, 409, 'invalid_state');
    expect(result.body.error.details.state).toBe('at_capacity');
    expect(await snapshot(editor, base)).toEqual(before);
  });

  it('unknown or foreign case ids → 404', async () => {
    const { editor, base } = await setup();
    const other = await setup();
    const before = await snapshot(editor, base);
    expectError(
      await editor.call('PUT', `${base}/cases/${other.a.id}`, {
        body: { revision: 2, row: { input: 'x', expectedOutput: 'y' } },
      }),
      404,
      'not_found',
    );
    expectError(await editor.call('DELETE', `${base}/cases/case_missing`, { query: 'revision=2' }), 404, 'not_found');
    expect(await snapshot(editor, base)).toEqual(before);
    expectError(await other.editor.call('GET', base), 404, 'not_found');
  });

  it('viewers, archived prompts and read-only organizations cannot write', async () => {
    const { admin, editor, viewer, base, a, org, prompt } = await setup();
    const before = await snapshot(editor, base);
    const writes = (user: TestUser) => [
      () => user.call('POST', `${base}/cases`, { body: { revision: 2, row: { input: 'C', expectedOutput: '3' } } }),
      () =>
        user.call('PUT', `${base}/cases/${a.id}`, { body: { revision: 2, row: { input: 'C', expectedOutput: '3' } } }),
      () => user.call('DELETE', `${base}/cases/${a.id}`, { query: 'revision=2' }),
      () => user.call('PUT', `${base}/order`, { body: { revision: 2, caseIds: [a.id] } }),
      () => user.call('POST', `${base}/import`, { body: { revision: 2, rows: [] } }),
    ];
    for (const write of writes(viewer)) expectError(await write(), 403, 'forbidden');

    const db = await getDb();
    await db.update(organizations).set({ readOnly: true }).where(eq(organizations.id, org.id));
    for (const write of writes(editor)) expectError(await write(), 403, 'read_only');
    await db.update(organizations).set({ readOnly: false }).where(eq(organizations.id, org.id));

    await admin.call('POST', `/organizations/${org.id}/prompts/${prompt.id}/archive`);
    for (const write of writes(editor)) {
      const result = await write();
      expectError(result, 409, 'invalid_state');
      expect(result.body.error.details).toEqual({ state: 'archived' });
    }
    expect(await snapshot(editor, base)).toEqual(before);
  });
});
