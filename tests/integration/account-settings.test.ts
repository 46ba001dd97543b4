import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { auditLog, rateLimits, users } from '@/db/schema';
import { checkCredentials } from '@/server/account/service';
import { sessionStillValid } from '@/server/auth/nextauth';
import { limitKeys } from '@/server/credentials/attempts';
import { newUser } from '../helpers/api';
import { caller, rejection } from '../helpers/trpc';

// The account page's settings (dashboard only): display name and password change.

const password = 'river-stone-42';

async function signUp(name?: string) {
  const email = `settings-${randomUUID()}@example.test`;
  const profile = await (await caller(null)).account.signUp({ email, password, name });
  return { email, id: profile.id, trpc: await caller(profile.id) };
}

describe('account settings', () => {
  it('reads and changes the display name; an empty one clears it; 160 characters at most', async () => {
    const { email, id, trpc } = await signUp('Robin');
    expect(await trpc.account.settings()).toEqual({ name: 'Robin', email, passwordSignIn: true });
    expect(await trpc.account.setName({ name: '  Robin Hood  ' })).toMatchObject({ name: 'Robin Hood' });
    expect(await trpc.account.profile()).toMatchObject({ name: 'Robin Hood' });

    const long = await rejection(trpc.account.setName({ name: 'x'.repeat(161) }));
    expect(long.code).toBe('BAD_REQUEST');
    expect(await trpc.account.profile()).toMatchObject({ name: 'Robin Hood' });

    expect(await trpc.account.setName({ name: '   ' })).toMatchObject({ name: null });
    expect(await trpc.account.profile()).toMatchObject({ name: null });
    const audit = await (
      await getDb()
    )
      .select({ operation: auditLog.operation })
      .from(auditLog)
      .where(and(eq(auditLog.targetId, id), eq(auditLog.operation, 'account.rename')));
    expect(audit).toHaveLength(2);
  });

  it('changing the password needs the current one, follows the rules, and ends older sessions', async () => {
    const { email, id, trpc } = await signUp();
    const db = await getDb();

    const wrong = await rejection(
      trpc.account.changePassword({ currentPassword: 'not-it-123', newPassword: 'new-river-stone-77' }),
    );
    expect(wrong.cause.code).toBe('invalid_request');
    expect(wrong.cause.details.issues).toEqual([
      { path: 'currentPassword', message: 'This is not your current password.' },
    ]);

    const weak = await rejection(trpc.account.changePassword({ currentPassword: password, newPassword: 'short' }));
    expect(weak.cause.details.issues).toEqual([{ path: 'newPassword', message: 'Use at least 10 characters.' }]);
    const asAddress = await rejection(trpc.account.changePassword({ currentPassword: password, newPassword: email }));
    expect(asAddress.cause.details.issues).toEqual([{ path: 'newPassword', message: expect.stringMatching(/email/) }]);
    const same = await rejection(trpc.account.changePassword({ currentPassword: password, newPassword: password }));
    expect(same.cause.details.issues).toEqual([{ path: 'newPassword', message: expect.stringMatching(/other than/) }]);
    // Nothing changed by the refusals.
    expect(await checkCredentials(db, email, password)).toMatchObject({ profile: { id } });

    const signedInBefore = Date.now() - 1;
    expect(await sessionStillValid(db, id, signedInBefore)).toBe(true);
    expect(await trpc.account.changePassword({ currentPassword: password, newPassword: 'new-river-stone-77' })).toEqual(
      { email },
    );
    expect(await checkCredentials(db, email, password)).toEqual({ error: 'invalid_credentials' });
    expect(await checkCredentials(db, email, 'new-river-stone-77')).toMatchObject({ profile: { id } });
    expect(await sessionStillValid(db, id, signedInBefore)).toBe(false);
    expect(await sessionStillValid(db, id, Date.now() + 1)).toBe(true);
  });

  it('wrong current passwords count with failed sign-ins: over the limit even the right one is refused', async () => {
    const { email, id, trpc } = await signUp();
    for (let i = 0; i < 10; i++)
      await rejection(
        trpc.account.changePassword({ currentPassword: `wrong-guess-${i}`, newPassword: 'new-river-stone-77' }),
      );
    const limited = await rejection(
      trpc.account.changePassword({ currentPassword: password, newPassword: 'new-river-stone-77' }),
    );
    expect(limited.cause.code).toBe('rate_limited');
    const db = await getDb();
    // The sign-in form is locked out by the same counter, and the password is unchanged.
    await expect(checkCredentials(db, email, password)).rejects.toMatchObject({ code: 'rate_limited' });
    await db.delete(rateLimits).where(eq(rateLimits.key, limitKeys.signInEmail(email)));
    expect(await checkCredentials(db, email, password)).toMatchObject({ profile: { id } });
  });

  it('an account of an external issuer has no password here', async () => {
    const user = await newUser();
    const trpc = await caller(user.id);
    expect(await trpc.account.settings()).toMatchObject({ passwordSignIn: false });
    const refused = await rejection(
      trpc.account.changePassword({ currentPassword: 'anything-1', newPassword: 'new-river-stone-77' }),
    );
    expect(refused.cause.code).toBe('invalid_request');
    const [row] = await (await getDb()).select({ hash: users.passwordHash }).from(users).where(eq(users.id, user.id));
    expect(row.hash).toBeNull();
  });
});
