import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { endedSessions } from '@/db/schema';
import { authOptions, endSession, sessionLifetimeMs, sessionStillValid } from '@/server/auth/nextauth';
import { purgeExpired } from '@/server/housekeeping';
import { newTeam } from '../helpers/api';

describe('dashboard sessions', () => {
  it('a signed-out session is refused; the same person’s other sessions and other people’s are not', async () => {
    const { admin, editor } = await newTeam();
    const db = await getDb();
    const signedInAt = Date.now() - 60_000;
    const ended = { userId: admin.id, signedInAt, sessionId: `s-ended-${admin.id}` };
    expect(await sessionStillValid(db, admin.id, signedInAt, ended.sessionId)).toBe(true);

    await endSession(db, ended);
    await endSession(db, ended); // a second sign-out of the same session changes nothing

    expect(await sessionStillValid(db, admin.id, signedInAt, ended.sessionId)).toBe(false);
    expect(await sessionStillValid(db, admin.id, signedInAt, `s-other-${admin.id}`)).toBe(true);
    // An id is only ever ended for its own person.
    expect(await sessionStillValid(db, editor.id, signedInAt, ended.sessionId)).toBe(true);
    const [row] = await db.select().from(endedSessions).where(eq(endedSessions.sessionId, ended.sessionId));
    expect(row.expiresAt.getTime()).toBe(signedInAt + sessionLifetimeMs);
  });

  it('a session ends 30 days after its sign-in, however it is used', async () => {
    const { admin } = await newTeam();
    const db = await getDb();
    const now = Date.now();
    expect(await sessionStillValid(db, admin.id, now - sessionLifetimeMs + 60_000, 's-young', now)).toBe(true);
    expect(await sessionStillValid(db, admin.id, now - sessionLifetimeMs, 's-old', now)).toBe(false);
    // A cookie from before sessions carried their sign-in time.
    expect(await sessionStillValid(db, admin.id, 0, null, now)).toBe(false);
  });

  it('the session the dashboard reads says it ends 30 days after the sign-in, not 30 days from now', async () => {
    const authTime = Date.now() - 10 * 24 * 3600_000;
    const callback = authOptions.callbacks!.session! as unknown as (params: {
      session: { expires: string; user?: unknown };
      token: Record<string, unknown>;
    }) => { expires: string };
    const sliding = new Date(Date.now() + sessionLifetimeMs).toISOString();
    const session = callback({
      session: { expires: sliding },
      token: { sub: 'usr_x', email: 'a@example.test', name: null, authTime },
    });
    expect(session.expires).toBe(new Date(authTime + sessionLifetimeMs).toISOString());
  });

  it('the record of an ended session is purged once its lifetime is over, not before', async () => {
    const { admin } = await newTeam();
    const db = await getDb();
    const old = { userId: admin.id, signedInAt: Date.now() - sessionLifetimeMs - 1000, sessionId: `s-old-${admin.id}` };
    const recent = { userId: admin.id, signedInAt: Date.now() - 1000, sessionId: `s-recent-${admin.id}` };
    await endSession(db, old);
    await endSession(db, recent);

    expect((await purgeExpired(db)).endedSessions).toBeGreaterThanOrEqual(1);
    const left = await db.select().from(endedSessions).where(eq(endedSessions.userId, admin.id));
    expect(left.map((r) => r.sessionId)).toEqual([recent.sessionId]);
  });

  it('a cookie without a person or a session id ends nothing', async () => {
    const { admin } = await newTeam();
    const db = await getDb();
    await endSession(db, { userId: null, signedInAt: Date.now(), sessionId: 's-nobody' });
    await endSession(db, { userId: admin.id, signedInAt: Date.now(), sessionId: null });
    expect(await db.select().from(endedSessions).where(eq(endedSessions.userId, admin.id))).toHaveLength(0);
    expect(await db.select().from(endedSessions).where(eq(endedSessions.sessionId, 's-nobody'))).toHaveLength(0);
  });
});
