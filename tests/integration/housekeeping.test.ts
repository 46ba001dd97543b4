import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { deletionLinks, idempotencyRecords } from '@/db/schema';
import { purgeExpired } from '@/server/housekeeping';
import { newTeam } from '../helpers/api';

describe('housekeeping', () => {
  it('purges expired idempotency records and deletion links, and keeps live ones', async () => {
    const { org, admin } = await newTeam();
    await admin.call('PATCH', `/organizations/${org.id}`, { body: { name: 'Kept' }, headers: { 'idempotency-key': 'keep-this-key-1' } });
    await admin.call('PATCH', `/organizations/${org.id}`, { body: { name: 'Gone' }, headers: { 'idempotency-key': 'purge-this-key-1' } });
    await admin.call('POST', `/organizations/${org.id}/deletion-link`);
    const db = await getDb();
    await db
      .update(idempotencyRecords)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(idempotencyRecords.key, 'purge-this-key-1'));
    await db
      .update(deletionLinks)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(deletionLinks.organizationId, org.id));

    const removed = await purgeExpired(db);
    expect(removed.idempotencyRecords).toBeGreaterThanOrEqual(1);
    expect(removed.deletionLinks).toBeGreaterThanOrEqual(1);
    expect(await db.select().from(idempotencyRecords).where(eq(idempotencyRecords.key, 'purge-this-key-1'))).toHaveLength(0);
    expect(await db.select().from(idempotencyRecords).where(eq(idempotencyRecords.key, 'keep-this-key-1'))).toHaveLength(1);
    expect(await db.select().from(deletionLinks).where(eq(deletionLinks.organizationId, org.id))).toHaveLength(0);
  });
});
