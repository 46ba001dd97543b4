import { createHash } from 'node:crypto';
import { and, eq, isNull, lt, or, sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { organizations, serviceAccounts } from '@/db/schema';
import { isId } from '../ids';
import type { Role } from '../auth/schemas';

// How a service account proves itself (the client_credentials grant) and stays live (every access
// token is checked against its row on every request, so a revocation counts on the very next call).

export const clientSecretPrefix = 'pls_';
const clientSecretPattern = /^pls_[0-9A-Za-z]{43}$/;

// What is stored for a secret (sha256 hex) and what a presented secret is looked up by.
export function clientSecretDigest(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export type LiveServiceAccount = { id: string; clientId: string; organizationId: string };

const live = {
  id: serviceAccounts.id,
  clientId: serviceAccounts.clientId,
  organizationId: serviceAccounts.organizationId,
  lastUsedAt: serviceAccounts.lastUsedAt,
};

// `lastUsedAt` is kept current within a minute: written only when it is older than this, so a busy
// account costs one write per interval, not one per request (and the condition holds across processes).
const touchAfterMs = 30_000;

async function touch(db: Db, row: { id: string; lastUsedAt: Date | null }): Promise<void> {
  if (row.lastUsedAt && row.lastUsedAt.getTime() > Date.now() - touchAfterMs) return;
  const t = serviceAccounts;
  await db
    .update(t)
    .set({ lastUsedAt: sql`now()` })
    .where(
      and(
        eq(t.id, row.id),
        or(isNull(t.lastUsedAt), lt(t.lastUsedAt, sql`now() - make_interval(secs => ${touchAfterMs / 1000})`)),
      ),
    );
}

function strip(row: LiveServiceAccount & { lastUsedAt: Date | null }): LiveServiceAccount {
  return { id: row.id, clientId: row.clientId, organizationId: row.organizationId };
}

/**
 * The unrevoked account these client credentials belong to, or null. Looked up by the secret's
 * digest (never compared character by character), then the client id must be the account's own.
 */
export async function authenticateClientSecret(
  db: Db,
  clientId: string,
  secret: string,
): Promise<LiveServiceAccount | null> {
  if (!isId('sa', clientId) || !clientSecretPattern.test(secret)) return null;
  const [row] = await db
    .select(live)
    .from(serviceAccounts)
    .where(and(eq(serviceAccounts.secretDigest, clientSecretDigest(secret)), isNull(serviceAccounts.revokedAt)));
  if (!row || row.clientId !== clientId) return null;
  await touch(db, row);
  return strip(row);
}

/** The check every service-account access token gets after its signature: one primary-key read. */
export async function liveServiceAccount(db: Db, id: string, clientId: string): Promise<LiveServiceAccount | null> {
  if (!isId('sac', id)) return null;
  const [row] = await db
    .select(live)
    .from(serviceAccounts)
    .where(and(eq(serviceAccounts.id, id), isNull(serviceAccounts.revokedAt)));
  if (!row || row.clientId !== clientId) return null;
  await touch(db, row);
  return strip(row);
}

export type ServiceAccountAccess = { role: Role; organization: typeof organizations.$inferSelect };

/**
 * What a service account may reach: its one organization with its role, read live (revoked → none).
 * With `organizationId`, only that organization (another one looks exactly like a missing one).
 */
export async function serviceAccountAccess(
  db: Db,
  id: string,
  organizationId?: string,
  // A write holds the row until it commits, so a revocation waits for it (server/access/permissions.ts).
  lock = false,
): Promise<ServiceAccountAccess | null> {
  const conditions = [eq(serviceAccounts.id, id), isNull(serviceAccounts.revokedAt)];
  if (organizationId !== undefined) conditions.push(eq(serviceAccounts.organizationId, organizationId));
  const query = db
    .select({ role: serviceAccounts.role, organization: organizations })
    .from(serviceAccounts)
    .innerJoin(organizations, eq(organizations.id, serviceAccounts.organizationId))
    .where(and(...conditions));
  const [row] = lock ? await query.for('share', { of: serviceAccounts }) : await query;
  return row ?? null;
}
