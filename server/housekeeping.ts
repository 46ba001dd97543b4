import { lt } from 'drizzle-orm';
import type { Db } from '@/db/client';
import {
  billingEvents,
  deletionLinks,
  emailTokens,
  endedSessions,
  idempotencyRecords,
  invitations,
  oauthCodes,
  oauthRefreshTokens,
  rateLimits,
} from '@/db/schema';
import { limits } from './credentials/attempts';

// Rate-limit windows older than the longest one have nothing left to count.
const longestWindowMs = Math.max(...Object.values(limits).map((l) => l.windowMs));

// Authorization codes (60 s) and refresh tokens are kept a day past their expiry: until then a
// replay is still recognised as one (a second redemption, a reused refresh token) rather than as
// an unknown credential; after it, either is refused as expired all the same.
const oauthRetentionMs = 24 * 3600_000;

// Stripe retries a webhook for up to three days and an event can be resent by hand for 30 days:
// an event id is remembered for 90 days, so any redelivery within that finds it.
const billingEventRetentionMs = 90 * 24 * 3600_000;

export type Purged = {
  idempotencyRecords: number;
  deletionLinks: number;
  emailTokens: number;
  rateLimits: number;
  oauthCodes: number;
  oauthRefreshTokens: number;
  billingEvents: number;
  invitations: number;
  endedSessions: number;
};

// Removes records whose retention has passed: idempotency records (kept 24 hours), deletion links,
// emailed links (verification, password reset), stale rate-limit windows, and OAuth codes and
// refresh tokens a day past their expiry, Stripe event ids after 90 days, expired invitations, and
// the records of signed-out sessions once their lifetime is over.
export async function purgeExpired(db: Db, now = new Date()): Promise<Purged> {
  const records = await db
    .delete(idempotencyRecords)
    .where(lt(idempotencyRecords.expiresAt, now))
    .returning({ key: idempotencyRecords.key });
  const links = await db
    .delete(deletionLinks)
    .where(lt(deletionLinks.expiresAt, now))
    .returning({ digest: deletionLinks.tokenDigest });
  const tokens = await db
    .delete(emailTokens)
    .where(lt(emailTokens.expiresAt, now))
    .returning({ digest: emailTokens.tokenDigest });
  const windows = await db
    .delete(rateLimits)
    .where(lt(rateLimits.windowStartedAt, new Date(now.getTime() - longestWindowMs)))
    .returning({ key: rateLimits.key });
  const oauthBefore = new Date(now.getTime() - oauthRetentionMs);
  const codes = await db
    .delete(oauthCodes)
    .where(lt(oauthCodes.expiresAt, oauthBefore))
    .returning({ digest: oauthCodes.codeDigest });
  const refresh = await db
    .delete(oauthRefreshTokens)
    .where(lt(oauthRefreshTokens.expiresAt, oauthBefore))
    .returning({ digest: oauthRefreshTokens.tokenDigest });
  const events = await db
    .delete(billingEvents)
    .where(lt(billingEvents.receivedAt, new Date(now.getTime() - billingEventRetentionMs)))
    .returning({ id: billingEvents.id });
  const invites = await db.delete(invitations).where(lt(invitations.expiresAt, now)).returning({ id: invitations.id });
  const ended = await db
    .delete(endedSessions)
    .where(lt(endedSessions.expiresAt, now))
    .returning({ id: endedSessions.sessionId });
  return {
    idempotencyRecords: records.length,
    deletionLinks: links.length,
    emailTokens: tokens.length,
    rateLimits: windows.length,
    oauthCodes: codes.length,
    oauthRefreshTokens: refresh.length,
    billingEvents: events.length,
    invitations: invites.length,
    endedSessions: ended.length,
  };
}
