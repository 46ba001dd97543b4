import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { auditLog, organizations } from '@/db/schema';
import { newId } from '@/server/ids';
import { raiseWarning, resolveWarning } from '@/server/warnings/service';
import { newOrganization, newTeam, newUser, type TestUser } from '../helpers/api';
import { caller, rejection } from '../helpers/trpc';

function expectError(result: { status: number; body: any }, status: number, code: string) {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.body.error.code).toBe(code);
}

// Three warnings seen at t0+1s, t0+2s, t0+3s; the middle one resolved.
async function seed(organizationId: string) {
  const db = await getDb();
  const t0 = Date.parse('2030-01-01T00:00:00.000Z');
  const promptId = newId('prm');
  const keyId = newId('key');
  const evaluationId = newId('eval');
  await raiseWarning(db, {
    organizationId,
    kind: 'archived_prompt_used',
    subjectId: promptId,
    promptId,
    message: 'Archived prompt retrieved.',
    occurrences: 7,
    at: new Date(t0 + 1000),
  });
  await raiseWarning(db, {
    organizationId,
    kind: 'key_unused',
    subjectId: keyId,
    keyId,
    promptId,
    message: 'Key unused.',
    details: { keyType: 'retrieval' },
    at: new Date(t0 + 2000),
  });
  await resolveWarning(db, { organizationId, kind: 'key_unused', subjectId: keyId, at: new Date(t0 + 2500) });
  await raiseWarning(db, {
    organizationId,
    kind: 'evaluation_paused',
    subjectId: evaluationId,
    promptId,
    message: 'Paused.',
    at: new Date(t0 + 3000),
  });
  return { promptId, keyId, evaluationId };
}

const list = (user: TestUser, orgId: string, query?: string) =>
  user.call('GET', `/organizations/${orgId}/warnings`, { query });

describe('GET /organizations/{org}/warnings', () => {
  it('viewers list open warnings by default, newest lastSeenAt first, in the API.md shape', async () => {
    const { org, viewer } = await newTeam();
    const { promptId, evaluationId } = await seed(org.id);
    const result = await list(viewer, org.id);
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(result.headers.get('cache-control')).toBe('no-store');
    expect(result.body.nextCursor).toBeNull();
    expect(result.body.items).toEqual([
      {
        id: expect.stringMatching(/^warn_[0-9a-z]{26}$/),
        kind: 'evaluation_paused',
        message: 'Paused.',
        subjectId: evaluationId,
        promptId,
        keyId: null,
        details: {},
        firstSeenAt: '2030-01-01T00:00:03.000Z',
        lastSeenAt: '2030-01-01T00:00:03.000Z',
        count: 1,
        resolvedAt: null,
      },
      expect.objectContaining({ kind: 'archived_prompt_used', subjectId: promptId, count: 7, resolvedAt: null }),
    ]);
  });

  it('filters by state and kind, and pages with a cursor', async () => {
    const { org, viewer } = await newTeam();
    const { keyId } = await seed(org.id);
    const resolved = await list(viewer, org.id, 'state=resolved');
    expect(resolved.body.items).toEqual([
      expect.objectContaining({
        kind: 'key_unused',
        keyId,
        resolvedAt: '2030-01-01T00:00:02.500Z',
        details: { keyType: 'retrieval' },
      }),
    ]);
    const all = await list(viewer, org.id, 'state=all');
    expect(all.body.items.map((w: any) => w.kind)).toEqual(['evaluation_paused', 'key_unused', 'archived_prompt_used']);
    expect((await list(viewer, org.id, 'state=all&kind=key_unused')).body.items.map((w: any) => w.keyId)).toEqual([
      keyId,
    ]);
    expect((await list(viewer, org.id, 'kind=key_unused')).body.items).toEqual([]);

    const first = await list(viewer, org.id, 'state=all&limit=2');
    expect(first.body.items.map((w: any) => w.kind)).toEqual(['evaluation_paused', 'key_unused']);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await list(viewer, org.id, `state=all&limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body.items.map((w: any) => w.kind)).toEqual(['archived_prompt_used']);
    expect(second.body.nextCursor).toBeNull();
  });

  it.each([
    ['an unknown parameter', 'severity=high', 'severity'],
    ['an unknown state', 'state=closed', 'state'],
    ['an unknown kind', 'kind=nope', 'kind'],
    ['a limit over 100', 'limit=101', 'limit'],
    ['a duplicate parameter', 'state=open&state=all', 'state'],
    ['a malformed cursor', 'cursor=not-a-cursor', 'cursor'],
    ['a poison string', 'cursor=%00', 'cursor'],
  ])('%s → 400 invalid_request', async (_label, query, path) => {
    const { org, viewer } = await newTeam();
    const result = await list(viewer, org.id, query);
    expectError(result, 400, 'invalid_request');
    expect(JSON.stringify(result.body.error.details)).toContain(path);
  });

  it('another organization, a missing one and no credential are refused without leaking anything', async () => {
    const { org } = await newTeam();
    await seed(org.id);
    const outsider = await newUser();
    await newOrganization(outsider);
    expectError(await list(outsider, org.id), 404, 'not_found');
    expectError(await list(outsider, 'org_00000000000000000000000000'), 404, 'not_found');
    expectError(await list(outsider, 'nope'), 404, 'not_found');
    const { call } = await import('../helpers/api');
    expectError(await call('GET', `/organizations/${org.id}/warnings`), 401, 'unauthorized');
  });
});

describe('POST /organizations/{org}/warnings/{id}/resolve (dismiss)', () => {
  it('editors dismiss an open warning (audited); again returns it unchanged; the next occurrence reopens it', async () => {
    const { org, editor } = await newTeam();
    const { promptId } = await seed(org.id);
    const [warning] = (await list(editor, org.id, 'kind=archived_prompt_used')).body.items;
    const dismissed = await editor.call('POST', `/organizations/${org.id}/warnings/${warning.id}/resolve`);
    expect(dismissed.status, JSON.stringify(dismissed.body)).toBe(200);
    expect(dismissed.body).toMatchObject({ id: warning.id, count: 7, resolvedAt: expect.any(String) });
    const again = await editor.call('POST', `/organizations/${org.id}/warnings/${warning.id}/resolve`);
    expect(again.body).toEqual(dismissed.body);
    const audit = await (await getDb()).select().from(auditLog).where(eq(auditLog.organizationId, org.id));
    expect(audit.filter((a) => a.operation === 'warning.dismiss')).toEqual([
      expect.objectContaining({ targetId: warning.id, userId: editor.id }),
    ]);

    await raiseWarning(await getDb(), {
      organizationId: org.id,
      kind: 'archived_prompt_used',
      subjectId: promptId,
      promptId,
      message: 'Again.',
    });
    const reopened = (await list(editor, org.id, 'kind=archived_prompt_used')).body.items[0];
    expect(reopened).toMatchObject({ id: warning.id, count: 8, resolvedAt: null, firstSeenAt: warning.firstSeenAt });
  });

  it('viewers are refused (403), other organizations and unknown ids are 404, read-only organizations 409', async () => {
    const { org, viewer, admin } = await newTeam();
    await seed(org.id);
    const [warning] = (await list(viewer, org.id)).body.items;
    expectError(await viewer.call('POST', `/organizations/${org.id}/warnings/${warning.id}/resolve`), 403, 'forbidden');
    const outsider = await newUser();
    const other = await newOrganization(outsider);
    expectError(
      await outsider.call('POST', `/organizations/${org.id}/warnings/${warning.id}/resolve`),
      404,
      'not_found',
    );
    // The warning id under the caller's own organization is not found either.
    expectError(
      await outsider.call('POST', `/organizations/${other.id}/warnings/${warning.id}/resolve`),
      404,
      'not_found',
    );
    expectError(await admin.call('POST', `/organizations/${org.id}/warnings/warn_nope/resolve`), 404, 'not_found');
    await (await getDb()).update(organizations).set({ readOnly: true }).where(eq(organizations.id, org.id));
    const readOnly = await admin.call('POST', `/organizations/${org.id}/warnings/${warning.id}/resolve`);
    expect(readOnly.body.error.code).toBe('read_only');
    expect((await list(viewer, org.id)).body.items).toHaveLength(2);
  });
});

describe('tRPC warnings', () => {
  it('list and openCount for members; dismiss for editors; nothing for outsiders', async () => {
    const { org, viewer, editor } = await newTeam();
    await seed(org.id);
    const asViewer = await caller(viewer.id);
    expect(await asViewer.warnings.openCount({ organizationId: org.id })).toEqual({ open: 2 });
    const page = await asViewer.warnings.list({ organizationId: org.id, state: 'all', limit: 25 });
    expect(page.items).toHaveLength(3);
    const open = await asViewer.warnings.list({ organizationId: org.id, limit: 25 });
    expect(open.items.map((w) => w.kind)).toEqual(['evaluation_paused', 'archived_prompt_used']);

    const denied = await rejection(asViewer.warnings.dismiss({ organizationId: org.id, warningId: open.items[0].id }));
    expect(denied.code).toBe('FORBIDDEN');
    await (await caller(editor.id)).warnings.dismiss({ organizationId: org.id, warningId: open.items[0].id });
    expect(await asViewer.warnings.openCount({ organizationId: org.id })).toEqual({ open: 1 });

    const outsider = await newUser();
    expect((await rejection((await caller(outsider.id)).warnings.openCount({ organizationId: org.id }))).code).toBe(
      'NOT_FOUND',
    );
    expect((await rejection((await caller(null)).warnings.list({ organizationId: org.id, limit: 25 }))).code).toBe(
      'UNAUTHORIZED',
    );
    expect(
      (await rejection(asViewer.warnings.list({ organizationId: org.id, limit: 25, state: 'closed' as never }))).code,
    ).toBe('BAD_REQUEST');
  });
});
