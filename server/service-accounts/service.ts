import { and, desc, eq, isNull, lt } from 'drizzle-orm';
import { serviceAccounts } from '@/db/schema';
import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { AppError, notFound } from '../errors';
import { isId, newId, newSecret } from '../ids';
import { toPage, type Page } from '../paging';
import { idCursor } from '../id-cursor';
import { authorize } from '../access/permissions';
import { assertWritableOrganization } from '../access/organization';
import { recordAudit } from '../audit/service';
import { isBuiltInIssuer } from '../oauth/issuer';
import { clientSecretDigest, clientSecretPrefix } from '../credentials/service-accounts';
import type { Profile } from '../orgs/schemas';
import type { CreatedServiceAccount, ServiceAccount } from './schemas';

type ServiceAccountRow = typeof serviceAccounts.$inferSelect;

function toServiceAccount(row: ServiceAccountRow): ServiceAccount {
  return {
    id: row.id,
    clientId: row.clientId,
    name: row.name,
    role: row.role,
    createdAt: row.createdAt.toISOString(),
    createdBy: row.createdBy,
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
    revokedAt: row.revokedAt?.toISOString() ?? null,
  };
}

// Admins only. Tokens come from the built-in authorization server, so with an external issuer
// (OAUTH_ISSUER) no account is created: 409 invalid_state, state `external_issuer`.
export async function createServiceAccount(
  ctx: ServiceContext,
  { organizationId, name, role }: OperationInput<'create_service_account'>,
): Promise<CreatedServiceAccount> {
  const membership = await authorize(ctx, organizationId, 'serviceAccounts.manage');
  // Only a person creates service accounts (`createdBy` is a user's id): an admin service account
  // minting others would leave credentials behind that revoking it does not reach.
  if (ctx.actor.serviceAccount)
    throw new AppError(
      'forbidden',
      'A service account cannot create service accounts; an admin of the organization creates them.',
      { actor: 'service_account' },
    );
  if (!isBuiltInIssuer()) {
    throw new AppError(
      'invalid_state',
      'Service accounts need the built-in authorization server; this deployment accepts tokens from an external issuer (OAUTH_ISSUER).',
      {
        state: 'external_issuer',
      },
    );
  }
  assertWritableOrganization(membership, 'credentials');
  const clientSecret = newSecret(clientSecretPrefix);
  const [row] = await ctx.db
    .insert(serviceAccounts)
    .values({
      organizationId,
      id: newId('sac'),
      clientId: newId('sa'),
      name,
      role,
      secretDigest: clientSecretDigest(clientSecret),
      createdBy: ctx.actor.userId,
    })
    .returning();
  await recordAudit(ctx, {
    organizationId,
    operation: 'serviceAccount.create',
    targetType: 'service_account',
    targetId: row.id,
    details: { name: row.name, role: row.role, clientId: row.clientId },
  });
  return { serviceAccount: toServiceAccount(row), clientSecret };
}

// Newest first; revoked accounts stay listed. Never a secret or digest.
export async function listServiceAccounts(
  ctx: ServiceContext,
  { organizationId, ...page }: OperationInput<'list_service_accounts'>,
): Promise<Page<ServiceAccount>> {
  await authorize(ctx, organizationId, 'serviceAccounts.manage');
  const conditions = [eq(serviceAccounts.organizationId, organizationId)];
  // Ids sort by creation time, so the id alone is the keyset for "newest first".
  if (page.cursor) conditions.push(lt(serviceAccounts.id, idCursor(page.cursor, 'sac')));
  const rows = await ctx.db
    .select()
    .from(serviceAccounts)
    .where(and(...conditions))
    .orderBy(desc(serviceAccounts.id))
    .limit(page.limit + 1);
  return toPage(rows, page.limit, (r) => [r.id], toServiceAccount);
}

async function findServiceAccount(ctx: ServiceContext, organizationId: string, id: string): Promise<ServiceAccountRow> {
  if (!isId('sac', id)) throw notFound('Service account');
  const [row] = await ctx.db
    .select()
    .from(serviceAccounts)
    .where(and(eq(serviceAccounts.organizationId, organizationId), eq(serviceAccounts.id, id)));
  if (!row) throw notFound('Service account');
  return row;
}

export async function getServiceAccount(
  ctx: ServiceContext,
  { organizationId, serviceAccountId }: OperationInput<'get_service_account'>,
): Promise<ServiceAccount> {
  await authorize(ctx, organizationId, 'serviceAccounts.manage');
  return toServiceAccount(await findServiceAccount(ctx, organizationId, serviceAccountId));
}

// Its tokens are refused from the next request (every request re-reads the row). Revoking a revoked
// account returns it unchanged (same revokedAt) and records nothing new. Allowed on read-only
// organizations: it is a safety action.
export async function revokeServiceAccount(
  ctx: ServiceContext,
  { organizationId, serviceAccountId: id }: OperationInput<'revoke_service_account'>,
): Promise<ServiceAccount> {
  await authorize(ctx, organizationId, 'serviceAccounts.manage');
  if (!isId('sac', id)) throw notFound('Service account');
  const [revoked] = await ctx.db
    .update(serviceAccounts)
    .set({ revokedAt: new Date() })
    .where(
      and(
        eq(serviceAccounts.organizationId, organizationId),
        eq(serviceAccounts.id, id),
        isNull(serviceAccounts.revokedAt),
      ),
    )
    .returning();
  if (!revoked) return toServiceAccount(await findServiceAccount(ctx, organizationId, id));
  await recordAudit(ctx, {
    organizationId,
    operation: 'serviceAccount.revoke',
    targetType: 'service_account',
    targetId: id,
    details: { name: revoked.name, clientId: revoked.clientId },
  });
  return toServiceAccount(revoked);
}

// GET /me of a service account: no email, and its one organization as the default (nothing to choose).
export async function serviceAccountProfile(ctx: ServiceContext): Promise<Profile> {
  const [row] = await ctx.db
    .select()
    .from(serviceAccounts)
    .where(and(eq(serviceAccounts.id, ctx.actor.userId), isNull(serviceAccounts.revokedAt)));
  if (!row) throw new AppError('unauthorized', 'This service account has been revoked.');
  return {
    id: row.id,
    email: null,
    name: row.name,
    defaultOrganizationId: row.organizationId,
    kind: 'service_account',
  };
}

// How many service accounts the dashboard names by their name (the newest first); older ones show ids.
const namedAccounts = 200;

/**
 * Any member: the names of the organization's service accounts (revoked ones too), keyed by their
 * `sac_` id and their `sa_` client id, so label history, versions and the audit log can say who
 * acted instead of showing an id.
 */
export async function serviceAccountNames(
  ctx: ServiceContext,
  organizationId: string,
): Promise<{ id: string; clientId: string; name: string }[]> {
  await authorize(ctx, organizationId, 'members.read');
  return ctx.db
    .select({ id: serviceAccounts.id, clientId: serviceAccounts.clientId, name: serviceAccounts.name })
    .from(serviceAccounts)
    .where(eq(serviceAccounts.organizationId, organizationId))
    .orderBy(desc(serviceAccounts.createdAt))
    .limit(namedAccounts);
}
