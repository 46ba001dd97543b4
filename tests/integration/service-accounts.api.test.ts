import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { auditLog, idempotencyRecords, organizations, serviceAccounts } from '@/db/schema';
import { authenticateManagement } from '@/server/auth/oauth';
import {
  builtInTeam,
  builtInUser,
  http,
  newServiceAccount,
  serviceAccountToken,
  startStack,
  type Stack,
} from '../helpers/service-accounts';
import { drain, echoRows, importRows, saveVersion } from '../helpers/evals';
import { activePrompt, promptWithVersions } from '../helpers/prompts';
import { caller, rejection } from '../helpers/trpc';

// Service accounts through the management API (and the dashboard's tRPC procedures): who may
// manage them, what a replayed create answers, and how an account acts once it has a token: in its
// one organization, with its role, named in audit entries and label history, refused after revocation.

let stack: Stack;
let url: string;

beforeAll(async () => {
  stack = await startStack();
  url = stack.url;
}, 120_000);
afterAll(() => stack?.stop());

const base = (organizationId: string) => `/organizations/${organizationId}/service-accounts`;

async function accountRows(organizationId: string) {
  return (await getDb()).select().from(serviceAccounts).where(eq(serviceAccounts.organizationId, organizationId));
}

async function auditOf(organizationId: string) {
  return (await getDb())
    .select()
    .from(auditLog)
    .where(eq(auditLog.organizationId, organizationId))
    .orderBy(auditLog.id);
}

function expectError(result: { status: number; body: any }, status: number, code: string) {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.body.error.code).toBe(code);
}

describe('managing service accounts', () => {
  it('an admin creates (secret once), lists (newest first, revoked kept), gets and revokes; revoking again changes nothing', async () => {
    const { org, admin } = await builtInTeam(url);
    const created = await admin.call('POST', base(org.id), { body: { name: '  GitHub Actions  ', role: 'editor' } });
    expect(created.status).toBe(201);
    const { serviceAccount, clientSecret } = created.body;
    expect(Object.keys(created.body).sort()).toEqual(['clientSecret', 'serviceAccount']);
    expect(clientSecret).toMatch(/^pls_[0-9A-Za-z]{43}$/);
    expect(serviceAccount).toEqual({
      id: expect.stringMatching(/^sac_[0-9a-z]{26}$/),
      clientId: expect.stringMatching(/^sa_[0-9a-z]{26}$/),
      name: 'GitHub Actions',
      role: 'editor',
      createdAt: expect.any(String),
      createdBy: admin.id,
      lastUsedAt: null,
      revokedAt: null,
    });
    // Only the digest is stored.
    const [row] = await accountRows(org.id);
    expect(row.secretDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(clientSecret.slice(4));

    const second = (await admin.call('POST', base(org.id), { body: { name: 'Nightly', role: 'viewer' } })).body
      .serviceAccount;
    const listed = await admin.call('GET', base(org.id));
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((a: any) => a.id)).toEqual([second.id, serviceAccount.id]);
    expect(JSON.stringify(listed.body)).not.toContain('pls_');
    const paged = await admin.call('GET', base(org.id), { query: 'limit=1' });
    expect(paged.body.items).toHaveLength(1);
    const next = await admin.call('GET', base(org.id), { query: `limit=1&cursor=${paged.body.nextCursor}` });
    expect(next.body).toEqual({ items: [expect.objectContaining({ id: serviceAccount.id })], nextCursor: null });

    expect((await admin.call('GET', `${base(org.id)}/${serviceAccount.id}`)).body).toEqual(serviceAccount);

    const revoked = await admin.call('DELETE', `${base(org.id)}/${serviceAccount.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ ...serviceAccount, revokedAt: expect.any(String) });
    const again = await admin.call('DELETE', `${base(org.id)}/${serviceAccount.id}`);
    expect(again.body).toEqual(revoked.body);
    expect((await admin.call('GET', base(org.id))).body.items.map((a: any) => [a.id, a.revokedAt])).toEqual([
      [second.id, null],
      [serviceAccount.id, revoked.body.revokedAt],
    ]);

    const audit = (await auditOf(org.id)).filter((a) => a.targetType === 'service_account');
    expect(audit.map((a) => [a.operation, a.targetId, a.userId])).toEqual([
      ['serviceAccount.create', serviceAccount.id, admin.id],
      ['serviceAccount.create', second.id, admin.id],
      ['serviceAccount.revoke', serviceAccount.id, admin.id],
    ]);
    expect(JSON.stringify(audit)).not.toContain(clientSecret.slice(4));
  });

  it('editors and viewers get 403 admin_required for each operation; nothing is created or revoked', async () => {
    const { org, admin, editor, viewer } = await builtInTeam(url);
    const existing = (await admin.call('POST', base(org.id), { body: { name: 'Kept', role: 'viewer' } })).body
      .serviceAccount;
    for (const member of [editor, viewer]) {
      expectError(await member.call('GET', base(org.id)), 403, 'admin_required');
      expectError(
        await member.call('POST', base(org.id), { body: { name: 'Mine', role: 'admin' } }),
        403,
        'admin_required',
      );
      expectError(await member.call('GET', `${base(org.id)}/${existing.id}`), 403, 'admin_required');
      expectError(await member.call('DELETE', `${base(org.id)}/${existing.id}`), 403, 'admin_required');
    }
    const rows = await accountRows(org.id);
    expect(rows.map((r) => [r.id, r.revokedAt])).toEqual([[existing.id, null]]);
  });

  it('another organization, or an unknown or malformed id → 404 not_found', async () => {
    const { org, admin } = await builtInTeam(url);
    const other = await builtInTeam(url);
    const foreign = (await other.admin.call('POST', base(other.org.id), { body: { name: 'Theirs', role: 'admin' } }))
      .body.serviceAccount;
    expectError(await admin.call('GET', base(other.org.id)), 404, 'not_found');
    expectError(
      await admin.call('POST', base(other.org.id), { body: { name: 'x', role: 'viewer' } }),
      404,
      'not_found',
    );
    for (const id of [foreign.id, 'sac_00000000000000000000000000', 'nope']) {
      expectError(await admin.call('GET', `${base(org.id)}/${id}`), 404, 'not_found');
      expectError(await admin.call('DELETE', `${base(org.id)}/${id}`), 404, 'not_found');
    }
    expect((await accountRows(other.org.id))[0].revokedAt).toBeNull();
  });

  it('validation: name 1–100 characters, role required and one of admin|editor|viewer, no unknown fields → 400, nothing created', async () => {
    const { org, admin } = await builtInTeam(url);
    const bodies = [
      { name: '', role: 'viewer' },
      { name: '   ', role: 'viewer' },
      { name: 'x'.repeat(101), role: 'viewer' },
      { name: 'No role' },
      { name: 'Owner', role: 'owner' },
      { name: 'Extra', role: 'viewer', organizationId: org.id },
      { name: 'Nul\u0000', role: 'viewer' },
    ];
    for (const body of bodies) {
      const result = await admin.call('POST', base(org.id), { body });
      expectError(result, 400, 'invalid_request');
      expect(result.body.error.details.issues.length, JSON.stringify(body)).toBeGreaterThan(0);
    }
    expect((await admin.call('POST', base(org.id), { body: { name: 'x'.repeat(100), role: 'viewer' } })).status).toBe(
      201,
    );
    expect(await accountRows(org.id)).toHaveLength(1);
  });

  it('a read-only organization refuses new accounts (403 read_only) but still revokes', async () => {
    const { org, admin } = await builtInTeam(url);
    const existing = (await admin.call('POST', base(org.id), { body: { name: 'Before', role: 'viewer' } })).body
      .serviceAccount;
    await (await getDb()).update(organizations).set({ readOnly: true }).where(eq(organizations.id, org.id));
    expectError(await admin.call('POST', base(org.id), { body: { name: 'After', role: 'viewer' } }), 403, 'read_only');
    expect((await admin.call('DELETE', `${base(org.id)}/${existing.id}`)).body.revokedAt).not.toBeNull();
    expect(await accountRows(org.id)).toHaveLength(1);
  });

  it('a replayed create (same Idempotency-Key) → 409 secret_unavailable with details.serviceAccount, no secret, no second account', async () => {
    const { org, admin } = await builtInTeam(url);
    const headers = { 'idempotency-key': `sa-create-${org.id}` };
    const first = await admin.call('POST', base(org.id), { body: { name: 'CI', role: 'editor' }, headers });
    expect(first.status).toBe(201);
    const replay = await admin.call('POST', base(org.id), { body: { name: 'CI', role: 'editor' }, headers });
    expectError(replay, 409, 'secret_unavailable');
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body.error.details).toEqual({ serviceAccount: first.body.serviceAccount });
    expect(JSON.stringify(replay.body)).not.toContain(first.body.clientSecret.slice(4));
    expect(await accountRows(org.id)).toHaveLength(1);
    const [record] = await (
      await getDb()
    )
      .select()
      .from(idempotencyRecords)
      .where(
        and(eq(idempotencyRecords.organizationId, org.id), eq(idempotencyRecords.key, headers['idempotency-key'])),
      );
    expect(record.responseStatus).toBe(201);
    expect(JSON.stringify(record.responseBody)).not.toContain(first.body.clientSecret.slice(4));
    // Revoked since: the replay shows the account as it is now.
    const revoked = await admin.call('DELETE', `${base(org.id)}/${first.body.serviceAccount.id}`);
    expect(revoked.body.revokedAt).toEqual(expect.any(String));
    const later = await admin.call('POST', base(org.id), { body: { name: 'CI', role: 'editor' }, headers });
    expectError(later, 409, 'secret_unavailable');
    expect(later.body.error.details).toEqual({ serviceAccount: revoked.body });
    // A different body with the same key is a conflict, and still one account.
    expectError(
      await admin.call('POST', base(org.id), { body: { name: 'CI 2', role: 'editor' }, headers }),
      422,
      'idempotency_conflict',
    );
    expect(await accountRows(org.id)).toHaveLength(1);
  });

  it('the dashboard’s procedures call the same services (admin only)', async () => {
    const { org, admin, editor } = await builtInTeam(url);
    const dashboard = await caller(admin.id);
    const created = await dashboard.serviceAccounts.create({
      organizationId: org.id,
      name: 'From the dashboard',
      role: 'viewer',
    });
    expect(created.clientSecret).toMatch(/^pls_/);
    expect(created.serviceAccount.createdBy).toBe(admin.id);
    const list = await dashboard.serviceAccounts.list({ organizationId: org.id });
    expect(list.items.map((a) => a.id)).toEqual([created.serviceAccount.id]);
    const revoked = await dashboard.serviceAccounts.revoke({
      organizationId: org.id,
      serviceAccountId: created.serviceAccount.id,
    });
    expect(revoked.revokedAt).not.toBeNull();
    const refused = await rejection((await caller(editor.id)).serviceAccounts.list({ organizationId: org.id }));
    expect(refused.cause.code).toBe('admin_required');
    const invalid = await rejection(
      dashboard.serviceAccounts.create({ organizationId: org.id, name: '', role: 'viewer' }),
    );
    expect(invalid.code).toBe('BAD_REQUEST');
    const audit = (await auditOf(org.id)).filter((a) => a.targetType === 'service_account');
    expect(audit.map((a) => [a.operation, a.clientId])).toEqual([
      ['serviceAccount.create', 'dashboard'],
      ['serviceAccount.revoke', 'dashboard'],
    ]);
  });

  it('any member reads the names of the accounts (revoked ones too), so history can say who acted', async () => {
    const { org, admin, viewer } = await builtInTeam(url);
    const dashboard = await caller(admin.id);
    const created = await dashboard.serviceAccounts.create({ organizationId: org.id, name: 'CI gate', role: 'editor' });
    const names = await (await caller(viewer.id)).organizations.serviceAccountNames({ organizationId: org.id });
    expect(names).toEqual([
      { id: created.serviceAccount.id, clientId: created.serviceAccount.clientId, name: 'CI gate' },
    ]);
    const stranger = await builtInTeam(url);
    const refused = await rejection(
      (await caller(stranger.admin.id)).organizations.serviceAccountNames({ organizationId: org.id }),
    );
    expect(refused.cause.code).toBe('not_found');
  });
});

describe('acting as a service account', () => {
  let team: Awaited<ReturnType<typeof builtInTeam>>;
  beforeAll(async () => {
    team = await builtInTeam(url);
  });

  it('GET /me: { id, email: null, name, defaultOrganizationId, kind: "service_account" }; people get kind "user"', async () => {
    const account = await newServiceAccount(url, team.admin, team.org.id, 'viewer', 'Release bot');
    expect((await account.actor.call('GET', '/me')).body).toEqual({
      id: account.serviceAccount.id,
      email: null,
      name: 'Release bot',
      defaultOrganizationId: team.org.id,
      kind: 'service_account',
    });
    expect((await team.admin.call('GET', '/me')).body).toMatchObject({
      id: team.admin.id,
      email: team.admin.email,
      kind: 'user',
    });
    expect((await account.actor.call('GET', '/me/default-organization')).body).toMatchObject({
      id: team.org.id,
      role: 'viewer',
    });
  });

  it('acts only in its organization: GET /organizations lists that one; another organization is 404', async () => {
    const account = await newServiceAccount(url, team.admin, team.org.id, 'editor');
    const listed = await account.actor.call('GET', '/organizations');
    expect(listed.body).toEqual({
      items: [expect.objectContaining({ id: team.org.id, role: 'editor' })],
      nextCursor: null,
    });
    const other = await builtInTeam(url);
    expectError(await account.actor.call('GET', `/organizations/${other.org.id}`), 404, 'not_found');
    expectError(await account.actor.call('GET', `/organizations/${other.org.id}/prompts`), 404, 'not_found');
    expectError(
      await account.actor.call('POST', `/organizations/${other.org.id}/prompts`, { body: { name: 'Intruder' } }),
      404,
      'not_found',
    );
    expect((await other.admin.call('GET', `/organizations/${other.org.id}/prompts`)).body.items).toHaveLength(0);
  });

  it('cannot create organizations or set a default (403 forbidden), is not a member, and its role is enforced', async () => {
    const viewerAccount = await newServiceAccount(url, team.admin, team.org.id, 'viewer');
    expectError(
      await viewerAccount.actor.call('POST', '/organizations', { body: { name: 'Bot org' } }),
      403,
      'forbidden',
    );
    expectError(
      await viewerAccount.actor.call('PUT', '/me/default-organization', { body: { organizationId: team.org.id } }),
      403,
      'forbidden',
    );
    expectError(
      await viewerAccount.actor.call('PUT', '/me/default-organization', { body: { organizationId: null } }),
      403,
      'forbidden',
    );
    const members = (await team.admin.call('GET', `/organizations/${team.org.id}/members`)).body.items.map(
      (m: any) => m.userId,
    );
    expect(members).not.toContain(viewerAccount.serviceAccount.id);
    expect(members).toHaveLength(3);

    // A viewer reads but cannot write.
    expect((await viewerAccount.actor.call('GET', `/organizations/${team.org.id}/prompts`)).status).toBe(200);
    expectError(
      await viewerAccount.actor.call('POST', `/organizations/${team.org.id}/prompts`, { body: { name: 'Nope' } }),
      403,
      'forbidden',
    );
    // An editor writes but cannot administer.
    const editorAccount = await newServiceAccount(url, team.admin, team.org.id, 'editor');
    expect(
      (await editorAccount.actor.call('POST', `/organizations/${team.org.id}/prompts`, { body: { name: 'By CI' } }))
        .status,
    ).toBe(201);
    expectError(
      await editorAccount.actor.call('PATCH', `/organizations/${team.org.id}`, { body: { name: 'Renamed by CI' } }),
      403,
      'admin_required',
    );
    expectError(await editorAccount.actor.call('GET', base(team.org.id)), 403, 'admin_required');
    // An admin account administers, but does not create service accounts: revoking it must reach every
    // credential it could have made. It may still revoke one.
    const adminAccount = await newServiceAccount(url, team.admin, team.org.id, 'admin');
    const before = (await team.admin.call('GET', base(team.org.id))).body.items.length;
    const minted = await adminAccount.actor.call('POST', base(team.org.id), {
      body: { name: 'Minted', role: 'admin' },
    });
    expectError(minted, 403, 'forbidden');
    expect(minted.body.error.details).toEqual({ actor: 'service_account' });
    expect((await team.admin.call('GET', base(team.org.id))).body.items).toHaveLength(before);
    const revoked = await adminAccount.actor.call('DELETE', `${base(team.org.id)}/${editorAccount.serviceAccount.id}`);
    expect(revoked.status).toBe(200);

    // Nor does it grant people access (adding a member, changing a role): a stolen admin secret could
    // otherwise add its owner as an admin, who stays after the account is revoked. It may remove members.
    const membersPath = `/organizations/${team.org.id}/members`;
    const membersBefore = (await team.admin.call('GET', membersPath)).body.items;
    const outsider = await builtInUser(url);
    const added = await adminAccount.actor.call('POST', membersPath, {
      body: { email: outsider.email, role: 'admin' },
    });
    expectError(added, 403, 'forbidden');
    expect(added.body.error.details).toEqual({ actor: 'service_account' });
    for (const role of ['admin', 'viewer']) {
      const changed = await adminAccount.actor.call('PATCH', `${membersPath}/${team.editor.id}`, { body: { role } });
      expectError(changed, 403, 'forbidden');
    }
    expect((await team.admin.call('GET', membersPath)).body.items).toEqual(membersBefore);
    expect((await adminAccount.actor.call('DELETE', `${membersPath}/${team.viewer.id}`)).status).toBe(204);
    await team.admin.call('POST', membersPath, { body: { email: team.viewer.email, role: 'viewer' } });
  });

  it('the role is read live: a change in the database applies to the next request with the same token', async () => {
    const account = await newServiceAccount(url, team.admin, team.org.id, 'viewer');
    expectError(
      await account.actor.call('POST', `/organizations/${team.org.id}/prompts`, { body: { name: 'Later' } }),
      403,
      'forbidden',
    );
    await (
      await getDb()
    )
      .update(serviceAccounts)
      .set({ role: 'editor' })
      .where(eq(serviceAccounts.id, account.serviceAccount.id));
    expect(
      (await account.actor.call('POST', `/organizations/${team.org.id}/prompts`, { body: { name: 'Later' } })).status,
    ).toBe(201);
  });

  it('revocation is effective on the very next request (401), and replays are refused too', async () => {
    const account = await newServiceAccount(url, team.admin, team.org.id, 'editor');
    const headers = { 'idempotency-key': `sa-replay-${account.serviceAccount.id}` };
    expect(
      (
        await account.actor.call('POST', `/organizations/${team.org.id}/prompts`, {
          body: { name: 'Replayable' },
          headers,
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await account.actor.call('POST', `/organizations/${team.org.id}/prompts`, {
          body: { name: 'Replayable' },
          headers,
        })
      ).headers.get('idempotency-replayed'),
    ).toBe('true');
    expect((await team.admin.call('DELETE', `${base(team.org.id)}/${account.serviceAccount.id}`)).status).toBe(200);
    for (const [method, path, body] of [
      ['GET', '/me', undefined],
      ['GET', `/organizations/${team.org.id}/prompts`, undefined],
      ['POST', `/organizations/${team.org.id}/prompts`, { name: 'Replayable' }],
    ] as const) {
      const refused = await account.actor.call(method, path, { body, headers: method === 'POST' ? headers : {} });
      expectError(refused, 401, 'unauthorized');
      expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    }
  });

  it('label history and audit entries name it (userId sac_…, clientId sa_…); its actor is never human', async () => {
    const account = await newServiceAccount(url, team.admin, team.org.id, 'editor');
    const { id, clientId } = account.serviceAccount;
    const { base: promptBase, ids } = await promptWithVersions(team.editor, team.org.id, 2);
    const moved = await account.actor.call('PUT', `${promptBase}/labels/production`, { body: { versionId: ids[1] } });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    const history = await team.viewer.call('GET', `${promptBase}/label-history`, { query: 'label=production' });
    expect(history.body.items[0]).toMatchObject({ label: 'production', toVersionId: ids[1], userId: id, clientId });
    const entry = (await auditOf(team.org.id)).filter((a) => a.operation.startsWith('label')).at(-1)!;
    expect([entry.userId, entry.clientId]).toEqual([id, clientId]);
    // The dashboard's audit log shows it as such.
    const log = await (await caller(team.admin.id)).audit.list({ organizationId: team.org.id });
    expect(log.items.find((item) => item.userId === id)).toMatchObject({ clientId, userEmail: null });

    const actor = await authenticateManagement(
      await getDb(),
      new Request(`${url}/api/v1/me`, { headers: { authorization: `Bearer ${account.token}` } }),
    );
    expect(actor).toEqual({ userId: id, clientId, human: false, serviceAccount: true });
  });

  it('a CI gate end to end: it starts a comparison and submits reviews, recorded with human: false', async () => {
    const account = await newServiceAccount(url, team.admin, team.org.id, 'editor');
    const { prompt, base: promptBase } = await activePrompt(team.editor, team.org.id);
    await importRows(team.editor, team.org.id, prompt.id, echoRows(2));
    const v2 = await saveVersion(team.editor, team.org.id, prompt.id, 'You answer support questions, briefly.');
    expect((await team.editor.call('PUT', `${promptBase}/scoring`, { body: { method: 'review' } })).status).toBe(200);
    const started = await account.actor.call('POST', `${promptBase}/evals`, {
      body: { versionId: v2.id, scope: 'quick' },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    await drain();
    const evalBase = `/organizations/${team.org.id}/evals/${started.body.id}`;
    const results = (await account.actor.call('GET', `${evalBase}/results`, { query: 'side=candidate' })).body.items;
    const reviewed = await account.actor.call('POST', `${evalBase}/reviews`, {
      body: { reviews: results.map((r: any) => ({ resultId: r.id, decision: 'mark_correct' })) },
    });
    expect(reviewed.status, JSON.stringify(reviewed.body)).toBe(200);
    const after = (await team.viewer.call('GET', `${evalBase}/results`, { query: 'side=candidate' })).body.items;
    for (const result of after) {
      expect(result.review).toMatchObject({
        decision: 'mark_correct',
        userId: account.serviceAccount.id,
        clientId: account.serviceAccount.clientId,
        human: false,
      });
    }
  });

  it('a fresh token for the same account works after an old one (tokens are independent of each other)', async () => {
    const account = await newServiceAccount(url, team.admin, team.org.id, 'viewer');
    const fresh = await serviceAccountToken(url, account.serviceAccount.clientId, account.clientSecret);
    expect((await http(url, 'GET', '/me', { token: fresh })).status).toBe(200);
    expect((await http(url, 'GET', '/me', { token: account.token })).status).toBe(200);
  });

  it('an organization deleted with its accounts: their tokens are refused', async () => {
    const solo = await builtInUser(url);
    const org = (await solo.call('POST', '/organizations', { body: { name: 'Short-lived' } })).body;
    const account = await newServiceAccount(url, solo, org.id, 'admin');
    await (await getDb()).delete(organizations).where(eq(organizations.id, org.id));
    expectError(await account.actor.call('GET', '/me'), 401, 'unauthorized');
  });
});
