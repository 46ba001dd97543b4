import { lt } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { deletionLinks, idempotencyRecords } from '@/db/schema';

// Removes records whose retention has passed: idempotency records (kept 24 hours) and deletion links.
export async function purgeExpired(db: Db, now = new Date()): Promise<{ idempotencyRecords: number; deletionLinks: number }> {
  const records = await db.delete(idempotencyRecords).where(lt(idempotencyRecords.expiresAt, now)).returning({ key: idempotencyRecords.key });
  const links = await db.delete(deletionLinks).where(lt(deletionLinks.expiresAt, now)).returning({ digest: deletionLinks.tokenDigest });
  return { idempotencyRecords: records.length, deletionLinks: links.length };
}
