import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { getDb, rowsOf } from '@/db/client';
import type { TestUser } from './api';

// Traffic splits for retrieval tests (API.md "Safe releases").

export type SplitEntry = { versionId: string; weight: number };

// PUT …/labels/{label} with a split; returns the split's id.
export async function splitLabel(owner: TestUser, base: string, split: SplitEntry[], label = 'production') {
  const moved = await owner.call('PUT', `${base}/labels/${label}`, { body: { split } });
  if (moved.status !== 200) throw new Error(`split failed: ${moved.status} ${JSON.stringify(moved.body)}`);
  if (typeof moved.body.splitId !== 'string') throw new Error(`no splitId: ${JSON.stringify(moved.body)}`);
  return moved.body.splitId as string;
}

// The contract's rule written out independently of the server: the first 32 bits of
// md5(split id + subject), sign bit cleared, mod 100, onto the cumulative weights in the order given.
export function bucketOf(splitId: string, subject: string): number {
  const digest = createHash('md5')
    .update(splitId + subject, 'latin1')
    .digest();
  return (digest.readUInt32BE(0) & 0x7fffffff) % 100;
}

export function chosenBy(split: SplitEntry[], bucket: number): SplitEntry {
  let lo = 0;
  for (const entry of split) {
    if (bucket < lo + entry.weight) return entry;
    lo += entry.weight;
  }
  throw new Error(`bucket ${bucket} outside the split`);
}

export const expectedFor = (splitId: string, split: SplitEntry[], subject: string) =>
  chosenBy(split, bucketOf(splitId, subject));

// retrieval_split_counts of one split, summed per version over its minutes.
export async function splitCounts(splitId: string): Promise<Record<string, number>> {
  const db = await getDb();
  const rows = rowsOf<{ version_id: string; total: string | number }>(
    await db.execute(
      sql`select version_id, sum(count) as total from retrieval_split_counts where split_id = ${splitId} group by version_id`,
    ),
  );
  return Object.fromEntries(rows.map((r) => [r.version_id, Number(r.total)]));
}
