import { eq, inArray } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import {
  billingEvents,
  deletionLinks,
  idempotencyRecords,
  oauthCodes,
  oauthGrants,
  oauthRefreshTokens,
} from '@/db/schema';
import { purgeExpired } from '@/server/housekeeping';
import { newTeam } from '../helpers/api';

describe('housekeeping', () => {
  it('purges expired idempotency records and deletion links, and keeps live ones', async () => {
    const { org, admin } = await newTeam();
    await admin.call('PATCH', `/organizations/${org.id}`, {
      body: { name: 'Kept' },
      headers: { 'idempotency-key': 'keep-this-key-1' },
    });
    await admin.call('PATCH', `/organizations/${org.id}`, {
      body: { name: 'Gone' },
      headers: { 'idempotency-key': 'purge-this-key-1' },
    });
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
    expect(
      await db.select().from(idempotencyRecords).where(eq(idempotencyRecords.key, 'purge-this-key-1')),
    ).toHaveLength(0);
    expect(
      await db.select().from(idempotencyRecords).where(eq(idempotencyRecords.key, 'keep-this-key-1')),
    ).toHaveLength(1);
    expect(await db.select().from(deletionLinks).where(eq(deletionLinks.organizationId, org.id))).toHaveLength(0);
  });

  it('purges OAuth codes and refresh tokens a day past their expiry, and keeps recent ones', async () => {
    const { admin } = await newTeam();
    const db = await getDb();
    const hoursAgo = (h: number) => new Date(Date.now() - h * 3600_000);
    const code = (digest: string, expiresAt: Date) => ({
      codeDigest: digest,
      userId: admin.id,
      clientId: 'promptloop-cli',
      redirectUri: 'http://127.0.0.1:1/callback',
      scope: 'management',
      codeChallenge: 'x'.repeat(43),
      expiresAt,
    });
    const tag = `${admin.id}-${Date.now()}`;
    await db.insert(oauthCodes).values([code(`old-${tag}`, hoursAgo(25)), code(`recent-${tag}`, hoursAgo(2))]);
    await db
      .insert(oauthGrants)
      .values({ id: `grant-${tag}`, userId: admin.id, clientId: 'promptloop-cli', scope: 'management' });
    await db.insert(oauthRefreshTokens).values([
      { tokenDigest: `old-${tag}`, grantId: `grant-${tag}`, expiresAt: hoursAgo(30), usedAt: hoursAgo(40) },
      { tokenDigest: `recent-${tag}`, grantId: `grant-${tag}`, expiresAt: hoursAgo(1) },
    ]);

    const removed = await purgeExpired(db);
    expect(removed.oauthCodes).toBeGreaterThanOrEqual(1);
    expect(removed.oauthRefreshTokens).toBeGreaterThanOrEqual(1);
    expect(
      (await db.select().from(oauthCodes).where(eq(oauthCodes.userId, admin.id))).map((r) => r.codeDigest),
    ).toEqual([`recent-${tag}`]);
    expect(
      (
        await db
          .select()
          .from(oauthRefreshTokens)
          .where(eq(oauthRefreshTokens.grantId, `grant-${tag}`))
      ).map((r) => r.tokenDigest),
    ).toEqual([`recent-${tag}`]);
  });

  it('forgets Stripe event ids after 90 days, and keeps recent ones', async () => {
    const db = await getDb();
    const tag = `${Date.now()}`;
    const day = 24 * 3600_000;
    await db.insert(billingEvents).values([
      {
        id: `evt_old_${tag}`,
        type: 'invoice.paid',
        created: 1,
        outcome: 'applied',
        receivedAt: new Date(Date.now() - 91 * day),
      },
      {
        id: `evt_new_${tag}`,
        type: 'invoice.paid',
        created: 1,
        outcome: 'applied',
        receivedAt: new Date(Date.now() - 89 * day),
      },
    ]);
    expect((await purgeExpired(db)).billingEvents).toBeGreaterThanOrEqual(1);
    const left = await db
      .select({ id: billingEvents.id })
      .from(billingEvents)
      .where(inArray(billingEvents.id, [`evt_old_${tag}`, `evt_new_${tag}`]));
    expect(left.map((r) => r.id)).toEqual([`evt_new_${tag}`]);
  });
});
