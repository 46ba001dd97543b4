import { and, eq } from 'drizzle-orm';
import { memberships, organizations } from '@/db/schema';
import { AppError, notFound } from '../errors';
import { isId } from '../ids';
import type { ServiceContext } from '../context';
import { serviceAccountAccess } from '../service-accounts/credentials';
import { roles, type Role } from './roles';

export { roles, type Role };
const rank: Record<Role, number> = { viewer: 0, editor: 1, admin: 2 };

// The one table of who may do what inside an organization.
export const permissions = {
  'organization.read': 'viewer',
  'organization.rename': 'admin',
  'organization.deletionLink': 'admin',
  'organization.delete': 'admin',
  'members.read': 'viewer',
  'members.manage': 'admin',
  'audit.read': 'admin',
  'prompts.read': 'viewer',
  'prompts.write': 'editor',
  'playground.run': 'editor',
  'ingestionKeys.manage': 'admin',
  'serviceAccounts.manage': 'admin',
  'traces.read': 'viewer',
  'warnings.read': 'viewer',
  'warnings.dismiss': 'editor',
  'billing.read': 'viewer',
  'billing.checkout': 'admin',
  'billing.portal': 'admin',
  // API.md: cancel renewal is not admin-only; a viewer gets 403 forbidden.
  'billing.cancelRenewal': 'editor',
} as const satisfies Record<string, Role>;
export type Permission = keyof typeof permissions;

export type Membership = {
  organizationId: string;
  role: Role;
  organization: typeof organizations.$inferSelect;
};

async function membershipOf(ctx: ServiceContext, organizationId: string): Promise<Omit<Membership, 'organizationId'> | null> {
  // A service account's "membership" is its own row: its one organization and its role, while not revoked.
  if (ctx.actor.serviceAccount) return serviceAccountAccess(ctx.db, ctx.actor.userId, organizationId);
  const [row] = await ctx.db
    .select({ role: memberships.role, organization: organizations })
    .from(memberships)
    .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
    .where(and(eq(memberships.organizationId, organizationId), eq(memberships.userId, ctx.actor.userId)));
  return row ?? null;
}

// Reads membership and role live on every call: a removed member (or revoked service account) is refused at once.
export async function authorize(ctx: ServiceContext, organizationId: string, permission: Permission): Promise<Membership> {
  if (!isId('org', organizationId)) throw notFound('Organization');
  const row = await membershipOf(ctx, organizationId);
  // Another organization's id looks exactly like a missing one.
  if (!row) throw notFound('Organization');
  const needed = permissions[permission];
  if (rank[row.role] < rank[needed]) {
    if (needed === 'admin') throw new AppError('admin_required', 'Only an admin of this organization can do this.', { requiredRole: 'admin', role: row.role });
    throw new AppError('forbidden', `Your role (${row.role}) does not allow this.`, { requiredRole: needed, role: row.role });
  }
  return { organizationId, role: row.role, organization: row.organization };
}
