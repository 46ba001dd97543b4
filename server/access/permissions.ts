import { and, eq } from 'drizzle-orm';
import { memberships, organizations } from '@/db/schema';
import { AppError, notFound } from '../errors';
import { isId } from '../ids';
import type { ServiceContext } from '../context';
import { serviceAccountAccess } from '../credentials/service-accounts';
import { can, permissions, type Permission, type Role } from '../auth/schemas';

export type { Permission, Role };

export type Membership = {
  organizationId: string;
  role: Role;
  organization: typeof organizations.$inferSelect;
};

async function membershipOf(
  ctx: ServiceContext,
  organizationId: string,
  lock: boolean,
): Promise<Omit<Membership, 'organizationId'> | null> {
  if (lock) {
    // A write holds the organization (KEY SHARE: its own inserts' foreign keys take the same) and
    // the membership (SHARE) until it commits. Deleting the organization, or removing, demoting or
    // revoking this member, waits for writes already under way (and takes nothing else first, so
    // they cannot deadlock); a write that starts after it waits for it and then sees it.
    await ctx.db
      .select({ id: organizations.id })
      .from(organizations)
      .where(eq(organizations.id, organizationId))
      .for('key share');
  }
  // A service account's "membership" is its own row: its one organization and its role, while not revoked.
  if (ctx.actor.serviceAccount) return serviceAccountAccess(ctx.db, ctx.actor.userId, organizationId, lock);
  const query = ctx.db
    .select({ role: memberships.role, organization: organizations })
    .from(memberships)
    .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
    .where(and(eq(memberships.organizationId, organizationId), eq(memberships.userId, ctx.actor.userId)));
  const [row] = lock ? await query.for('share', { of: memberships }) : await query;
  return row ?? null;
}

// Reads membership and role live on every call: a removed member (or revoked service account) is refused at once.
// A write passes `lock` (authorizeOrganizationWrite does): see membershipOf.
export async function authorize(
  ctx: ServiceContext,
  organizationId: string,
  permission: Permission,
  options: { lock?: boolean } = {},
): Promise<Membership> {
  if (!isId('org', organizationId)) throw notFound('Organization');
  const row = await membershipOf(ctx, organizationId, options.lock ?? false);
  // Another organization's id looks exactly like a missing one.
  if (!row) throw notFound('Organization');
  if (!can(row.role, permission)) throw roleRefusal(row.role, permissions[permission]);
  return { organizationId, role: row.role, organization: row.organization };
}

/** The 403 for a role below the one needed: `admin_required` for admin-only work, else `forbidden`. */
export function roleRefusal(role: Role, needed: Role): AppError {
  if (needed === 'admin')
    return new AppError('admin_required', 'Only an admin of this organization can do this.', {
      requiredRole: 'admin',
      role,
    });
  return new AppError('forbidden', `Your role (${role}) does not allow this.`, { requiredRole: needed, role });
}
