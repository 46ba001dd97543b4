import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { auditLog, idempotencyRecords } from '@/db/schema';
import { call, newOrganization, newTeam, newUser } from '../helpers/api';
import { signToken } from '../helpers/issuer';
import { requestDigest } from '@/server/api/idempotency';

const key = () => `key-${Math.random().toString(36).slice(2)}-${Date.now()}`;

describe('Idempotency-Key', () => {
  it('replays the original response for the same key and body, and creates once', async () => {
    const user = await newUser();
    const k = key();
    const first = await user.call('POST', '/organizations', {
      body: { name: 'Once' },
      headers: { 'idempotency-key': k },
    });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotency-replayed')).toBeNull();
    const second = await user.call('POST', '/organizations', {
      body: { name: 'Once' },
      headers: { 'idempotency-key': k },
    });
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotency-replayed')).toBe('true');
    expect(second.body).toEqual(first.body);
    expect((await user.call('GET', '/organizations')).body.items).toHaveLength(1);
  });

  it('the same key with a different body → 422 idempotency_conflict and nothing runs', async () => {
    const user = await newUser();
    const k = key();
    await user.call('POST', '/organizations', { body: { name: 'A' }, headers: { 'idempotency-key': k } });
    const conflict = await user.call('POST', '/organizations', {
      body: { name: 'B' },
      headers: { 'idempotency-key': k },
    });
    expect(conflict.status).toBe(422);
    expect(conflict.body.error.code).toBe('idempotency_conflict');
    expect((await user.call('GET', '/organizations')).body.items.map((o: any) => o.name)).toEqual(['A']);
  });

  it('key order in the body does not matter', async () => {
    const { org, admin } = await newTeam();
    const outsider = await newUser();
    const k = key();
    const a = await admin.call('POST', `/organizations/${org.id}/members`, {
      rawBody: `{"email":"${outsider.email}","role":"viewer"}`,
      headers: { 'idempotency-key': k, 'content-type': 'application/json' },
    });
    const b = await admin.call('POST', `/organizations/${org.id}/members`, {
      rawBody: `{"role":"viewer","email":"${outsider.email}"}`,
      headers: { 'idempotency-key': k, 'content-type': 'application/json' },
    });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.headers.get('idempotency-replayed')).toBe('true');
  });

  it('is scoped by user, client, organization and operation', async () => {
    const k = key();
    const user = await newUser();
    const other = await newUser();
    const a = await user.call('POST', '/organizations', {
      body: { name: 'Scoped' },
      headers: { 'idempotency-key': k },
    });
    const b = await other.call('POST', '/organizations', {
      body: { name: 'Scoped' },
      headers: { 'idempotency-key': k },
    });
    expect(b.status).toBe(201);
    expect(b.body.id).not.toBe(a.body.id);
    // Same user through another OAuth client: a separate scope.
    const otherClient = await signToken({ sub: user.sub, clientId: 'another-client' });
    const c = await call('POST', '/organizations', {
      token: otherClient,
      body: { name: 'Scoped' },
      headers: { 'idempotency-key': k },
    });
    expect(c.status).toBe(201);
    expect(c.body.id).not.toBe(a.body.id);
    // Same key on another operation of the same user: separate scope too.
    const d = await user.call('PATCH', `/organizations/${a.body.id}`, {
      body: { name: 'Scoped' },
      headers: { 'idempotency-key': k },
    });
    expect(d.status).toBe(200);
    expect(d.headers.get('idempotency-replayed')).toBeNull();
  });

  it('the same key on two organizations is two scopes', async () => {
    const user = await newUser();
    const one = await newOrganization(user, 'One');
    const two = await newOrganization(user, 'Two');
    const k = key();
    const a = await user.call('PATCH', `/organizations/${one.id}`, {
      body: { name: 'Same' },
      headers: { 'idempotency-key': k },
    });
    const b = await user.call('PATCH', `/organizations/${two.id}`, {
      body: { name: 'Same' },
      headers: { 'idempotency-key': k },
    });
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.headers.get('idempotency-replayed')).toBeNull();
    expect(b.body.id).toBe(two.id);
  });

  it.each([['short7ch'.slice(0, 7)], ['x'.repeat(129)], ['has space in it']])(
    'rejects the key %j with 400',
    async (badKey) => {
      const user = await newUser();
      const result = await user.call('POST', '/organizations', {
        body: { name: 'Nope' },
        headers: { 'idempotency-key': badKey },
      });
      expect(result.status).toBe(400);
      expect(result.body.error.code).toBe('invalid_request');
      expect((await user.call('GET', '/organizations')).body.items).toHaveLength(0);
    },
  );

  it('accepts keys of exactly 8 and 128 characters', async () => {
    const user = await newUser();
    expect(
      (
        await user.call('POST', '/organizations', {
          body: { name: 'A' },
          headers: { 'idempotency-key': 'k'.repeat(8) },
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await user.call('POST', '/organizations', {
          body: { name: 'B' },
          headers: { 'idempotency-key': 'k'.repeat(128) },
        })
      ).status,
    ).toBe(201);
  });

  it('validation failures are not recorded: a corrected retry with the same key runs', async () => {
    const user = await newUser();
    const k = key();
    expect(
      (await user.call('POST', '/organizations', { body: { name: '' }, headers: { 'idempotency-key': k } })).status,
    ).toBe(400);
    // A different body is not a conflict, since the failed attempt was never recorded.
    const retry = await user.call('POST', '/organizations', {
      body: { name: 'Fixed' },
      headers: { 'idempotency-key': k },
    });
    expect(retry.status).toBe(201);
  });

  it('permission failures are not recorded: a later-authorized retry with the same key runs', async () => {
    const { org, admin, editor } = await newTeam();
    const k = key();
    expect(
      (
        await editor.call('PATCH', `/organizations/${org.id}`, {
          body: { name: 'Later' },
          headers: { 'idempotency-key': k },
        })
      ).status,
    ).toBe(403);
    await admin.call('PATCH', `/organizations/${org.id}/members/${editor.id}`, { body: { role: 'admin' } });
    expect(
      (
        await editor.call('PATCH', `/organizations/${org.id}`, {
          body: { name: 'Later' },
          headers: { 'idempotency-key': k },
        })
      ).status,
    ).toBe(200);
  });

  it('a 404 is not recorded: once the thing exists, a retry with the same key executes', async () => {
    const { org, admin } = await newTeam();
    const k = key();
    const email = `later-${randomUUID()}@example.test`;
    const first = await admin.call('POST', `/organizations/${org.id}/members`, {
      body: { email, role: 'viewer' },
      headers: { 'idempotency-key': k },
    });
    expect(first.status).toBe(404);
    await newUser({ email }); // signs in once, so the account exists
    const retry = await admin.call('POST', `/organizations/${org.id}/members`, {
      body: { email, role: 'viewer' },
      headers: { 'idempotency-key': k },
    });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotency-replayed')).toBeNull();
    expect(retry.body.email).toBe(email);
  });

  it('a 409 is recorded and replayed, even after the state that caused it has changed', async () => {
    const { org, admin, viewer } = await newTeam();
    const k = key();
    const body = { email: viewer.email, role: 'viewer' };
    const first = await admin.call('POST', `/organizations/${org.id}/members`, {
      body,
      headers: { 'idempotency-key': k },
    });
    expect(first.status).toBe(409);
    expect(first.body.error.code).toBe('invalid_state');
    expect((await admin.call('DELETE', `/organizations/${org.id}/members/${viewer.id}`)).status).toBe(204);
    // A live call would now add the member; the key answers with what it executed the first time.
    const replay = await admin.call('POST', `/organizations/${org.id}/members`, {
      body,
      headers: { 'idempotency-key': k },
    });
    expect(replay.status).toBe(409);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
  });

  it('a 422 is recorded and replayed', async () => {
    const { org, editor } = await newTeam();
    const prompt = (await editor.call('POST', `/organizations/${org.id}/prompts`, { body: { name: 'Ordered' } })).body;
    const base = `/organizations/${org.id}/prompts/${prompt.id}/dataset`;
    const added = await editor.call('POST', `${base}/cases`, {
      body: { revision: 0, row: { input: 'one', expectedOutput: '1' } },
    });
    expect(added.status).toBe(201);
    const k = key();
    const body = { revision: 1, caseIds: [] };
    const first = await editor.call('PUT', `${base}/order`, { body, headers: { 'idempotency-key': k } });
    expect(first.status).toBe(422);
    expect(first.body.error.code).toBe('invalid_order');
    const replay = await editor.call('PUT', `${base}/order`, { body, headers: { 'idempotency-key': k } });
    expect(replay.status).toBe(422);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
  });

  it('the digest covers the query string: the same key with another query → 422 idempotency_conflict', async () => {
    const { org, editor } = await newTeam();
    const prompt = (await editor.call('POST', `/organizations/${org.id}/prompts`, { body: { name: 'Queried' } })).body;
    const base = `/organizations/${org.id}/prompts/${prompt.id}/dataset`;
    const one = await editor.call('POST', `${base}/cases`, {
      body: { revision: 0, row: { input: 'one', expectedOutput: '1' } },
    });
    await editor.call('POST', `${base}/cases`, { body: { revision: 1, row: { input: 'two', expectedOutput: '2' } } });
    const k = key();
    const first = await editor.call('DELETE', `${base}/cases/${one.body.id}`, {
      query: 'revision=2',
      headers: { 'idempotency-key': k },
    });
    expect(first.status).toBe(200);
    const same = await editor.call('DELETE', `${base}/cases/${one.body.id}`, {
      query: 'revision=2',
      headers: { 'idempotency-key': k },
    });
    expect(same.status).toBe(200);
    expect(same.headers.get('idempotency-replayed')).toBe('true');
    const other = await editor.call('DELETE', `${base}/cases/${one.body.id}`, {
      query: 'revision=3',
      headers: { 'idempotency-key': k },
    });
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('idempotency_conflict');
    expect((await editor.call('GET', base)).body).toMatchObject({ revision: 3, count: 1 });
  });

  it('the order of query parameters does not change the digest', () => {
    const body = { a: 1 };
    expect(requestDigest('DELETE', '/x', new URLSearchParams('b=2&a=1'), body)).toBe(
      requestDigest('DELETE', '/x', new URLSearchParams('a=1&b=2'), body),
    );
    expect(requestDigest('DELETE', '/x', new URLSearchParams('a=1'), body)).not.toBe(
      requestDigest('DELETE', '/x', new URLSearchParams('a=2'), body),
    );
    expect(requestDigest('DELETE', '/x', new URLSearchParams(''), body)).not.toBe(
      requestDigest('DELETE', '/x', new URLSearchParams('a=1'), body),
    );
  });

  it('a replay is refused to someone who is no longer a member: they get the live answer, 404', async () => {
    const { org, admin, editor } = await newTeam();
    const k = key();
    const created = await editor.call('POST', `/organizations/${org.id}/prompts`, {
      body: { name: 'Mine' },
      headers: { 'idempotency-key': k },
    });
    expect(created.status).toBe(201);
    const replay = await editor.call('POST', `/organizations/${org.id}/prompts`, {
      body: { name: 'Mine' },
      headers: { 'idempotency-key': k },
    });
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect((await admin.call('DELETE', `/organizations/${org.id}/members/${editor.id}`)).status).toBe(204);
    const refused = await editor.call('POST', `/organizations/${org.id}/prompts`, {
      body: { name: 'Mine' },
      headers: { 'idempotency-key': k },
    });
    expect(refused.status).toBe(404);
    expect(refused.body.error.code).toBe('not_found');
    expect(refused.headers.get('idempotency-replayed')).toBeNull();
    expect(JSON.stringify(refused.body)).not.toContain(created.body.id);
  });

  it('a replay of setting the default organization is refused once the caller has left it: the live 404', async () => {
    const { org, admin, editor } = await newTeam();
    const k = key();
    const send = () =>
      editor.call('PUT', '/me/default-organization', {
        body: { organizationId: org.id },
        headers: { 'idempotency-key': k },
      });
    const first = await send();
    expect(first.status).toBe(200);
    expect(first.body.defaultOrganizationId).toBe(org.id);
    expect((await send()).headers.get('idempotency-replayed')).toBe('true');
    expect((await admin.call('DELETE', `/organizations/${org.id}/members/${editor.id}`)).status).toBe(204);
    const refused = await send();
    expect(refused.status).toBe(404);
    expect(refused.body.error.code).toBe('not_found');
    expect(refused.headers.get('idempotency-replayed')).toBeNull();
    // Clearing the default names no organization: its replay needs only the account.
    const clear = () =>
      editor.call('PUT', '/me/default-organization', {
        body: { organizationId: null },
        headers: { 'idempotency-key': `${k}-clear` },
      });
    expect((await clear()).status).toBe(200);
    expect((await clear()).headers.get('idempotency-replayed')).toBe('true');
  });

  it('a replay is refused to a member whose role no longer allows the operation: the live 403, and the record stays', async () => {
    const { org, admin, editor } = await newTeam();
    const k = key();
    const send = () =>
      editor.call('POST', `/organizations/${org.id}/prompts`, {
        body: { name: 'Demoted' },
        headers: { 'idempotency-key': k },
      });
    const created = await send();
    expect(created.status).toBe(201);
    const demote = (role: string) =>
      admin.call('PATCH', `/organizations/${org.id}/members/${editor.id}`, { body: { role } });
    expect((await demote('viewer')).status).toBe(200);
    const refused = await send();
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({
      code: 'forbidden',
      details: { requiredRole: 'editor', role: 'viewer' },
    });
    expect(refused.headers.get('idempotency-replayed')).toBeNull();
    expect(JSON.stringify(refused.body)).not.toContain(created.body.id);
    // Given the role back, the same key replays the first answer (the refusal was not recorded).
    expect((await demote('editor')).status).toBe(200);
    const replay = await send();
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body.id).toBe(created.body.id);
  });

  it('concurrent duplicates run the operation once; the others get 409 idempotency_in_progress or the replay', async () => {
    const user = await newUser();
    const k = key();
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        user.call('POST', '/organizations', { body: { name: 'Race' }, headers: { 'idempotency-key': k } }),
      ),
    );
    const created = results.filter((r) => r.status === 201);
    const inProgress = results.filter((r) => r.status === 409);
    expect(created.length + inProgress.length).toBe(6);
    for (const r of inProgress) expect(r.body.error.code).toBe('idempotency_in_progress');
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    expect((await user.call('GET', '/organizations')).body.items).toHaveLength(1);
    const db = await getDb();
    const audit = await db.select().from(auditLog).where(eq(auditLog.targetId, created[0].body.id));
    expect(audit.filter((e) => e.operation === 'organization.create')).toHaveLength(1);
  });

  it('a claim left by a process that stopped: 409 with when it frees, a Retry-After that grows with its age, then the retry runs', async () => {
    const user = await newUser();
    const k = key();
    const send = () =>
      user.call('POST', '/organizations', { body: { name: 'Crashed' }, headers: { 'idempotency-key': k } });
    const first = await send();
    expect(first.status).toBe(201);
    // As if the first request had died mid-way 100 s ago, its lease ending in 20 s.
    const db = await getDb();
    const lockedUntil = new Date(Date.now() + 20_000);
    await db
      .update(idempotencyRecords)
      .set({
        state: 'in_progress',
        responseStatus: null,
        responseBody: null,
        lockedUntil,
        createdAt: new Date(Date.now() - 100_000),
      })
      .where(eq(idempotencyRecords.key, k));
    const waiting = await send();
    expect(waiting.status).toBe(409);
    expect(waiting.body.error).toMatchObject({
      code: 'idempotency_in_progress',
      details: { key: k, lockedUntil: lockedUntil.toISOString() },
    });
    expect(Number(waiting.headers.get('retry-after'))).toBeGreaterThanOrEqual(19);
    expect(Number(waiting.headers.get('retry-after'))).toBeLessThanOrEqual(20);
    // A claim that just started asks for a retry within a second.
    await db.update(idempotencyRecords).set({ createdAt: new Date() }).where(eq(idempotencyRecords.key, k));
    expect((await send()).headers.get('retry-after')).toBe('1');
    // The lease over: the retry claims the key and runs.
    await db
      .update(idempotencyRecords)
      .set({ lockedUntil: new Date(Date.now() - 1000) })
      .where(eq(idempotencyRecords.key, k));
    const retried = await send();
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotency-replayed')).toBeNull();
  });

  it('a record older than 24 hours no longer replays', async () => {
    const user = await newUser();
    const k = key();
    const first = await user.call('POST', '/organizations', {
      body: { name: 'Old' },
      headers: { 'idempotency-key': k },
    });
    const db = await getDb();
    const [record] = await db.select().from(idempotencyRecords).where(eq(idempotencyRecords.key, k));
    expect(record.expiresAt.getTime() - record.createdAt.getTime()).toBeGreaterThanOrEqual(24 * 3600 * 1000);
    await db
      .update(idempotencyRecords)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(idempotencyRecords.key, k));
    const again = await user.call('POST', '/organizations', {
      body: { name: 'Old' },
      headers: { 'idempotency-key': k },
    });
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(first.body.id);
  });

  it('every management write records who did it in the audit log', async () => {
    const { org, admin } = await newTeam();
    await admin.call('PATCH', `/organizations/${org.id}`, { body: { name: 'Audited' } });
    const db = await getDb();
    const entries = await db.select().from(auditLog).where(eq(auditLog.organizationId, org.id));
    const rename = entries.find((e) => e.operation === 'organization.rename')!;
    expect(rename).toMatchObject({
      userId: admin.id,
      clientId: 'promptloop-cli',
      targetType: 'organization',
      targetId: org.id,
    });
    expect(entries.map((e) => e.operation)).toEqual(
      expect.arrayContaining(['organization.create', 'members.add', 'organization.rename']),
    );
    await expect(
      db.update(auditLog).set({ operation: 'tampered' }).where(eq(auditLog.id, rename.id)),
    ).rejects.toThrow();
    await expect(db.delete(auditLog).where(eq(auditLog.id, rename.id))).rejects.toThrow();
  });
});
