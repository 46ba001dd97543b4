import { describe, expect, it } from 'vitest';
import { call, newOrganization, newTeam, newUser } from '../helpers/api';

describe('organizations', () => {
  it('creates an organization whose creator is admin, and it becomes the first default', async () => {
    const user = await newUser();
    const created = await user.call('POST', '/organizations', { body: { name: 'Acme' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Acme', role: 'admin', plan: 'free', readOnly: false });
    expect(created.body.id).toMatch(/^org_[0-9a-z]{26}$/);
    expect(new Date(created.body.createdAt).toISOString()).toBe(created.body.createdAt);

    const me = await user.call('GET', '/me');
    expect(me.body).toMatchObject({ id: user.id, email: user.email, defaultOrganizationId: created.body.id });
    const second = await newOrganization(user, 'Second');
    expect((await user.call('GET', '/me')).body.defaultOrganizationId).toBe(created.body.id);
    expect((await user.call('GET', `/organizations/${second.id}`)).body).toMatchObject({
      id: second.id,
      name: 'Second',
      role: 'admin',
    });
  });

  it('lists organizations with cursor paging', async () => {
    const user = await newUser();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await newOrganization(user, `Org ${i}`)).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: any = await user.call('GET', '/organizations', {
        query: `limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      });
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.items.map((o: { id: string }) => o.id));
      cursor = page.body.nextCursor;
      pages++;
    } while (cursor);
    expect(seen).toEqual(ids);
    expect(pages).toBe(3);
    const all = await user.call('GET', '/organizations');
    expect(all.body.items).toHaveLength(5);
    expect(all.body.nextCursor).toBeNull();
  });

  it('renames an organization as admin and records it in the audit log', async () => {
    const { org, admin } = await newTeam();
    const renamed = await admin.call('PATCH', `/organizations/${org.id}`, { body: { name: 'Renamed' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.name).toBe('Renamed');
    expect((await admin.call('GET', `/organizations/${org.id}`)).body.name).toBe('Renamed');
  });

  it('manages members: list, add, change role, remove', async () => {
    const { org, admin, editor, viewer } = await newTeam();
    const members = await admin.call('GET', `/organizations/${org.id}/members`);
    expect(members.status).toBe(200);
    expect(members.body.items.map((m: any) => [m.userId, m.role])).toEqual([
      [admin.id, 'admin'],
      [editor.id, 'editor'],
      [viewer.id, 'viewer'],
    ]);
    const changed = await admin.call('PATCH', `/organizations/${org.id}/members/${viewer.id}`, {
      body: { role: 'editor' },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ userId: viewer.id, role: 'editor', email: viewer.email });
    const removed = await admin.call('DELETE', `/organizations/${org.id}/members/${editor.id}`);
    expect(removed.status).toBe(204);
    expect(removed.body).toBeNull();
    expect((await editor.call('GET', `/organizations/${org.id}`)).status).toBe(404);
    const paged = await viewer.call('GET', `/organizations/${org.id}/members`, { query: 'limit=1' });
    expect(paged.body.items).toHaveLength(1);
    const next = await viewer.call('GET', `/organizations/${org.id}/members`, {
      query: `limit=1&cursor=${paged.body.nextCursor}`,
    });
    expect(next.body.items[0].userId).toBe(viewer.id);
    expect(next.body.nextCursor).toBeNull();
  });

  it('returns a deletion link to the dashboard for admins', async () => {
    const { org, admin } = await newTeam();
    const link = await admin.call('POST', `/organizations/${org.id}/deletion-link`);
    expect(link.status).toBe(200);
    expect(link.body.url).toMatch(
      new RegExp(`^http://localhost:3999/organizations/${org.id}/delete\\?token=[A-Za-z0-9_-]+$`),
    );
    expect(Date.parse(link.body.expiresAt)).toBeGreaterThan(Date.now());
    // The organization still exists: OAuth never deletes it.
    expect((await admin.call('GET', `/organizations/${org.id}`)).status).toBe(200);
  });

  it('serves the OpenAPI document without credentials', async () => {
    const doc = await call('GET', '/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.paths['/api/v1/organizations'].post.operationId).toBe('create_organization');
  });
});
