import { createHash, randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { auditLog, idempotencyRecords, ingestionKeys, organizations } from '@/db/schema';
import { createCaller } from '@/server/trpc/root';
import { createTrpcContext } from '@/server/trpc/init';
import { call, newOrganization, newTeam, newUser, type TestUser } from '../helpers/api';

const body = { name: 'Checkout backend', application: 'checkout', environment: 'production' };
const idemKey = () => `ikey-${Math.random().toString(36).slice(2)}-${Date.now()}`;

function expectError(result: { status: number; body: any }, status: number, code: string) {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.body.error.code).toBe(code);
  expect(result.body.error.details).toBeTypeOf('object');
}

async function keyRows(organizationId: string) {
  return (await getDb()).select().from(ingestionKeys).where(eq(ingestionKeys.organizationId, organizationId));
}

async function auditOps(organizationId: string) {
  const rows = await (await getDb()).select().from(auditLog).where(eq(auditLog.organizationId, organizationId));
  return rows.map((r) => r.operation).filter((op) => op.startsWith('ingestionKey.'));
}

async function create(
  admin: TestUser,
  orgId: string,
  input: Record<string, unknown> = body,
  headers: Record<string, string> = {},
) {
  return admin.call('POST', `/organizations/${orgId}/ingestion-keys`, { body: input, headers });
}

describe('ingestion keys: create', () => {
  it('returns the key metadata and a plt_ secret once; stores only the SHA-256 digest', async () => {
    const { org, admin } = await newTeam();
    const created = await create(admin, org.id);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { key, secret } = created.body;
    expect(secret).toMatch(/^plt_[0-9A-Za-z]{43}$/);
    expect(key).toEqual({
      id: expect.stringMatching(/^ikey_[0-9a-z]{26}$/),
      name: body.name,
      application: body.application,
      environment: body.environment,
      prefix: secret.slice(0, 12),
      createdAt: expect.any(String),
      lastUsedAt: null,
      revokedAt: null,
    });
    expect(new Date(key.createdAt).toISOString()).toBe(key.createdAt);

    const [row] = await keyRows(org.id);
    expect(row.secretDigest).toBe(createHash('sha256').update(secret).digest('hex'));
    expect(row.createdBy).toBe(admin.id);
    // The secret appears nowhere in the stored row.
    expect(JSON.stringify(row)).not.toContain(secret.slice(4));

    const listed = await admin.call('GET', `/organizations/${org.id}/ingestion-keys`);
    expect(listed.body.items).toEqual([key]);
    expect(JSON.stringify(listed.body)).not.toContain(secret);
    expect(await auditOps(org.id)).toEqual(['ingestionKey.create']);
  });

  it('trims fields and accepts 100 characters', async () => {
    const { org, admin } = await newTeam();
    const long = 'x'.repeat(100);
    const created = await create(admin, org.id, { name: `  ${long} `, application: long, environment: ' staging ' });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatchObject({ name: long, application: long, environment: 'staging' });
  });

  it.each([
    ['missing name', { application: 'a', environment: 'e' }, 'name'],
    ['empty application', { ...body, application: '' }, 'application'],
    ['blank environment', { ...body, environment: '   ' }, 'environment'],
    ['name over 100 characters', { ...body, name: 'x'.repeat(101) }, 'name'],
    ['environment not a string', { ...body, environment: 3 }, 'environment'],
    ['unknown field', { ...body, scopes: ['all'] }, 'scopes'],
  ])('%s → 400 invalid_request and nothing created', async (_label, input, path) => {
    const { org, admin } = await newTeam();
    const result = await create(admin, org.id, input);
    expectError(result, 400, 'invalid_request');
    expect(result.body.error.details.issues.map((i: any) => i.path)).toContain(path);
    expect(await keyRows(org.id)).toHaveLength(0);
    expect(await auditOps(org.id)).toEqual([]);
  });

  it('viewers list (no secret) but get 403 forbidden for create and revoke; editors create and revoke', async () => {
    const { org, admin, editor, viewer } = await newTeam();
    const existing = (await create(admin, org.id)).body.key;
    expectError(await create(viewer, org.id), 403, 'forbidden');
    expectError(
      await viewer.call('DELETE', `/organizations/${org.id}/ingestion-keys/${existing.id}`),
      403,
      'forbidden',
    );
    const listed = await viewer.call('GET', `/organizations/${org.id}/ingestion-keys`);
    expect(listed.status).toBe(200);
    expect(listed.body.items).toEqual([existing]);
    expect((await keyRows(org.id))[0].revokedAt).toBeNull();
    expect(await auditOps(org.id)).toEqual(['ingestionKey.create']);

    const byEditor = await create(editor, org.id, { ...body, name: 'editor key' });
    expect(byEditor.status).toBe(201);
    expect(byEditor.body.secret).toMatch(/^plt_/);
    const revoked = await editor.call('DELETE', `/organizations/${org.id}/ingestion-keys/${existing.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.revokedAt).not.toBeNull();
    expect(await auditOps(org.id)).toEqual(['ingestionKey.create', 'ingestionKey.create', 'ingestionKey.revoke']);
  });

  it('another organization’s admin gets 404 for every operation', async () => {
    const { org, admin } = await newTeam();
    const outsider = await newUser();
    await newOrganization(outsider);
    const existing = (await create(admin, org.id)).body.key;
    expectError(await create(outsider, org.id), 404, 'not_found');
    expectError(await outsider.call('GET', `/organizations/${org.id}/ingestion-keys`), 404, 'not_found');
    expectError(
      await outsider.call('DELETE', `/organizations/${org.id}/ingestion-keys/${existing.id}`),
      404,
      'not_found',
    );
    expect(await keyRows(org.id)).toHaveLength(1);
    expect((await keyRows(org.id))[0].revokedAt).toBeNull();
  });

  it('a key of one organization cannot be revoked through another organization’s path', async () => {
    const a = await newTeam();
    const other = await newOrganization(a.admin);
    const key = (await create(a.admin, a.org.id)).body.key;
    expectError(await a.admin.call('DELETE', `/organizations/${other.id}/ingestion-keys/${key.id}`), 404, 'not_found');
    expect((await keyRows(a.org.id))[0].revokedAt).toBeNull();
  });

  it('a read-only organization (deletion scheduled) refuses new keys with 403 read_only', async () => {
    const { org, admin } = await newTeam();
    await (await getDb()).update(organizations).set({ readOnly: true }).where(eq(organizations.id, org.id));
    expectError(await create(admin, org.id), 403, 'read_only');
    expect(await keyRows(org.id)).toHaveLength(0);
  });
});

describe('ingestion keys: idempotent create', () => {
  it('a replay → 409 secret_unavailable with details.key and no second key; the record holds no secret', async () => {
    const { org, admin } = await newTeam();
    const k = idemKey();
    const first = await create(admin, org.id, body, { 'idempotency-key': k });
    expect(first.status).toBe(201);
    const replay = await create(admin, org.id, body, { 'idempotency-key': k });
    expectError(replay, 409, 'secret_unavailable');
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body.error.details.key).toEqual(first.body.key);
    expect(JSON.stringify(replay.body)).not.toContain(first.body.secret);
    expect(await keyRows(org.id)).toHaveLength(1);
    expect(await auditOps(org.id)).toEqual(['ingestionKey.create']);

    const [record] = await (
      await getDb()
    )
      .select()
      .from(idempotencyRecords)
      .where(and(eq(idempotencyRecords.organizationId, org.id), eq(idempotencyRecords.key, k)));
    expect(record.responseStatus).toBe(201);
    expect(JSON.stringify(record.responseBody)).not.toContain(first.body.secret.slice(4));

    // Revoked since: the replay shows the key as it is now.
    const revoked = await admin.call('DELETE', `/organizations/${org.id}/ingestion-keys/${first.body.key.id}`);
    expect(revoked.body.revokedAt).toEqual(expect.any(String));
    const later = await create(admin, org.id, body, { 'idempotency-key': k });
    expectError(later, 409, 'secret_unavailable');
    expect(later.body.error.details.key).toEqual(revoked.body);
  });

  it('the same key with a different body → 422 idempotency_conflict and no key', async () => {
    const { org, admin } = await newTeam();
    const k = idemKey();
    await create(admin, org.id, body, { 'idempotency-key': k });
    expectError(
      await create(admin, org.id, { ...body, name: 'Other' }, { 'idempotency-key': k }),
      422,
      'idempotency_conflict',
    );
    expect(await keyRows(org.id)).toHaveLength(1);
  });

  it('a fresh Idempotency-Key creates a second, distinct key', async () => {
    const { org, admin } = await newTeam();
    const a = await create(admin, org.id, body, { 'idempotency-key': idemKey() });
    const b = await create(admin, org.id, body, { 'idempotency-key': idemKey() });
    expect(b.status).toBe(201);
    expect(b.body.key.id).not.toBe(a.body.key.id);
    expect(b.body.secret).not.toBe(a.body.secret);
  });
});

describe('ingestion keys: list and revoke', () => {
  it('lists newest first with keyset paging', async () => {
    const { org, admin } = await newTeam();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create(admin, org.id, { ...body, name: `Key ${i}` })).body.key.id);
    const first = await admin.call('GET', `/organizations/${org.id}/ingestion-keys`, { query: 'limit=2' });
    expect(first.body.items.map((k: any) => k.id)).toEqual([ids[4], ids[3]]);
    const second = await admin.call('GET', `/organizations/${org.id}/ingestion-keys`, {
      query: `limit=2&cursor=${first.body.nextCursor}`,
    });
    expect(second.body.items.map((k: any) => k.id)).toEqual([ids[2], ids[1]]);
    const third = await admin.call('GET', `/organizations/${org.id}/ingestion-keys`, {
      query: `limit=2&cursor=${second.body.nextCursor}`,
    });
    expect(third.body.items.map((k: any) => k.id)).toEqual([ids[0]]);
    expect(third.body.nextCursor).toBeNull();
  });

  it.each(['limit=0', 'limit=101', 'cursor=', 'cursor=bad', 'status=active'])('list with %s → 400', async (query) => {
    const { org, admin } = await newTeam();
    expectError(await admin.call('GET', `/organizations/${org.id}/ingestion-keys`, { query }), 400, 'invalid_request');
  });

  it('revokes once; revoking again returns the key unchanged and audits once', async () => {
    const { org, admin } = await newTeam();
    const key = (await create(admin, org.id)).body.key;
    const revoked = await admin.call('DELETE', `/organizations/${org.id}/ingestion-keys/${key.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ ...key, revokedAt: expect.any(String) });
    const again = await admin.call('DELETE', `/organizations/${org.id}/ingestion-keys/${key.id}`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(revoked.body);
    expect((await admin.call('GET', `/organizations/${org.id}/ingestion-keys`)).body.items).toEqual([revoked.body]);
    expect(await auditOps(org.id)).toEqual(['ingestionKey.create', 'ingestionKey.revoke']);
  });

  it.each(['ikey_doesnotexist', 'ikey_00000000000000000000000000', 'key_00000000000000000000000000'])(
    'revoke of unknown key %s → 404',
    async (keyId) => {
      const { org, admin } = await newTeam();
      await create(admin, org.id);
      expectError(await admin.call('DELETE', `/organizations/${org.id}/ingestion-keys/${keyId}`), 404, 'not_found');
      expect(await auditOps(org.id)).toEqual(['ingestionKey.create']);
    },
  );

  it('revoke takes no body', async () => {
    const { org, admin } = await newTeam();
    const key = (await create(admin, org.id)).body.key;
    expectError(
      await admin.call('DELETE', `/organizations/${org.id}/ingestion-keys/${key.id}`, { body: { reason: 'x' } }),
      400,
      'invalid_request',
    );
    expect((await keyRows(org.id))[0].revokedAt).toBeNull();
  });
});

describe('ingestion keys over tRPC (dashboard)', () => {
  it('an admin creates, lists and revokes; a viewer may not create', async () => {
    const { org, admin, viewer } = await newTeam();
    const asAdmin = createCaller(
      await createTrpcContext({ actor: { userId: admin.id, clientId: 'dashboard', human: true } }),
    );
    const created = await asAdmin.ingestionKeys.create({ organizationId: org.id, ...body });
    expect(created.secret).toMatch(/^plt_/);
    expect((await asAdmin.ingestionKeys.list({ organizationId: org.id, limit: 25 })).items.map((k) => k.id)).toEqual([
      created.key.id,
    ]);
    const revoked = await asAdmin.ingestionKeys.revoke({ organizationId: org.id, keyId: created.key.id });
    expect(revoked.revokedAt).not.toBeNull();

    const asViewer = createCaller(
      await createTrpcContext({ actor: { userId: viewer.id, clientId: 'dashboard', human: true } }),
    );
    await expect(asViewer.ingestionKeys.create({ organizationId: org.id, ...body })).rejects.toMatchObject({
      cause: { code: 'forbidden' },
    });
    const audit = await (
      await getDb()
    )
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.organizationId, org.id), eq(auditLog.operation, 'ingestionKey.create')));
    expect(audit.map((a) => a.clientId)).toEqual(['dashboard']);
  });
});

describe('ingestion keys authorize POST /api/v1/traces', () => {
  it('a created key ingests; once revoked it gets 401', async () => {
    const { org, admin } = await newTeam();
    const { key, secret } = (await create(admin, org.id)).body;
    const root = randomBytes(8).toString('hex');
    const batch = (revision: number) => ({
      version: 1,
      events: [
        {
          traceId: traceIdOf(root),
          spanId: root,
          rootSpanId: root,
          revision,
          name: 'job',
          service: 'svc',
          kind: 'execution',
          status: 'success',
          startedAt: Date.now() - 10,
          endedAt: Date.now(),
        },
      ],
    });
    expect(
      (await call('POST', '/traces', { headers: { authorization: `Bearer ${secret}` }, body: batch(0) })).status,
    ).toBe(200);
    const [used] = (await admin.call('GET', `/organizations/${org.id}/ingestion-keys`)).body.items;
    expect(used.lastUsedAt).toEqual(expect.any(String));
    await admin.call('DELETE', `/organizations/${org.id}/ingestion-keys/${key.id}`);
    expect(
      (await call('POST', '/traces', { headers: { authorization: `Bearer ${secret}` }, body: batch(1) })).status,
    ).toBe(401);
  });
});

const traceIdOf = (seed: string) => `${seed}${seed}`;
