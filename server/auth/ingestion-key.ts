import { createHash } from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { ingestionKeys, organizations } from '@/db/schema';
import { AppError } from '../errors';
import { config } from '../config';

export type IngestionKeyActor = { keyId: string; organizationId: string; readOnly: boolean };

const bearerPattern = /^Bearer\s+(plt_[0-9A-Za-z]{43})$/i;

// Found keys are remembered for a few seconds (INGEST_KEY_CACHE_MS) to spare a query per batch.
// A cached key never stores anything on its own: ingest_spans checks revocation and read-only
// again in the statement that writes, so a revoked key is refused at once (401).
const cache = new Map<string, { actor: IngestionKeyActor; expires: number }>();

function unauthorized(presented: boolean): AppError {
  return new AppError(
    'unauthorized',
    presented ? 'The ingestion key is invalid or revoked.' : 'Send an ingestion key: Authorization: Bearer plt_…',
    {},
    { 'www-authenticate': presented ? 'Bearer error="invalid_token"' : 'Bearer' },
  );
}

// What is stored for a key and what a presented key is looked up by.
export function ingestionSecretDigest(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function forgetIngestionKey(keyId: string): void {
  for (const [digest, entry] of cache) if (entry.actor.keyId === keyId) cache.delete(digest);
}

// Only `Authorization: Bearer plt_…`: retrieval keys (plr_) and OAuth tokens never match.
export async function authenticateIngestionKey(
  db: Db,
  authorization: string | undefined,
  now = Date.now(),
): Promise<IngestionKeyActor> {
  const match = authorization ? bearerPattern.exec(authorization) : null;
  if (!match) throw unauthorized(Boolean(authorization));
  const digest = ingestionSecretDigest(match[1]);
  const cached = cache.get(digest);
  if (cached && cached.expires > now) return cached.actor;
  const [row] = await db
    .select({ keyId: ingestionKeys.id, organizationId: ingestionKeys.organizationId, readOnly: organizations.readOnly })
    .from(ingestionKeys)
    .innerJoin(organizations, eq(organizations.id, ingestionKeys.organizationId))
    .where(and(eq(ingestionKeys.secretDigest, digest), isNull(ingestionKeys.revokedAt)))
    .limit(1);
  if (!row) {
    cache.delete(digest);
    throw unauthorized(true);
  }
  // A read-only answer is always read fresh, so lifting the restriction takes effect at once.
  if (!row.readOnly) {
    if (cache.size >= 10_000) cache.clear();
    cache.set(digest, { actor: row, expires: now + config().ingestKeyCacheMs });
  }
  return row;
}
