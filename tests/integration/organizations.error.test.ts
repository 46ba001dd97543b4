import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { memberships, organizations } from '@/db/schema';
import { newId } from '@/server/ids';
import { call, newOrganization, newTeam, newUser } from '../helpers/api';

function expectError(result: { status: number; body: any }, status: number, code: string) {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.body.error.code).toBe(code);
  expect(typeof result.body.error.message).toBe('string');
  expect(result.body.error.details).toBeTypeOf('object');
  expect(result.body.error.requestId).toMatch(/^req_/);
}

describe('organization input rules', () => {
  it.each([
    ['empty name', { name: '' }],
    ['blank name', { name: '   ' }],
    ['name over 160 characters', { name: 'x'.repeat(161) }],
    ['missing name', {}],
    ['name not a string', { name: 42 }],
    ['unknown field', { name: 'Acme', plan: 'pro' }],
    ['array body', ['Acme']],
    ['null body', null],
  ])('create with %s → 400 invalid_request and nothing created', async (_label, body) => {
    const user = await newUser();
    const result = await user.call('POST', '/organizations', { body });
    expectError(result, 400, 'invalid_request');
    expect((await user.call('GET', '/organizations')).body.items).toHaveLength(0);
  });

  it('accepts a name of exactly 160 characters', async () => {
    const user = await newUser();
    expect((await user.call('POST', '/organizations', { body: { name: 'x'.repeat(160) } })).status).toBe(201);
  });

  it('rejects a duplicated JSON field', async () => {
    const user = await newUser();
    const result = await user.call('POST', '/organizations', {
      rawBody: '{"name":"A","name":"B"}',
      headers: { 'content-type': 'application/json' },
    });
    expectError(result, 400, 'invalid_request');
    expect(result.body.error.details.issues[0].path).toBe('name');
  });

  it('rejects malformed JSON and a non-JSON content type, with one issue at the path "" saying so', async () => {
    const user = await newUser();
    const malformed = await user.call('POST', '/organizations', {
      rawBody: '{"name":',
      headers: { 'content-type': 'application/json' },
    });
    expectError(malformed, 400, 'invalid_request');
    expect(malformed.body.error.details.issues).toEqual([{ path: '', message: malformed.body.error.message }]);
    const form = await user.call('POST', '/organizations', {
      rawBody: 'name=Acme',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectError(form, 400, 'invalid_request');
    expect(form.body.error.details.issues).toEqual([{ path: '', message: expect.stringContaining('Content-Type') }]);
    expect((await user.call('GET', '/organizations')).body.items).toEqual([]);
  });

  it('a name of only spaces is refused next to the field; any other character is kept as given', async () => {
    const { org, admin } = await newTeam();
    for (const [path, body] of [
      ['/organizations', { name: '   ' }],
      [`/organizations/${org.id}/prompts`, { name: ' \t ' }],
    ] as const) {
      const refused = await admin.call('POST', path, { body });
      expectError(refused, 400, 'invalid_request');
      expect(refused.body.error.details.issues[0].path).toBe('name');
    }
    expect((await admin.call('GET', `/organizations/${org.id}/prompts`)).body.items).toEqual([]);
    const kept = await admin.call('POST', '/organizations', { body: { name: 'Ünïcode 名前 · Co\u200b' } });
    expect(kept.status).toBe(201);
    expect(kept.body.name).toBe('Ünïcode 名前 · Co\u200b');
  });

  it('lists validation issues with paths', async () => {
    const user = await newUser();
    const result = await user.call('POST', '/organizations', { body: { name: 'A', extra: 1 } });
    expect(result.body.error.details.issues).toEqual([{ path: 'extra', message: 'Unknown field.' }]);
  });

  it('lists at most 100 issues: a body of 5,000 unknown fields is told about 99 and how many more', async () => {
    const user = await newUser();
    const body: Record<string, unknown> = { name: 'A' };
    for (let i = 0; i < 5000; i++) body[`f${i}`] = 1;
    const result = await user.call('POST', '/organizations', { body });
    expectError(result, 400, 'invalid_request');
    const issues = result.body.error.details.issues;
    expect(issues).toHaveLength(100);
    expect(issues[0]).toEqual({ path: 'f0', message: 'Unknown field.' });
    expect(issues[98]).toEqual({ path: 'f98', message: 'Unknown field.' });
    expect(issues[99]).toEqual({ path: '', message: '4901 more issues are not listed.' });
    expect((await user.call('GET', '/organizations')).body.items).toEqual([]);
  });

  it.each([
    ['limit=0'],
    ['limit=101'],
    ['limit=abc'],
    ['limit=2.5'],
    ['limit='],
    ['limit=5&limit=6'],
    ['cursor='],
    ['cursor=not-a-cursor'],
    ['unknown=1'],
  ])('list with %s → 400', async (query) => {
    const user = await newUser();
    expectError(await user.call('GET', '/organizations', { query }), 400, 'invalid_request');
  });

  it('rejects a body on an operation that takes none, and query parameters where none are defined', async () => {
    const { org, admin } = await newTeam();
    expectError(
      await admin.call('POST', `/organizations/${org.id}/deletion-link`, { body: { confirm: true } }),
      400,
      'invalid_request',
    );
    expect((await admin.call('POST', `/organizations/${org.id}/deletion-link`, { body: {} })).status).toBe(200);
    expectError(
      await admin.call('GET', `/organizations/${org.id}`, { query: 'expand=members' }),
      400,
      'invalid_request',
    );
  });

  it('unknown routes and methods use the error envelope', async () => {
    const user = await newUser();
    expectError(await user.call('GET', '/nope'), 404, 'not_found');
    const wrongMethod = await user.call('DELETE', '/organizations');
    expectError(wrongMethod, 405, 'method_not_allowed');
    expect(wrongMethod.headers.get('allow')).toContain('GET');
  });
});

describe('roles and membership', () => {
  it('a non-admin renaming gets 403 admin_required and the name stays', async () => {
    const { org, editor, viewer, admin } = await newTeam();
    for (const user of [editor, viewer]) {
      const result = await user.call('PATCH', `/organizations/${org.id}`, { body: { name: 'Hijacked' } });
      expectError(result, 403, 'admin_required');
    }
    expect((await admin.call('GET', `/organizations/${org.id}`)).body.name).toBe(org.name);
  });

  it('non-admins cannot get the deletion link or manage members', async () => {
    const { org, editor, viewer, admin } = await newTeam();
    const outsider = await newUser();
    expectError(await editor.call('POST', `/organizations/${org.id}/deletion-link`), 403, 'admin_required');
    expectError(
      await viewer.call('POST', `/organizations/${org.id}/members`, {
        body: { email: outsider.email, role: 'viewer' },
      }),
      403,
      'admin_required',
    );
    expectError(
      await editor.call('PATCH', `/organizations/${org.id}/members/${viewer.id}`, { body: { role: 'admin' } }),
      403,
      'admin_required',
    );
    expectError(await editor.call('DELETE', `/organizations/${org.id}/members/${admin.id}`), 403, 'admin_required');
    expect((await admin.call('GET', `/organizations/${org.id}/members`)).body.items).toHaveLength(3);
  });

  it('adding a member requires an account that has signed in once', async () => {
    const { org, admin } = await newTeam();
    const result = await admin.call('POST', `/organizations/${org.id}/members`, {
      body: { email: 'nobody-here@example.test', role: 'viewer' },
    });
    expectError(result, 404, 'not_found');
  });

  it('adding an existing member is 409 invalid_state', async () => {
    const { org, admin, editor } = await newTeam();
    expectError(
      await admin.call('POST', `/organizations/${org.id}/members`, { body: { email: editor.email, role: 'viewer' } }),
      409,
      'invalid_state',
    );
  });

  it('rejects an unknown role', async () => {
    const { org, admin, editor } = await newTeam();
    expectError(
      await admin.call('PATCH', `/organizations/${org.id}/members/${editor.id}`, { body: { role: 'owner' } }),
      400,
      'invalid_request',
    );
  });

  it('never leaves an organization without an admin', async () => {
    const admin = await newUser();
    const org = await newOrganization(admin);
    const demote = await admin.call('PATCH', `/organizations/${org.id}/members/${admin.id}`, {
      body: { role: 'editor' },
    });
    expectError(demote, 409, 'invalid_state');
    expect(demote.body.error.details.state).toBe('last_admin');
    expectError(await admin.call('DELETE', `/organizations/${org.id}/members/${admin.id}`), 409, 'invalid_state');
    expect((await admin.call('GET', `/organizations/${org.id}`)).body.role).toBe('admin');
  });

  it('two admins demoting each other at once leave exactly one admin', async () => {
    const a = await newUser();
    const b = await newUser();
    const org = await newOrganization(a);
    await a.call('POST', `/organizations/${org.id}/members`, { body: { email: b.email, role: 'admin' } });
    const results = await Promise.all([
      a.call('PATCH', `/organizations/${org.id}/members/${b.id}`, { body: { role: 'viewer' } }),
      b.call('PATCH', `/organizations/${org.id}/members/${a.id}`, { body: { role: 'viewer' } }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 403]);
    const members =
      (await a.call('GET', `/organizations/${org.id}/members`)).status === 200
        ? await a.call('GET', `/organizations/${org.id}/members`)
        : await b.call('GET', `/organizations/${org.id}/members`);
    expect(members.body.items.filter((m: any) => m.role === 'admin')).toHaveLength(1);
  });

  it('an admin may leave when another admin remains', async () => {
    const a = await newUser();
    const b = await newUser();
    const org = await newOrganization(a);
    await a.call('POST', `/organizations/${org.id}/members`, { body: { email: b.email, role: 'admin' } });
    expect((await a.call('DELETE', `/organizations/${org.id}/members/${a.id}`)).status).toBe(204);
    expectError(await a.call('GET', `/organizations/${org.id}`), 404, 'not_found');
  });

  it('changing the role of a non-member is 404', async () => {
    const { org, admin } = await newTeam();
    const outsider = await newUser();
    expectError(
      await admin.call('PATCH', `/organizations/${org.id}/members/${outsider.id}`, { body: { role: 'viewer' } }),
      404,
      'not_found',
    );
  });
});

describe('default organization', () => {
  it('is unset for a new user and resolving it lists the accessible organizations', async () => {
    const user = await newUser();
    const none = await user.call('GET', '/me/default-organization');
    expectError(none, 409, 'choose_organization');
    expect(none.body.error.details.organizations).toEqual([]);
  });

  it('lists at most 100 choices, and says when there are more', async () => {
    const user = await newUser();
    const db = await getDb();
    const ids = Array.from({ length: 101 }, () => newId('org'));
    await db.insert(organizations).values(ids.map((id, i) => ({ id, name: `Org ${i}`, createdBy: user.id })));
    await db
      .insert(memberships)
      .values(ids.map((organizationId) => ({ organizationId, userId: user.id, role: 'viewer' as const })));
    const resolved = await user.call('GET', '/me/default-organization');
    expectError(resolved, 409, 'choose_organization');
    expect(resolved.body.error.details.organizations).toHaveLength(100);
    expect(resolved.body.error.details.more).toBe(true);
    expect(resolved.body.error.message).toContain('GET /organizations lists them all');
    await db.delete(organizations).where(eq(organizations.id, ids[0]));
    const exact = await user.call('GET', '/me/default-organization');
    expect(exact.body.error.details).toMatchObject({ more: false });
    expect(exact.body.error.details.organizations).toHaveLength(100);
  });

  it('set, resolve and clear', async () => {
    const user = await newUser();
    const first = await newOrganization(user, 'First');
    const second = await newOrganization(user, 'Second');
    const set = await user.call('PUT', '/me/default-organization', { body: { organizationId: second.id } });
    expect(set.status).toBe(200);
    expect(set.body.defaultOrganizationId).toBe(second.id);
    expect((await user.call('GET', '/me/default-organization')).body).toMatchObject({ id: second.id, name: 'Second' });
    const cleared = await user.call('PUT', '/me/default-organization', { body: { organizationId: null } });
    expect(cleared.body.defaultOrganizationId).toBeNull();
    const unresolved = await user.call('GET', '/me/default-organization');
    expectError(unresolved, 409, 'choose_organization');
    expect(unresolved.body.error.details.organizations.map((o: any) => o.id)).toEqual([first.id, second.id]);
  });

  it('an inaccessible default is never silently switched', async () => {
    const a = await newUser();
    const b = await newUser();
    const shared = await newOrganization(a, 'Shared');
    const own = await newOrganization(b, 'Own');
    await a.call('POST', `/organizations/${shared.id}/members`, { body: { email: b.email, role: 'viewer' } });
    await b.call('PUT', '/me/default-organization', { body: { organizationId: shared.id } });
    await a.call('DELETE', `/organizations/${shared.id}/members/${b.id}`);
    const resolved = await b.call('GET', '/me/default-organization');
    expectError(resolved, 409, 'choose_organization');
    expect(resolved.body.error.details.organizations.map((o: any) => o.id)).toEqual([own.id]);
    expect((await b.call('GET', '/me')).body.defaultOrganizationId).toBe(shared.id);
  });

  it('cannot be set to an organization the user cannot access, or be given extra fields', async () => {
    const a = await newUser();
    const b = await newUser();
    const org = await newOrganization(a);
    expectError(
      await b.call('PUT', '/me/default-organization', { body: { organizationId: org.id } }),
      404,
      'not_found',
    );
    expectError(await b.call('PUT', '/me/default-organization', { body: {} }), 400, 'invalid_request');
    expectError(
      await b.call('PUT', '/me/default-organization', { body: { organizationId: null, force: true } }),
      400,
      'invalid_request',
    );
    expect((await b.call('GET', '/me')).body.defaultOrganizationId).toBeNull();
  });
});

describe('credentials never cross surfaces', () => {
  it('a session cookie does not authorize /api/v1', async () => {
    const result = await call('GET', '/me', {
      headers: { cookie: 'next-auth.session-token=anything; __Secure-next-auth.session-token=x' },
    });
    expectError(result, 401, 'unauthorized');
  });
});
