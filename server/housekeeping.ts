import { lt } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { deletionLinks, emailTokens, idempotencyRecords, rateLimits } from '@/db/schema';
import { limits } from './auth/attempts';

// Rate-limit windows older than the longest one have nothing left to count.
const longestWindowMs = Math.max(...Object.values(limits).map((l) => l.windowMs));

export type Purged = { idempotencyRecords: number; deletionLinks: number; emailTokens: number; rateLimits: number };

// Removes records whose retention has passed: idempotency records (kept 24 hours), deletion links,
// emailed links (verification, password reset) and stale rate-limit windows.
export async function purgeExpired(db: Db, now = new Date()): Promise<Purged> {
  const records = await db.delete(idempotencyRecords).where(lt(idempotencyRecords.expiresAt, now)).returning({ key: idempotencyRecords.key });
  const links = await db.delete(deletionLinks).where(lt(deletionLinks.expiresAt, now)).returning({ digest: deletionLinks.tokenDigest });
  const tokens = await db.delete(emailTokens).where(lt(emailTokens.expiresAt, now)).returning({ digest: emailTokens.tokenDigest });
  const windows = await db
    .delete(rateLimits)
    .where(lt(rateLimits.windowStartedAt, new Date(now.getTime() - longestWindowMs)))
    .returning({ key: rateLimits.key });
  return { idempotencyRecords: records.length, deletionLinks: links.length, emailTokens: tokens.length, rateLimits: windows.length };
}
