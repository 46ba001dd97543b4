import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { inEdgeTransaction } from '../helpers/transaction';
import { getDb } from '@/db/client';
import { auditLog, deletionLinks } from '@/db/schema';
import type { ServiceContext } from '@/server/context';
import { checkDeletionLink, deleteOrganization } from '@/server/orgs/service';
import { newTeam, newUser, type TestUser } from '../helpers/api';

async function dashboardCtx(user: TestUser): Promise<ServiceContext> {
  return { db: await getDb(), actor: { userId: user.id, clientId: 'dashboard', human: true } };
}

async function linkFor(user: TestUser, orgId: string): Promise<string> {
  const link = await user.call('POST', `/organizations/${orgId}/deletion-link`);
  expect(link.status).toBe(200);
  return new URL(link.body.url).searchParams.get('token')!;
}

describe('deleting an organization through the dashboard link', () => {
  it('requires the exact organization name, then deletes for good', async () => {
    const { org, admin, editor } = await newTeam();
    await admin.call('PUT', '/me/default-organization', { body: { organizationId: org.id } });
    const token = await linkFor(admin, org.id);
    const ctx = await dashboardCtx(admin);
    expect(await checkDeletionLink(ctx, org.id, token)).toMatchObject({ organizationId: org.id, name: org.name });

    await expect(
      inEdgeTransaction(ctx, (tx) => deleteOrganization(tx, org.id, { token, confirmName: org.name.toUpperCase() })),
    ).rejects.toMatchObject({
      code: 'confirmation_mismatch',
    });
    await expect(
      inEdgeTransaction(ctx, (tx) => deleteOrganization(tx, org.id, { token, confirmName: `${org.name} ` })),
    ).rejects.toMatchObject({ code: 'confirmation_mismatch' });
    expect((await admin.call('GET', `/organizations/${org.id}`)).status).toBe(200);

    await inEdgeTransaction(ctx, (tx) => deleteOrganization(tx, org.id, { token, confirmName: org.name }));
    expect((await admin.call('GET', `/organizations/${org.id}`)).status).toBe(404);
    expect((await editor.call('GET', `/organizations/${org.id}`)).status).toBe(404);
    expect((await admin.call('GET', '/me')).body.defaultOrganizationId).toBeNull();
    const audit = await (await getDb()).select().from(auditLog).where(eq(auditLog.organizationId, org.id));
    expect(audit.map((e) => e.operation)).toContain('organization.delete');
  });

  it('only an admin can use the link', async () => {
    const { org, admin, editor } = await newTeam();
    const token = await linkFor(admin, org.id);
    await expect(
      inEdgeTransaction(await dashboardCtx(editor), (tx) =>
        deleteOrganization(tx, org.id, { token, confirmName: org.name }),
      ),
    ).rejects.toMatchObject({
      code: 'admin_required',
    });
    const outsider = await newUser();
    await expect(
      inEdgeTransaction(await dashboardCtx(outsider), (tx) =>
        deleteOrganization(tx, org.id, { token, confirmName: org.name }),
      ),
    ).rejects.toMatchObject({
      code: 'not_found',
    });
    expect((await admin.call('GET', `/organizations/${org.id}`)).status).toBe(200);
  });

  it('an expired link, a forged token or another organization’s token is refused', async () => {
    const { org, admin } = await newTeam();
    const other = await newTeam();
    const ctx = await dashboardCtx(admin);
    await expect(
      inEdgeTransaction(ctx, (tx) => deleteOrganization(tx, org.id, { token: 'forged-token', confirmName: org.name })),
    ).rejects.toMatchObject({ code: 'invalid_state' });
    const otherToken = await linkFor(other.admin, other.org.id);
    await expect(
      inEdgeTransaction(ctx, (tx) => deleteOrganization(tx, org.id, { token: otherToken, confirmName: org.name })),
    ).rejects.toMatchObject({ code: 'invalid_state' });
    const token = await linkFor(admin, org.id);
    const db = await getDb();
    await db
      .update(deletionLinks)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(deletionLinks.organizationId, org.id));
    await expect(
      inEdgeTransaction(ctx, (tx) => deleteOrganization(tx, org.id, { token, confirmName: org.name })),
    ).rejects.toMatchObject({ code: 'invalid_state' });
    expect((await admin.call('GET', `/organizations/${org.id}`)).status).toBe(200);
  });

  it('stores only a digest of the link token', async () => {
    const { org, admin } = await newTeam();
    const token = await linkFor(admin, org.id);
    const rows = await (await getDb()).select().from(deletionLinks).where(eq(deletionLinks.organizationId, org.id));
    expect(rows).toHaveLength(1);
    expect(rows[0].tokenDigest).not.toContain(token);
    expect(rows[0].tokenDigest).toMatch(/^[0-9a-f]{64}$/);
  });
});
