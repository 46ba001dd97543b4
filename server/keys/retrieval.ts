import { and, desc, eq, isNull, lt } from 'drizzle-orm';
import { retrievalKeys } from '@/db/schema';
import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { notFound } from '../errors';
import { isId, newId, newSecret } from '../ids';
import { toPage, type Page } from '../paging';
import { idCursor } from '../id-cursor';
import { authorize } from '../access/permissions';
import { recordAudit } from '../audit/service';
import { retrievalSecretDigest } from '../auth/retrieval-key';
import { authorizePromptRead, authorizePromptWrite, loadPrompt } from '../access/organization';
import { addsRetrievalKey, changesRetrieval } from '../standby';
import type { CreatedRetrievalKey, RetrievalKey } from './schemas';
import { flushBeforeRead } from '../retrieval/activity';

type RetrievalKeyRow = typeof retrievalKeys.$inferSelect;

const prefixLength = 12;

function toRetrievalKey(row: RetrievalKeyRow): RetrievalKey {
  return {
    id: row.id,
    promptId: row.promptId,
    name: row.name,
    prefix: row.prefix,
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
    revokedAt: row.revokedAt?.toISOString() ?? null,
  };
}

// Editors and admins; the organization must be writable and the prompt not archived (409 invalid_state).
// The prompt row is locked so a concurrent archive cannot slip between the check and the insert.
export async function createRetrievalKey(
  ctx: ServiceContext,
  { organizationId, promptId, name }: OperationInput<'create_retrieval_key'>,
): Promise<CreatedRetrievalKey> {
  await authorizePromptWrite(ctx, organizationId, promptId, { lock: true });
  // The new key works on the very next retrieval (its answer is never a 503: server/standby.ts).
  addsRetrievalKey(ctx);
  const secret = newSecret('plr_');
  const [row] = await ctx.db
    .insert(retrievalKeys)
    .values({
      id: newId('key'),
      organizationId,
      promptId,
      name,
      prefix: secret.slice(0, prefixLength),
      secretDigest: retrievalSecretDigest(secret),
      createdBy: ctx.actor.userId,
      createdByClient: ctx.actor.clientId,
    })
    .returning();
  await recordAudit(ctx, {
    organizationId,
    operation: 'retrievalKey.create',
    targetType: 'retrieval_key',
    targetId: row.id,
    details: { promptId, name: row.name, prefix: row.prefix },
  });
  return { key: toRetrievalKey(row), secret };
}

// Any member (viewers included) may list; never a secret or digest.
export async function listRetrievalKeys(
  ctx: ServiceContext,
  { organizationId, promptId, ...page }: OperationInput<'list_retrieval_keys'>,
): Promise<Page<RetrievalKey>> {
  await authorizePromptRead(ctx, organizationId, promptId);
  await flushBeforeRead('retrieval-keys'); // lastUsedAt of this process's requests
  const conditions = [eq(retrievalKeys.organizationId, organizationId), eq(retrievalKeys.promptId, promptId)];
  // Ids sort by creation time, so the id alone is the keyset for "newest first".
  if (page.cursor) conditions.push(lt(retrievalKeys.id, idCursor(page.cursor, 'key')));
  const rows = await ctx.db
    .select()
    .from(retrievalKeys)
    .where(and(...conditions))
    .orderBy(desc(retrievalKeys.id))
    .limit(page.limit + 1);
  return toPage(rows, page.limit, (r) => [r.id], toRetrievalKey);
}

// One key as it is now (any member): what a replayed create shows in 409 secret_unavailable.
export async function getRetrievalKey(
  ctx: ServiceContext,
  { organizationId, promptId, keyId }: { organizationId: string; promptId: string; keyId: string },
): Promise<RetrievalKey> {
  await authorizePromptRead(ctx, organizationId, promptId);
  if (!isId('key', keyId)) throw notFound('Retrieval key');
  await flushBeforeRead('retrieval-keys');
  return findKey(ctx, organizationId, promptId, keyId);
}

async function findKey(ctx: ServiceContext, organizationId: string, promptId: string, keyId: string) {
  const [row] = await ctx.db
    .select()
    .from(retrievalKeys)
    .where(keyCondition(organizationId, promptId, keyId));
  if (!row) throw notFound('Retrieval key');
  return toRetrievalKey(row);
}

function keyCondition(organizationId: string, promptId: string, keyId: string) {
  return and(
    eq(retrievalKeys.organizationId, organizationId),
    eq(retrievalKeys.promptId, promptId),
    eq(retrievalKeys.id, keyId),
  );
}

// Revoking is a safety action: allowed on archived prompts and read-only organizations, for editors
// and admins. Revoking a revoked key returns it unchanged (same revokedAt) and records nothing new.
// Retrieval has no key cache, so the very next request with it is refused (401).
export async function revokeRetrievalKey(
  ctx: ServiceContext,
  { organizationId, promptId, keyId }: OperationInput<'revoke_retrieval_key'>,
): Promise<RetrievalKey> {
  await authorize(ctx, organizationId, 'prompts.write');
  await loadPrompt(ctx, organizationId, promptId);
  if (!isId('key', keyId)) throw notFound('Retrieval key');
  // Also when already revoked: a retry after a 503 answers only once the standby has the revocation.
  changesRetrieval(ctx);
  const [revoked] = await ctx.db
    .update(retrievalKeys)
    .set({ revokedAt: new Date() })
    .where(and(keyCondition(organizationId, promptId, keyId), isNull(retrievalKeys.revokedAt)))
    .returning();
  if (!revoked) return findKey(ctx, organizationId, promptId, keyId);
  await recordAudit(ctx, {
    organizationId,
    operation: 'retrievalKey.revoke',
    targetType: 'retrieval_key',
    targetId: keyId,
    details: { promptId, name: revoked.name, prefix: revoked.prefix },
  });
  return toRetrievalKey(revoked);
}
