import { createHash } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { auditLog, organizations, retrievalKeys } from '@/db/schema';
import { parseRetrievalBearer, retrievalSecretDigest } from '@/server/auth/retrieval-key';
import { newSecret } from '@/server/ids';
import { call, newOrganization, newTeam, newUser, type TestUser } from '../helpers/api';
import { activePrompt, createPrompt } from '../helpers/prompts';

const keysPath = (orgId: string, promptId: string) => `/organizations/${orgId}/prompts/${promptId}/keys`;

function expectError(result: { status: number; body: any }, status: number, code: string) {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.body.error.code).toBe(code);
  expect(result.body.error.details).toBeTypeOf('object');
}

async function keyRows(organizationId: string) {
  return (await getDb()).select().from(retrievalKeys).where(eq(retrievalKeys.organizationId, organizationId));
}

async function auditCount(organizationId: string) {
  const rows = await (await getDb()).select().from(auditLog).where(eq(auditLog.organizationId, organizationId));
  return rows.filter((r) => r.operation.startsWith('retrievalKey.')).length;
}

async function create(user: TestUser, orgId: string, promptId: string, body: unknown = { name: 'Key' }) {
  return user.call('POST', keysPath(orgId, promptId), { body });
}

describe('retrieval keys: invalid input', () => {
  it.each([
    ['missing name', {}, 'name'],
    ['empty name', { name: '' }, 'name'],
    ['blank name', { name: '   ' }, 'name'],
    ['name over 100 characters', { name: 'x'.repeat(101) }, 'name'],
    ['name not a string', { name: 7 }, 'name'],
    ['unknown field', { name: 'Key', scopes: ['read'] }, 'scopes'],
    ['a poison string', { name: 'a\u0000b' }, 'name'],
  ])('%s → 400 invalid_request and nothing created', async (_label, body, path) => {
    const { org, admin } = await newTeam();
    const prompt = await createPrompt(admin, org.id);
    const result = await create(admin, org.id, prompt.id, body);
    expectError(result, 400, 'invalid_request');
    expect(result.body.error.details.issues.map((i: any) => i.path)).toContain(path);
    expect(await keyRows(org.id)).toHaveLength(0);
    expect(await auditCount(org.id)).toBe(0);
  });

  it('a body that is not JSON, or an array → 400', async () => {
    const { org, admin } = await newTeam();
    const prompt = await createPrompt(admin, org.id);
    expectError(
      await admin.call('POST', keysPath(org.id, prompt.id), {
        rawBody: '{"name":',
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'invalid_request',
    );
    expectError(await create(admin, org.id, prompt.id, [{ name: 'Key' }]), 400, 'invalid_request');
    expect(await keyRows(org.id)).toHaveLength(0);
  });

  it.each(['limit=0', 'limit=101', 'cursor=', 'cursor=bad', 'state=active', 'limit=2&limit=3'])(
    'list with %s → 400',
    async (query) => {
      const { org, admin } = await newTeam();
      const prompt = await createPrompt(admin, org.id);
      expectError(await admin.call('GET', keysPath(org.id, prompt.id), { query }), 400, 'invalid_request');
    },
  );

  it('revoke takes no body', async () => {
    const { org, admin } = await newTeam();
    const prompt = await createPrompt(admin, org.id);
    const { key } = (await create(admin, org.id, prompt.id)).body;
    expectError(
      await admin.call('DELETE', `${keysPath(org.id, prompt.id)}/${key.id}`, { body: { reason: 'x' } }),
      400,
      'invalid_request',
    );
    expect((await keyRows(org.id))[0].revokedAt).toBeNull();
  });
});

describe('retrieval keys: access', () => {
  it('without a token → 401', async () => {
    const { org, admin } = await newTeam();
    const prompt = await createPrompt(admin, org.id);
    expectError(await call('POST', keysPath(org.id, prompt.id), { body: { name: 'Key' } }), 401, 'unauthorized');
    expectError(await call('GET', keysPath(org.id, prompt.id)), 401, 'unauthorized');
  });

  it('a viewer → 403 forbidden for create and revoke; nothing changes', async () => {
    const { org, admin, viewer } = await newTeam();
    const { prompt } = await activePrompt(admin, org.id);
    const { key } = (await create(admin, org.id, prompt.id)).body;
    expectError(await create(viewer, org.id, prompt.id), 403, 'forbidden');
    expectError(await viewer.call('DELETE', `${keysPath(org.id, prompt.id)}/${key.id}`), 403, 'forbidden');
    const rows = await keyRows(org.id);
    expect(rows).toHaveLength(1);
    expect(rows[0].revokedAt).toBeNull();
    expect(await auditCount(org.id)).toBe(1);
  });

  it('a read-only organization → 403 read_only on create; listing and revoking still work', async () => {
    const { org, admin, editor } = await newTeam();
    const { prompt } = await activePrompt(admin, org.id);
    const { key } = (await create(admin, org.id, prompt.id)).body;
    await (await getDb()).update(organizations).set({ readOnly: true }).where(eq(organizations.id, org.id));
    expectError(await create(admin, org.id, prompt.id), 403, 'read_only');
    expectError(await create(editor, org.id, prompt.id), 403, 'read_only');
    expect(await keyRows(org.id)).toHaveLength(1);
    expect((await editor.call('GET', keysPath(org.id, prompt.id))).body.items).toHaveLength(1);
    const revoked = await editor.call('DELETE', `${keysPath(org.id, prompt.id)}/${key.id}`);
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    expect(revoked.body.revokedAt).toEqual(expect.any(String));
  });

  it('an archived prompt → 409 invalid_state (details.state archived) on create, no key made', async () => {
    const { org, admin } = await newTeam();
    const { prompt, base } = await activePrompt(admin, org.id);
    expect((await admin.call('POST', `${base}/archive`)).status).toBe(200);
    const result = await create(admin, org.id, prompt.id);
    expectError(result, 409, 'invalid_state');
    expect(result.body.error.details.state).toBe('archived');
    expect(await keyRows(org.id)).toHaveLength(0);
    expect(await auditCount(org.id)).toBe(0);
  });

  it('another organization’s member → 404 for create, list and revoke', async () => {
    const { org, admin } = await newTeam();
    const { prompt } = await activePrompt(admin, org.id);
    const { key } = (await create(admin, org.id, prompt.id)).body;
    const outsider = await newUser();
    await newOrganization(outsider);
    expectError(await create(outsider, org.id, prompt.id), 404, 'not_found');
    expectError(await outsider.call('GET', keysPath(org.id, prompt.id)), 404, 'not_found');
    expectError(await outsider.call('DELETE', `${keysPath(org.id, prompt.id)}/${key.id}`), 404, 'not_found');
    expect((await keyRows(org.id))[0].revokedAt).toBeNull();
  });

  it('a prompt of another organization, through my organization’s path → 404', async () => {
    const a = await newTeam();
    const mine = await newOrganization(a.admin);
    const { prompt } = await activePrompt(a.admin, a.org.id);
    const { key } = (await create(a.admin, a.org.id, prompt.id)).body;
    expectError(await create(a.admin, mine.id, prompt.id), 404, 'not_found');
    expectError(await a.admin.call('GET', keysPath(mine.id, prompt.id)), 404, 'not_found');
    expectError(await a.admin.call('DELETE', `${keysPath(mine.id, prompt.id)}/${key.id}`), 404, 'not_found');
    expect(await keyRows(mine.id)).toHaveLength(0);
    expect((await keyRows(a.org.id))[0].revokedAt).toBeNull();
  });

  it('an unknown prompt → 404', async () => {
    const { org, admin } = await newTeam();
    for (const id of ['prm_00000000000000000000000000', 'nope']) {
      expectError(await create(admin, org.id, id), 404, 'not_found');
      expectError(await admin.call('GET', keysPath(org.id, id)), 404, 'not_found');
    }
  });

  it('another prompt’s key, or an unknown key → 404 and nothing revoked', async () => {
    const { org, admin } = await newTeam();
    const { prompt } = await activePrompt(admin, org.id);
    const other = await createPrompt(admin, org.id, 'Other');
    const { key } = (await create(admin, org.id, prompt.id)).body;
    expectError(await admin.call('DELETE', `${keysPath(org.id, other.id)}/${key.id}`), 404, 'not_found');
    for (const id of ['key_00000000000000000000000000', 'ikey_00000000000000000000000000', 'bogus']) {
      expectError(await admin.call('DELETE', `${keysPath(org.id, prompt.id)}/${id}`), 404, 'not_found');
    }
    expect((await keyRows(org.id))[0].revokedAt).toBeNull();
    expect(await auditCount(org.id)).toBe(1);
  });

  it('an idempotent replay by a member who lost access is refused, not replayed', async () => {
    const { org, admin, editor } = await newTeam();
    const { prompt } = await activePrompt(admin, org.id);
    const headers = { 'idempotency-key': 'rkey-lost-access-1' };
    expect((await editor.call('POST', keysPath(org.id, prompt.id), { body: { name: 'K' }, headers })).status).toBe(201);
    expect((await admin.call('DELETE', `/organizations/${org.id}/members/${editor.id}`)).status).toBe(204);
    const replay = await editor.call('POST', keysPath(org.id, prompt.id), { body: { name: 'K' }, headers });
    expect(replay.status).toBe(404);
    expect(await keyRows(org.id)).toHaveLength(1);
  });
});

describe('retrieval key credentials', () => {
  it('parseRetrievalBearer accepts only Bearer plr_ + 43 base62 characters', () => {
    const secret = newSecret('plr_');
    expect(parseRetrievalBearer(`Bearer ${secret}`)).toBe(secret);
    expect(parseRetrievalBearer(`bearer ${secret}`)).toBe(secret);
    for (const bad of [
      undefined,
      '',
      secret,
      `Basic ${secret}`,
      `Bearer ${secret}x`,
      `Bearer ${secret.slice(0, -1)}`,
      `Bearer ${secret.slice(0, -1)}-`,
      `Bearer ${newSecret('plt_')}`,
      `Bearer PLR_${secret.slice(4)}`,
      `Bearer ${secret} `,
      `Bearer  ${secret}\n`,
      'Bearer eyJhbGciOiJFUzI1NiJ9.e30.sig',
    ]) {
      expect(parseRetrievalBearer(bad), String(bad)).toBeNull();
    }
  });

  it('retrievalSecretDigest is the SHA-256 hex of the secret, as stored', () => {
    const secret = newSecret('plr_');
    expect(retrievalSecretDigest(secret)).toBe(createHash('sha256').update(secret).digest('hex'));
    expect(retrievalSecretDigest(secret)).toMatch(/^[0-9a-f]{64}$/);
  });
});
