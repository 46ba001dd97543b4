import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { organizations, prompts } from '@/db/schema';
import { newTeam, newUser } from '../helpers/api';

function expectError(result: { status: number; body: any }, status: number, code: string) {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.body.error.code).toBe(code);
  expect(result.body.error.details).toBeTypeOf('object');
}

async function promptCount(organizationId: string) {
  const db = await getDb();
  return (await db.select().from(prompts).where(eq(prompts.organizationId, organizationId))).length;
}

describe('prompt rules', () => {
  it.each([
    ['empty name', { name: '' }],
    ['blank name', { name: '   ' }],
    ['name over 200 characters', { name: 'x'.repeat(201) }],
    ['missing name', {}],
    ['name not a string', { name: 7 }],
    ['unknown field', { name: 'A', state: 'active' }],
  ])('create with %s → 400, nothing created', async (_label, body) => {
    const { org, admin } = await newTeam();
    expectError(await admin.call('POST', `/organizations/${org.id}/prompts`, { body }), 400, 'invalid_request');
    expect(await promptCount(org.id)).toBe(0);
  });

  it('viewers cannot create, rename or archive; strangers see 404', async () => {
    const { org, admin, viewer } = await newTeam();
    const prompt = (await admin.call('POST', `/organizations/${org.id}/prompts`, { body: { name: 'Mine' } })).body;
    const denied = await viewer.call('POST', `/organizations/${org.id}/prompts`, { body: { name: 'Nope' } });
    expectError(denied, 403, 'forbidden');
    expect(denied.body.error.details).toEqual({ requiredRole: 'editor', role: 'viewer' });
    expectError(
      await viewer.call('PATCH', `/organizations/${org.id}/prompts/${prompt.id}`, { body: { name: 'Nope' } }),
      403,
      'forbidden',
    );
    expectError(await viewer.call('POST', `/organizations/${org.id}/prompts/${prompt.id}/archive`), 403, 'forbidden');
    expect((await viewer.call('GET', `/organizations/${org.id}/prompts/${prompt.id}`)).body).toEqual(prompt);
    expect(await promptCount(org.id)).toBe(1);

    const stranger = await newUser();
    expectError(await stranger.call('GET', `/organizations/${org.id}/prompts`), 404, 'not_found');
    expectError(await stranger.call('GET', `/organizations/${org.id}/prompts/${prompt.id}`), 404, 'not_found');
  });

  it('a prompt of another organization is 404 even for an admin there', async () => {
    const first = await newTeam();
    const second = await newTeam();
    const prompt = (
      await first.admin.call('POST', `/organizations/${first.org.id}/prompts`, { body: { name: 'Secret' } })
    ).body;
    expectError(
      await second.admin.call('GET', `/organizations/${second.org.id}/prompts/${prompt.id}`),
      404,
      'not_found',
    );
    expectError(
      await second.admin.call('PATCH', `/organizations/${second.org.id}/prompts/${prompt.id}`, {
        body: { name: 'Taken' },
      }),
      404,
      'not_found',
    );
    expectError(
      await second.admin.call('POST', `/organizations/${second.org.id}/prompts/${prompt.id}/archive`),
      404,
      'not_found',
    );
    expectError(await second.admin.call('GET', `/organizations/${second.org.id}/prompts/prm_nope`), 404, 'not_found');
    expect((await first.admin.call('GET', `/organizations/${first.org.id}/prompts/${prompt.id}`)).body.name).toBe(
      'Secret',
    );
  });

  it('an archived prompt cannot be renamed', async () => {
    const { org, editor } = await newTeam();
    const prompt = (await editor.call('POST', `/organizations/${org.id}/prompts`, { body: { name: 'Old' } })).body;
    await editor.call('POST', `/organizations/${org.id}/prompts/${prompt.id}/archive`);
    const result = await editor.call('PATCH', `/organizations/${org.id}/prompts/${prompt.id}`, {
      body: { name: 'New' },
    });
    expectError(result, 409, 'invalid_state');
    expect(result.body.error.details).toEqual({ state: 'archived' });
    expect((await editor.call('GET', `/organizations/${org.id}/prompts/${prompt.id}`)).body.name).toBe('Old');
  });

  it('a read-only organization refuses prompt writes but still reads', async () => {
    const { org, editor } = await newTeam();
    const prompt = (await editor.call('POST', `/organizations/${org.id}/prompts`, { body: { name: 'Frozen' } })).body;
    const db = await getDb();
    await db.update(organizations).set({ readOnly: true }).where(eq(organizations.id, org.id));
    expectError(
      await editor.call('POST', `/organizations/${org.id}/prompts`, { body: { name: 'More' } }),
      403,
      'read_only',
    );
    expectError(
      await editor.call('PATCH', `/organizations/${org.id}/prompts/${prompt.id}`, { body: { name: 'Renamed' } }),
      403,
      'read_only',
    );
    expectError(await editor.call('POST', `/organizations/${org.id}/prompts/${prompt.id}/archive`), 403, 'read_only');
    expect((await editor.call('GET', `/organizations/${org.id}/prompts/${prompt.id}`)).body).toEqual(prompt);
    expect(await promptCount(org.id)).toBe(1);
  });

  it.each([
    ['state=deleted'],
    ['limit=0'],
    ['limit=101'],
    ['search='],
    ['cursor=bad'],
    ['sort=name'],
    ['search=a&search=b'],
  ])('list with %s → 400', async (query) => {
    const { org, viewer } = await newTeam();
    expectError(await viewer.call('GET', `/organizations/${org.id}/prompts`, { query }), 400, 'invalid_request');
  });

  it('a cursor another list issued, or a forged one, is refused on the prompt and organization lists', async () => {
    const { org, admin } = await newTeam();
    const cursorOf = (values: unknown[]) => Buffer.from(JSON.stringify(values)).toString('base64url');
    for (const name of ['A', 'B']) await admin.call('POST', `/organizations/${org.id}/prompts`, { body: { name } });
    const promptsPage = await admin.call('GET', `/organizations/${org.id}/prompts`, { query: 'limit=1' });
    const promptCursor: string = promptsPage.body.nextCursor;
    expect(promptCursor).toEqual(expect.any(String));
    // The prompt list's own cursor still pages.
    expect(
      (await admin.call('GET', `/organizations/${org.id}/prompts`, { query: `cursor=${promptCursor}` })).body.items,
    ).toHaveLength(1);
    for (const cursor of [cursorOf(["prm_' or 1=1--"]), cursorOf([org.id]), cursorOf([1])])
      expectError(
        await admin.call('GET', `/organizations/${org.id}/prompts`, { query: `cursor=${cursor}` }),
        400,
        'invalid_request',
      );
    for (const cursor of [promptCursor, cursorOf([1])])
      expectError(await admin.call('GET', '/organizations', { query: `cursor=${cursor}` }), 400, 'invalid_request');
  });

  it('an idempotent create replays instead of creating twice', async () => {
    const { org, editor } = await newTeam();
    const headers = { 'idempotency-key': 'create-prompt-0001' };
    const first = await editor.call('POST', `/organizations/${org.id}/prompts`, { body: { name: 'Once' }, headers });
    const again = await editor.call('POST', `/organizations/${org.id}/prompts`, { body: { name: 'Once' }, headers });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(await promptCount(org.id)).toBe(1);
  });

  it('model routes are for members only', async () => {
    const { org } = await newTeam();
    const stranger = await newUser();
    expectError(await stranger.call('GET', `/organizations/${org.id}/model-routes`), 404, 'not_found');
    expectError(
      await stranger.call('GET', `/organizations/${org.id}/model-routes`, { query: 'x=1' }),
      400,
      'invalid_request',
    );
  });

  it('a replayed draft update returns the first response and swaps only once', async () => {
    const { org, editor } = await newTeam();
    const prompt = (await editor.call('POST', `/organizations/${org.id}/prompts`, { body: { name: 'Replay' } })).body;
    const path = `/organizations/${org.id}/prompts/${prompt.id}/draft`;
    const body = { content: { messages: [{ role: 'user', content: 'x' }], inputType: 'user_message' }, revision: 0 };
    const headers = { 'idempotency-key': 'draft-save-000001' };
    const first = await editor.call('PUT', path, { body, headers });
    const again = await editor.call('PUT', path, { body, headers });
    expect(first.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect((await editor.call('GET', path)).body.revision).toBe(1);
  });
});
