import { and, desc, eq, isNull, lt } from 'drizzle-orm';
import { ingestionKeys } from '@/db/schema';
import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { notFound } from '../errors';
import { isId, newId, newSecret } from '../ids';
import { toPage, type Page } from '../paging';
import { idCursor } from '../id-cursor';
import { authorize } from '../access/permissions';
import { authorizeOrganizationWrite } from '../access/organization';
import { recordAudit } from '../audit/service';
import { forgetIngestionKey, ingestionSecretDigest } from '../auth/ingestion-key';
import type { CreatedIngestionKey, IngestionKey } from './schemas';

type IngestionKeyRow = typeof ingestionKeys.$inferSelect;

const prefixLength = 12;

function toIngestionKey(row: IngestionKeyRow): IngestionKey {
  return {
    id: row.id,
    name: row.name,
    application: row.application,
    environment: row.environment,
    prefix: row.prefix,
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
    revokedAt: row.revokedAt?.toISOString() ?? null,
  };
}

export async function createIngestionKey(
  ctx: ServiceContext,
  { organizationId, name, application, environment }: OperationInput<'create_ingestion_key'>,
): Promise<CreatedIngestionKey> {
  const { db } = ctx;
  await authorizeOrganizationWrite(ctx, organizationId, 'ingestionKeys.manage', 'credentials');
  const secret = newSecret('plt_');
  const [row] = await db
    .insert(ingestionKeys)
    .values({
      id: newId('ikey'),
      organizationId,
      name: name,
      application: application,
      environment: environment,
      prefix: secret.slice(0, prefixLength),
      secretDigest: ingestionSecretDigest(secret),
      createdBy: ctx.actor.userId,
    })
    .returning();
  await recordAudit(ctx, {
    organizationId,
    operation: 'ingestionKey.create',
    targetType: 'ingestion_key',
    targetId: row.id,
    details: { name: row.name, application: row.application, environment: row.environment, prefix: row.prefix },
  });
  return { key: toIngestionKey(row), secret };
}

export async function listIngestionKeys(
  ctx: ServiceContext,
  { organizationId, ...page }: OperationInput<'list_ingestion_keys'>,
): Promise<Page<IngestionKey>> {
  await authorize(ctx, organizationId, 'ingestionKeys.read');
  const conditions = [eq(ingestionKeys.organizationId, organizationId)];
  // Ids sort by creation time, so the id alone is the keyset for "newest first".
  if (page.cursor) conditions.push(lt(ingestionKeys.id, idCursor(page.cursor, 'ikey')));
  const rows = await ctx.db
    .select()
    .from(ingestionKeys)
    .where(and(...conditions))
    .orderBy(desc(ingestionKeys.id))
    .limit(page.limit + 1);
  return toPage(rows, page.limit, (r) => [r.id], toIngestionKey);
}

async function findKey(ctx: ServiceContext, organizationId: string, keyId: string): Promise<IngestionKeyRow> {
  if (!isId('ikey', keyId)) throw notFound('Ingestion key');
  const [row] = await ctx.db
    .select()
    .from(ingestionKeys)
    .where(and(eq(ingestionKeys.organizationId, organizationId), eq(ingestionKeys.id, keyId)));
  if (!row) throw notFound('Ingestion key');
  return row;
}

// One key as it is now (any member): what a replayed create shows in 409 secret_unavailable.
export async function getIngestionKey(
  ctx: ServiceContext,
  { organizationId, keyId }: { organizationId: string; keyId: string },
): Promise<IngestionKey> {
  await authorize(ctx, organizationId, 'ingestionKeys.read');
  return toIngestionKey(await findKey(ctx, organizationId, keyId));
}

// Revoking a revoked key returns it unchanged (same revokedAt) and records nothing new.
export async function revokeIngestionKey(
  ctx: ServiceContext,
  { organizationId, keyId }: OperationInput<'revoke_ingestion_key'>,
): Promise<IngestionKey> {
  await authorize(ctx, organizationId, 'ingestionKeys.manage');
  if (!isId('ikey', keyId)) throw notFound('Ingestion key');
  const [revoked] = await ctx.db
    .update(ingestionKeys)
    .set({ revokedAt: new Date() })
    .where(
      and(
        eq(ingestionKeys.organizationId, organizationId),
        eq(ingestionKeys.id, keyId),
        isNull(ingestionKeys.revokedAt),
      ),
    )
    .returning();
  // This process stops accepting it at once; ingestion re-checks revocation when it writes anyway.
  forgetIngestionKey(keyId);
  if (!revoked) return toIngestionKey(await findKey(ctx, organizationId, keyId));
  await recordAudit(ctx, {
    organizationId,
    operation: 'ingestionKey.revoke',
    targetType: 'ingestion_key',
    targetId: keyId,
    details: { name: revoked.name, prefix: revoked.prefix },
  });
  return toIngestionKey(revoked);
}
