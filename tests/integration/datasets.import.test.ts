import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { datasetCases, datasets, organizations } from '@/db/schema';
import { newTeam } from '../helpers/api';

async function setup() {
  const team = await newTeam();
  const prompt = (
    await team.editor.call('POST', `/organizations/${team.org.id}/prompts`, { body: { name: 'Imports' } })
  ).body;
  const base = `/organizations/${team.org.id}/prompts/${prompt.id}/dataset`;
  return { ...team, prompt, base };
}

const row = (input: string, expectedOutput = '') => ({ input, expectedOutput });

describe('dataset import', () => {
  it('appends by default; dedupes against existing rows and within the request, first occurrence wins', async () => {
    const { editor, base } = await setup();
    await editor.call('POST', `${base}/cases`, { body: { revision: 0, row: row('existing', 'x') } });
    const result = await editor.call('POST', `${base}/import`, {
      body: {
        revision: 1,
        rows: [
          row('new 1', 'a'),
          row('existing', 'x'),
          row('new 2', 'b'),
          row('new 1', 'a'),
          row('new 1', 'different'),
          row('existing', 'y'),
          row('new 2', 'b'),
        ],
      },
    });
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(result.body).toEqual({
      added: 4,
      skipped: 3,
      count: 5,
      revision: 2,
      skippedRows: [
        { row: 2, reason: 'duplicate' },
        { row: 4, reason: 'duplicate' },
        { row: 7, reason: 'duplicate' },
      ],
      warnings: [],
    });
    const dataset = (await editor.call('GET', base)).body;
    expect(dataset.rows.map((r: any) => [r.position, r.input, r.expectedOutput])).toEqual([
      [1, 'existing', 'x'],
      [2, 'new 1', 'a'],
      [3, 'new 2', 'b'],
      [4, 'new 1', 'different'],
      [5, 'existing', 'y'],
    ]);
  });

  it('an append that adds nothing keeps the revision, so no other client is told the dataset changed', async () => {
    const { editor, base } = await setup();
    await editor.call('POST', `${base}/import`, { body: { revision: 0, rows: [row('a', 'A'), row('b', 'B')] } });
    const again = await editor.call('POST', `${base}/import`, { body: { revision: 1, rows: [row('a', 'A')] } });
    expect(again.body).toMatchObject({ added: 0, skipped: 1, count: 2, revision: 1 });
    const empty = await editor.call('POST', `${base}/import`, { body: { revision: 1, rows: [] } });
    expect(empty.body).toMatchObject({ added: 0, count: 2, revision: 1 });
    expect((await editor.call('GET', base)).body.revision).toBe(1);
    // A client still holding revision 1 writes without a conflict.
    const added = await editor.call('POST', `${base}/cases`, { body: { revision: 1, row: row('c', 'C') } });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    // A stale revision is still refused, even when nothing would be added.
    const stale = await editor.call('POST', `${base}/import`, { body: { revision: 1, rows: [row('a', 'A')] } });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ code: 'dataset_conflict', details: { currentRevision: 2 } });
  });

  it('replace only when asked: existing rows go, duplicates are counted within the request only', async () => {
    const { editor, base } = await setup();
    await editor.call('POST', `${base}/import`, {
      body: { revision: 0, rows: [row('old 1'), row('old 2'), row('keep', 'k')] },
    });
    const replaced = await editor.call('POST', `${base}/import`, {
      body: { revision: 1, mode: 'replace', rows: [row('keep', 'k'), row('fresh'), row('keep', 'k')] },
    });
    expect(replaced.body).toEqual({
      added: 2,
      skipped: 1,
      count: 2,
      revision: 2,
      skippedRows: [{ row: 3, reason: 'duplicate' }],
      warnings: [],
    });
    const dataset = (await editor.call('GET', base)).body;
    expect(dataset.rows.map((r: any) => [r.position, r.input])).toEqual([
      [1, 'keep'],
      [2, 'fresh'],
    ]);
    const emptied = await editor.call('POST', `${base}/import`, { body: { revision: 2, mode: 'replace', rows: [] } });
    expect(emptied.body).toMatchObject({ added: 0, count: 0, revision: 3 });
  });

  it('formats and JSON rows are kept', async () => {
    const { editor, base } = await setup();
    const result = await editor.call('POST', `${base}/import`, {
      body: {
        revision: 0,
        rows: [{ input: '{"a": [1, 2]}', expectedOutput: '"yes"', inputFormat: 'json', referenceFormat: 'json' }],
      },
    });
    expect(result.status).toBe(200);
    expect((await editor.call('GET', base)).body.rows[0]).toMatchObject({
      input: '{"a": [1, 2]}',
      inputFormat: 'json',
      referenceFormat: 'json',
    });
  });

  it('any invalid row rejects the whole import with row errors, writing nothing', async () => {
    const { editor, base } = await setup();
    await editor.call('POST', `${base}/cases`, { body: { revision: 0, row: row('kept') } });
    const before = (await editor.call('GET', base)).body;
    const result = await editor.call('POST', `${base}/import`, {
      body: {
        revision: 1,
        rows: [
          row('fine'),
          { input: '', expectedOutput: 'x' },
          { input: 'x' },
          { input: '{bad', expectedOutput: '', inputFormat: 'json' },
          { input: 'x', expectedOutput: 'y', extra: 1 },
          'text row',
          { input: 'z', expectedOutput: 'nope', referenceFormat: 'json' },
        ],
      },
    });
    expect(result.status).toBe(422);
    expect(result.body.error.code).toBe('import_rejected');
    expect(result.body.error.details).toEqual({
      rowErrors: [
        { row: 2, field: 'input', message: expect.any(String) },
        { row: 3, field: 'expectedOutput', message: expect.any(String) },
        { row: 4, field: 'input', message: expect.any(String) },
        { row: 5, field: 'extra', message: 'Unknown field.' },
        { row: 6, field: '', message: expect.any(String) },
        { row: 7, field: 'expectedOutput', message: expect.any(String) },
      ],
      currentCount: 1,
      availableCapacity: 9,
      requestedAddition: 1,
    });
    expect((await editor.call('GET', base)).body).toEqual(before);
  });

  it('more unique additions than capacity → 422 import_rejected with the numbers, writing nothing', async () => {
    const { editor, base } = await setup();
    await editor.call('POST', `${base}/import`, { body: { revision: 0, rows: [row('1'), row('2'), row('3')] } });
    const before = (await editor.call('GET', base)).body;
    // 8 unique new rows (plus duplicates that do not count) for 7 free places.
    const rows = [...Array.from({ length: 8 }, (_, i) => row(`n${i}`)), row('1'), row('n0')];
    const result = await editor.call('POST', `${base}/import`, { body: { revision: 1, rows } });
    expect(result.status).toBe(422);
    expect(result.body.error).toMatchObject({
      code: 'import_rejected',
      details: { rowErrors: [], currentCount: 3, availableCapacity: 7, requestedAddition: 8 },
    });
    expect((await editor.call('GET', base)).body).toEqual(before);
    // Exactly filling the capacity is fine; duplicates do not count against it.
    const fits = await editor.call('POST', `${base}/import`, {
      body: { revision: 1, rows: [...rows.slice(1, 9), row('n1')] },
    });
    expect(fits.body).toMatchObject({ added: 7, skipped: 2, count: 10 });
  });

  it('replace mode measures capacity against the whole plan', async () => {
    const { editor, base } = await setup();
    await editor.call('POST', `${base}/import`, {
      body: { revision: 0, rows: Array.from({ length: 10 }, (_, i) => row(`old ${i}`)) },
    });
    const tooMany = await editor.call('POST', `${base}/import`, {
      body: { revision: 1, mode: 'replace', rows: Array.from({ length: 11 }, (_, i) => row(`new ${i}`)) },
    });
    expect(tooMany.body.error).toMatchObject({
      code: 'import_rejected',
      details: { currentCount: 10, availableCapacity: 10, requestedAddition: 11 },
    });
    const fits = await editor.call('POST', `${base}/import`, {
      body: { revision: 1, mode: 'replace', rows: Array.from({ length: 10 }, (_, i) => row(`new ${i}`)) },
    });
    expect(fits.body).toMatchObject({ added: 10, count: 10 });
  });

  it('unknown mode and non-array rows are 400', async () => {
    const { editor, base } = await setup();
    expect(
      (await editor.call('POST', `${base}/import`, { body: { revision: 0, mode: 'merge', rows: [] } })).status,
    ).toBe(400);
    expect((await editor.call('POST', `${base}/import`, { body: { revision: 0, rows: 'a,b' } })).status).toBe(400);
    expect((await editor.call('POST', `${base}/import`, { body: { revision: 0 } })).status).toBe(400);
  });

  it('concurrent imports against capacity never exceed it', async () => {
    const { editor, base, org, prompt } = await setup();
    // Each import uses the same revision: the row lock lets one in, the rest see a newer revision.
    const sameRevision = await Promise.all(
      Array.from({ length: 4 }, (_, k) =>
        editor.call('POST', `${base}/import`, {
          body: { revision: 0, rows: Array.from({ length: 6 }, (_, i) => row(`k${k}-${i}`)) },
        }),
      ),
    );
    expect(sameRevision.filter((r) => r.status === 200)).toHaveLength(1);
    expect(sameRevision.filter((r) => r.status === 409 && r.body.error.code === 'dataset_conflict')).toHaveLength(3);

    // Writers that re-read and retry on conflict still never pass the capacity.
    const retrying = async (k: number) => {
      for (;;) {
        const { revision } = (await editor.call('GET', base)).body;
        const result = await editor.call('POST', `${base}/import`, {
          body: { revision, rows: Array.from({ length: 3 }, (_, i) => row(`r${k}-${i}`)) },
        });
        if (result.status !== 409) return result;
      }
    };
    const results = await Promise.all([0, 1, 2, 3].map(retrying));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 422 && r.body.error.code === 'import_rejected')).toHaveLength(3);

    const db = await getDb();
    const [dataset] = await db.select().from(datasets).where(eq(datasets.promptId, prompt.id));
    const cases = await db.select().from(datasetCases).where(eq(datasetCases.datasetId, dataset.id));
    expect(cases).toHaveLength(9);
    expect(cases.map((c) => c.position).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const [orgRow] = await db.select().from(organizations).where(eq(organizations.id, org.id));
    expect(orgRow.plan).toBe('free');
  });
});
