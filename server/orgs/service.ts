import { createHash, randomBytes } from 'node:crypto';
import { and, asc, eq, gt, sql } from 'drizzle-orm';
import { deletionLinks, memberships, organizations, users } from '@/db/schema';
import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { AppError } from '../errors';
import { newId } from '../ids';
import { toPage, type Page } from '../paging';
import { idCursor } from '../id-cursor';
import { authorize, type Role } from '../access/permissions';
import { recordAudit } from '../audit/service';
import { serviceAccountAccess } from '../credentials/service-accounts';
import { config } from '../config';
import { currentSubscription, renews } from '../billing/state';
import { changesRetrieval } from '../standby';
import type { DashboardLink, Organization } from './schemas';

type OrganizationRow = typeof organizations.$inferSelect;

function toOrganization(row: OrganizationRow, role: Role): Organization {
  return {
    id: row.id,
    name: row.name,
    role,
    plan: row.plan,
    readOnly: row.readOnly,
    createdAt: row.createdAt.toISOString(),
  };
}

export async function createOrganization(
  ctx: ServiceContext,
  { name }: OperationInput<'create_organization'>,
): Promise<Organization> {
  if (ctx.actor.serviceAccount)
    throw new AppError(
      'forbidden',
      'A service account acts only in its own organization; it cannot create organizations.',
      { actor: 'service_account' },
    );
  const { db } = ctx;
  const [row] = await db
    .insert(organizations)
    .values({ id: newId('org'), name, createdBy: ctx.actor.userId })
    .returning();
  await db.insert(memberships).values({ organizationId: row.id, userId: ctx.actor.userId, role: 'admin' });
  // Onboarding: a user's first organization becomes the suggested default.
  await db
    .update(users)
    .set({ defaultOrganizationId: row.id })
    .where(and(eq(users.id, ctx.actor.userId), sql`${users.defaultOrganizationId} is null`));
  await recordAudit(ctx, {
    organizationId: row.id,
    operation: 'organization.create',
    targetType: 'organization',
    targetId: row.id,
    details: { name: row.name },
  });
  return toOrganization(row, 'admin');
}

export async function listOrganizations(
  ctx: ServiceContext,
  page: OperationInput<'list_organizations'>,
): Promise<Page<Organization>> {
  if (ctx.actor.serviceAccount) {
    // Its one organization (a cursor past it: none).
    const after = page.cursor ? idCursor(page.cursor, 'org') : null;
    const access = await serviceAccountAccess(ctx.db, ctx.actor.userId);
    return {
      items:
        access && (after === null || access.organization.id > after)
          ? [toOrganization(access.organization, access.role)]
          : [],
      nextCursor: null,
    };
  }
  const conditions = [eq(memberships.userId, ctx.actor.userId)];
  if (page.cursor) conditions.push(gt(organizations.id, idCursor(page.cursor, 'org')));
  const rows = await ctx.db
    .select({ org: organizations, role: memberships.role })
    .from(memberships)
    .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
    .where(and(...conditions))
    .orderBy(asc(organizations.id))
    .limit(page.limit + 1);
  return toPage(
    rows,
    page.limit,
    (r) => [r.org.id],
    (r) => toOrganization(r.org, r.role),
  );
}

export async function getOrganization(
  ctx: ServiceContext,
  { organizationId }: OperationInput<'get_organization'>,
): Promise<Organization> {
  const membership = await authorize(ctx, organizationId, 'organization.read');
  return toOrganization(membership.organization, membership.role);
}

export async function renameOrganization(
  ctx: ServiceContext,
  { organizationId, name }: OperationInput<'rename_organization'>,
): Promise<Organization> {
  const { db } = ctx;
  const membership = await authorize(ctx, organizationId, 'organization.rename');
  const [row] = await db.update(organizations).set({ name }).where(eq(organizations.id, organizationId)).returning();
  await recordAudit(ctx, {
    organizationId,
    operation: 'organization.rename',
    targetType: 'organization',
    targetId: organizationId,
    details: { from: membership.organization.name, to: name },
  });
  return toOrganization(row, membership.role);
}

const deletionLinkTtlMs = 60 * 60 * 1000;
const digest = (token: string) => createHash('sha256').update(token).digest('hex');

export async function createDeletionLink(
  ctx: ServiceContext,
  { organizationId }: OperationInput<'get_organization_deletion_link'>,
): Promise<DashboardLink> {
  const { db } = ctx;
  await authorize(ctx, organizationId, 'organization.deletionLink');
  const token = randomBytes(24).toString('base64url');
  const expiresAt = new Date(Date.now() + deletionLinkTtlMs);
  await db
    .insert(deletionLinks)
    .values({ tokenDigest: digest(token), organizationId, createdBy: ctx.actor.userId, expiresAt });
  await recordAudit(ctx, {
    organizationId,
    operation: 'organization.deletionLink',
    targetType: 'organization',
    targetId: organizationId,
  });
  return {
    url: `${config().appUrl}/organizations/${organizationId}/delete?token=${token}`,
    expiresAt: expiresAt.toISOString(),
  };
}

// What the dashboard's deletion page shows before the admin confirms.
export async function checkDeletionLink(
  ctx: ServiceContext,
  organizationId: string,
  token: string,
): Promise<{ organizationId: string; name: string; expiresAt: string }> {
  const membership = await authorize(ctx, organizationId, 'organization.delete');
  const [link] = await ctx.db
    .select()
    .from(deletionLinks)
    .where(and(eq(deletionLinks.tokenDigest, digest(token)), eq(deletionLinks.organizationId, organizationId)));
  if (!link || link.expiresAt.getTime() < Date.now()) {
    throw new AppError(
      'invalid_state',
      'This deletion link has expired or is not valid. Ask for a new one from the organization settings.',
      { state: 'link_expired' },
    );
  }
  return { organizationId, name: membership.organization.name, expiresAt: link.expiresAt.toISOString() };
}

export async function deleteOrganization(
  ctx: ServiceContext,
  organizationId: string,
  input: { token: string; confirmName: string },
): Promise<void> {
  const { db } = ctx;
  // The organization row first: writes under way hold it (KEY SHARE, server/access/permissions.ts),
  // so the deletion waits for them before it takes anything else, and a write that starts now waits
  // for the deletion and then finds no organization (404). The cascade meets no write halfway.
  // Only an admin gets to wait for the lock; the check runs again under it.
  await authorize(ctx, organizationId, 'organization.delete');
  await db
    .select({ id: organizations.id })
    .from(organizations)
    .where(eq(organizations.id, organizationId))
    .for('update');
  const link = await checkDeletionLink(ctx, organizationId, input.token);
  if (input.confirmName !== link.name) {
    throw new AppError('confirmation_mismatch', 'Type the organization name exactly as shown to confirm.', {
      field: 'confirmName',
    });
  }
  // Deleting the organization would leave Stripe charging for it: renewal is cancelled first.
  const subscription = await currentSubscription(db, organizationId);
  if (subscription && renews(subscription)) {
    throw new AppError(
      'invalid_state',
      'This organization has a Pro subscription that renews. Cancel its renewal in Billing first; the organization can be deleted right after.',
      {
        state: 'subscription_renews',
        subscriptionId: subscription.id,
      },
    );
  }
  // Its retrieval keys go with it (cascade).
  changesRetrieval(ctx);
  await recordAudit(ctx, {
    organizationId,
    operation: 'organization.delete',
    targetType: 'organization',
    targetId: organizationId,
    details: { name: link.name },
  });
  await db.delete(organizations).where(eq(organizations.id, organizationId));
}
