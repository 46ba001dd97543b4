import { createHash } from 'node:crypto';
import { and, eq, like } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { auditLog, idempotencyRecords, retrievalKeys } from '@/db/schema';
import { newTeam, type TestUser } from '../helpers/api';
import { activePrompt, createPrompt } from '../helpers/prompts';
import { caller } from '../helpers/trpc';

const idemKey = () => `rkey-${Math.random().toString(36).slice(2)}-${Date.now()}`;
const keysPath = (orgId: string, promptId: string) => `/organizations/${orgId}/prompts/${promptId}/keys`;

async function keyRows(promptId: string) {
  return (await getDb()).select().from(retrievalKeys).where(eq(retrievalKeys.promptId, promptId));
}

async function auditRows(organizationId: string) {
  return (await getDb())
    .select()
    .from(auditLog)
    .where(and(eq(auditLog.organizationId, organizationId), like(auditLog.operation, 'retrievalKey.%')))
    .orderBy(auditLog.id);
}

async function create(
  user: TestUser,
  orgId: string,
  promptId: string,
  name = 'Checkout service',
  headers: Record<string, string> = {},
) {
  return user.call('POST', keysPath(orgId, promptId), { body: { name }, headers });
}

describe('retrieval keys: create', () => {
  it('returns 201 { key, secret } with no-store; stores only the digest, the user and the client; audits without the secret', async () => {
    const { org, admin } = await newTeam();
    const { prompt } = await activePrompt(admin, org.id);
    const created = await create(admin, org.id, prompt.id);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const { key, secret } = created.body;
    expect(secret).toMatch(/^plr_[0-9A-Za-z]{43}$/);
    expect(key).toEqual({
      id: expect.stringMatching(/^key_[0-9a-z]{26}$/),
      promptId: prompt.id,
      name: 'Checkout service',
      prefix: secret.slice(0, 12),
      createdAt: expect.any(String),
      lastUsedAt: null,
      revokedAt: null,
    });
    expect(new Date(key.createdAt).toISOString()).toBe(key.createdAt);

    const [row] = await keyRows(prompt.id);
    expect(row.secretDigest).toBe(createHash('sha256').update(secret).digest('hex'));
    expect(row.organizationId).toBe(org.id);
    expect(row.createdBy).toBe(admin.id);
    expect(row.createdByClient).toEqual(expect.any(String));
    expect(row.createdByClient).not.toBe('dashboard');
    expect(JSON.stringify(row)).not.toContain(secret.slice(4));

    const audit = await auditRows(org.id);
    expect(audit.map((a) => [a.operation, a.targetId, a.userId])).toEqual([['retrievalKey.create', key.id, admin.id]]);
    expect(audit[0].details).toEqual({ promptId: prompt.id, name: 'Checkout service', prefix: key.prefix });
    expect(JSON.stringify(audit)).not.toContain(secret.slice(4));
  });

  it('trims the name and accepts 100 characters; an editor may create; a prompt in setup may have keys', async () => {
    const { org, admin, editor } = await newTeam();
    const prompt = await createPrompt(admin, org.id);
    const long = 'k'.repeat(100);
    const created = await create(editor, org.id, prompt.id, `  ${long} `);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.key.name).toBe(long);
    expect((await keyRows(prompt.id))[0].createdBy).toBe(editor.id);
  });

  it('each create makes a distinct key and secret', async () => {
    const { org, admin } = await newTeam();
    const { prompt } = await activePrompt(admin, org.id);
    const a = (await create(admin, org.id, prompt.id)).body;
    const b = (await create(admin, org.id, prompt.id)).body;
    expect(b.key.id).not.toBe(a.key.id);
    expect(b.secret).not.toBe(a.secret);
    expect(await keyRows(prompt.id)).toHaveLength(2);
  });
});

describe('retrieval keys: idempotent create', () => {
  it('a replay → 409 secret_unavailable with details.key, no secret and no second key', async () => {
    const { org, admin } = await newTeam();
    const { prompt } = await activePrompt(admin, org.id);
    const k = idemKey();
    const first = await create(admin, org.id, prompt.id, 'Billing', { 'idempotency-key': k });
    expect(first.status).toBe(201);
    for (let i = 0; i < 2; i++) {
      const replay = await create(admin, org.id, prompt.id, 'Billing', { 'idempotency-key': k });
      expect(replay.status, JSON.stringify(replay.body)).toBe(409);
      expect(replay.body.error.code).toBe('secret_unavailable');
      expect(replay.headers.get('idempotency-replayed')).toBe('true');
      expect(replay.headers.get('cache-control')).toBe('no-store');
      expect(replay.body.error.details.key).toEqual(first.body.key);
      expect(JSON.stringify(replay.body)).not.toContain(first.body.secret.slice(4));
    }
    expect(await keyRows(prompt.id)).toHaveLength(1);
    expect((await auditRows(org.id)).map((a) => a.operation)).toEqual(['retrievalKey.create']);

    const records = await (await getDb()).select().from(idempotencyRecords).where(eq(idempotencyRecords.key, k));
    expect(records).toHaveLength(1);
    expect(JSON.stringify(records[0])).not.toContain(first.body.secret.slice(4));
  });

  it('a replay shows the key as it is now: revoked since → details.key.revokedAt', async () => {
    const { org, admin } = await newTeam();
    const { prompt } = await activePrompt(admin, org.id);
    const k = idemKey();
    const first = await create(admin, org.id, prompt.id, 'Billing', { 'idempotency-key': k });
    const revoked = await admin.call('DELETE', `${keysPath(org.id, prompt.id)}/${first.body.key.id}`);
    expect(revoked.body.revokedAt).toEqual(expect.any(String));
    const replay = await create(admin, org.id, prompt.id, 'Billing', { 'idempotency-key': k });
    expect(replay.status).toBe(409);
    expect(replay.body.error.code).toBe('secret_unavailable');
    expect(replay.body.error.details.key).toEqual(revoked.body);
    expect(await keyRows(prompt.id)).toHaveLength(1);
  });

  it('the same Idempotency-Key with another name → 422 idempotency_conflict; a fresh key creates a second key', async () => {
    const { org, admin } = await newTeam();
    const { prompt } = await activePrompt(admin, org.id);
    const k = idemKey();
    await create(admin, org.id, prompt.id, 'Billing', { 'idempotency-key': k });
    const conflict = await create(admin, org.id, prompt.id, 'Other', { 'idempotency-key': k });
    expect(conflict.status).toBe(422);
    expect(conflict.body.error.code).toBe('idempotency_conflict');
    expect(await keyRows(prompt.id)).toHaveLength(1);
    expect((await create(admin, org.id, prompt.id, 'Billing', { 'idempotency-key': idemKey() })).status).toBe(201);
    expect(await keyRows(prompt.id)).toHaveLength(2);
  });
});

describe('retrieval keys: list', () => {
  it('viewers list newest first with keyset paging; never a secret or digest; only this prompt’s keys', async () => {
    const { org, admin, viewer } = await newTeam();
    const { prompt } = await activePrompt(admin, org.id);
    const other = await createPrompt(admin, org.id, 'Other prompt');
    await create(admin, org.id, other.id, 'Elsewhere');
    const created = [];
    for (let i = 0; i < 5; i++) created.push((await create(admin, org.id, prompt.id, `Key ${i}`)).body);
    const ids = created.map((c) => c.key.id);
    const digests = (await keyRows(prompt.id)).map((r) => r.secretDigest);

    const first = await viewer.call('GET', keysPath(org.id, prompt.id), { query: 'limit=2' });
    expect(first.status).toBe(200);
    expect(first.body.items.map((k: any) => k.id)).toEqual([ids[4], ids[3]]);
    const second = await viewer.call('GET', keysPath(org.id, prompt.id), {
      query: `limit=2&cursor=${first.body.nextCursor}`,
    });
    expect(second.body.items.map((k: any) => k.id)).toEqual([ids[2], ids[1]]);
    const third = await viewer.call('GET', keysPath(org.id, prompt.id), {
      query: `limit=2&cursor=${second.body.nextCursor}`,
    });
    expect(third.body.items.map((k: any) => k.id)).toEqual([ids[0]]);
    expect(third.body.nextCursor).toBeNull();

    const all = await viewer.call('GET', keysPath(org.id, prompt.id));
    expect(all.body.items).toEqual(created.map((c) => c.key).reverse());
    const text = JSON.stringify(all.body);
    for (const c of created) expect(text).not.toContain(c.secret.slice(4));
    for (const d of digests) expect(text).not.toContain(d);
    expect(Object.keys(all.body.items[0]).sort()).toEqual([
      'createdAt',
      'id',
      'lastUsedAt',
      'name',
      'prefix',
      'promptId',
      'revokedAt',
    ]);
  });
});

describe('retrieval keys: revoke', () => {
  it('an editor revokes; revoking again returns the key unchanged and audits once', async () => {
    const { org, admin, editor } = await newTeam();
    const { prompt } = await activePrompt(admin, org.id);
    const { key } = (await create(admin, org.id, prompt.id)).body;
    const path = `${keysPath(org.id, prompt.id)}/${key.id}`;
    const revoked = await editor.call('DELETE', path);
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    expect(revoked.body).toEqual({ ...key, revokedAt: expect.any(String) });
    const again = await admin.call('DELETE', path);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(revoked.body);
    expect((await admin.call('GET', keysPath(org.id, prompt.id))).body.items).toEqual([revoked.body]);
    const audit = await auditRows(org.id);
    expect(audit.map((a) => [a.operation, a.userId])).toEqual([
      ['retrievalKey.create', admin.id],
      ['retrievalKey.revoke', editor.id],
    ]);
  });

  it('an archived prompt still lists and revokes its keys', async () => {
    const { org, admin } = await newTeam();
    const { prompt, base } = await activePrompt(admin, org.id);
    const { key } = (await create(admin, org.id, prompt.id)).body;
    expect((await admin.call('POST', `${base}/archive`)).status).toBe(200);
    expect((await admin.call('GET', keysPath(org.id, prompt.id))).body.items).toEqual([key]);
    const revoked = await admin.call('DELETE', `${keysPath(org.id, prompt.id)}/${key.id}`);
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    expect(revoked.body.revokedAt).toEqual(expect.any(String));
  });
});

describe('retrieval keys over tRPC (dashboard)', () => {
  it('create, list and revoke; the client is recorded as dashboard; a viewer lists but cannot create', async () => {
    const { org, admin, viewer } = await newTeam();
    const { prompt } = await activePrompt(admin, org.id);
    const asAdmin = await caller(admin.id);
    const created = await asAdmin.retrievalKeys.create({
      organizationId: org.id,
      promptId: prompt.id,
      name: 'Web app',
    });
    expect(created.secret).toMatch(/^plr_[0-9A-Za-z]{43}$/);
    expect(created.key.prefix).toBe(created.secret.slice(0, 12));
    const asViewer = await caller(viewer.id);
    const listed = await asViewer.retrievalKeys.list({ organizationId: org.id, promptId: prompt.id, limit: 25 });
    expect(listed.items).toEqual([created.key]);
    await expect(
      asViewer.retrievalKeys.create({ organizationId: org.id, promptId: prompt.id, name: 'Nope' }),
    ).rejects.toMatchObject({ cause: { code: 'forbidden' } });
    await expect(
      asViewer.retrievalKeys.revoke({ organizationId: org.id, promptId: prompt.id, keyId: created.key.id }),
    ).rejects.toMatchObject({
      cause: { code: 'forbidden' },
    });
    const revoked = await asAdmin.retrievalKeys.revoke({
      organizationId: org.id,
      promptId: prompt.id,
      keyId: created.key.id,
    });
    expect(revoked.revokedAt).not.toBeNull();
    const [row] = await keyRows(prompt.id);
    expect(row.createdByClient).toBe('dashboard');
    expect((await auditRows(org.id)).map((a) => a.clientId)).toEqual(['dashboard', 'dashboard']);
    await expect(
      asAdmin.retrievalKeys.create({ organizationId: org.id, promptId: prompt.id, name: '' }),
    ).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });
});
