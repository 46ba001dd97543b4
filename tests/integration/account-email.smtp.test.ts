import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { emailTokens, rateLimits, users } from '@/db/schema';
import { tokenDigest } from '@/server/credentials/link-tokens';
import { checkCredentials } from '@/server/account/service';
import { sessionStillValid } from '@/server/auth/nextauth';
import { config } from '@/server/config';
import { purgeExpired } from '@/server/housekeeping';
import { call, newOrganization, newUser } from '../helpers/api';
import { signToken } from '../helpers/issuer';
import { linkTo, startSmtpServer, tokenOf } from '../helpers/smtp';
import { caller, rejection } from '../helpers/trpc';

// SMTP_URL is set for this file's process (config is read once per process), so verification is
// required and every email goes through a real SMTP server.
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;

beforeAll(async () => {
  smtp = await startSmtpServer();
  process.env.SMTP_URL = smtp.url;
  process.env.EMAIL_FROM = 'Promptloop Tests <accounts@promptloop.test>';
  delete process.env.REQUIRE_EMAIL_VERIFICATION;
});
afterAll(() => smtp.close());

const address = (label = 'person') => `${label}-${randomUUID()}@example.test`;
const password = 'river-stone-42';

async function signUp(email = address()) {
  const profile = await (await caller(null)).account.signUp({ email, password, name: 'Robin' });
  return { email, profile, trpc: await caller(profile.id) };
}

async function verificationLink(email: string, nth = 1): Promise<string> {
  const messages = await smtp.waitFor(email, /Confirm your email/, nth);
  return linkTo(messages[nth - 1], '/verify-email');
}

async function resetLink(email: string, nth = 1): Promise<string> {
  const messages = await smtp.waitFor(email, /Reset your Promptloop password/, nth);
  return linkTo(messages[nth - 1], '/reset-password');
}

describe('configuration', () => {
  it('SMTP_URL set: verification is required by default and the sender is EMAIL_FROM', () => {
    expect(config().smtpUrl).toBe(smtp.url);
    expect(config().requireEmailVerification).toBe(true);
    expect(config().emailFrom).toBe('Promptloop Tests <accounts@promptloop.test>');
  });
});

describe('email verification on sign-up', () => {
  it('sign-up emails a link through SMTP (authenticated, from EMAIL_FROM) that verifies the address once', async () => {
    const { email, trpc } = await signUp();
    expect(await trpc.account.emailStatus()).toEqual({ email, verified: false, verificationRequired: true });

    const [message] = await smtp.waitFor(email, /Confirm your email/);
    expect(message.from).toBe('accounts@promptloop.test');
    expect(message.raw).toMatch(/^From: Promptloop Tests <accounts@promptloop\.test>/m);
    expect(message.raw).toMatch(/Content-Type: text\/plain/);
    expect(message.raw).toMatch(/Content-Type: text\/html/);
    const link = linkTo(message, '/verify-email');
    expect(link.startsWith(`${config().appUrl}/verify-email?token=`)).toBe(true);
    const token = tokenOf(link);
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);

    // Only the digest is stored.
    const db = await getDb();
    const [stored] = await db
      .select()
      .from(emailTokens)
      .where(eq(emailTokens.tokenDigest, tokenDigest(token)));
    expect(stored).toMatchObject({ purpose: 'verify_email', email, usedAt: null });
    expect(JSON.stringify(await db.select().from(emailTokens))).not.toContain(token);
    expect(stored.expiresAt.getTime() - stored.createdAt.getTime()).toBe(24 * 60 * 60 * 1000);

    const anonymous = await caller(null);
    expect(await anonymous.account.verifyEmail({ token })).toEqual({ email });
    expect(await trpc.account.emailStatus()).toEqual({ email, verified: true, verificationRequired: true });

    const again = await rejection(anonymous.account.verifyEmail({ token }));
    expect(again.cause.code).toBe('invalid_state');
    expect(again.cause.details.state).toBe('link_used');
  });

  it('an expired link, an unknown link and a link for an address the account no longer uses are refused', async () => {
    const { email, profile, trpc } = await signUp();
    const first = tokenOf(await verificationLink(email));
    const db = await getDb();
    await db
      .update(emailTokens)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(emailTokens.tokenDigest, tokenDigest(first)));
    const anonymous = await caller(null);
    expect((await rejection(anonymous.account.verifyEmail({ token: first }))).cause.details.state).toBe('link_expired');
    expect((await rejection(anonymous.account.verifyEmail({ token: 'A'.repeat(43) }))).cause.details.state).toBe(
      'link_invalid',
    );
    expect((await rejection(anonymous.account.verifyEmail({ token: 'short' }))).cause.details.state).toBe(
      'link_invalid',
    );

    // "Resend email" sends a fresh link that works.
    expect(await trpc.account.resendVerification()).toEqual({ sent: true, alreadyVerified: false });
    const second = tokenOf(await verificationLink(email, 2));
    expect(second).not.toBe(first);

    // Bound to the address: after the account's address changes, the link proves nothing.
    await db
      .update(users)
      .set({ email: address('moved') })
      .where(eq(users.id, profile.id));
    expect((await rejection(anonymous.account.verifyEmail({ token: second }))).cause.details.state).toBe(
      'link_invalid',
    );
    await db.update(users).set({ email }).where(eq(users.id, profile.id));
    await anonymous.account.verifyEmail({ token: second });
    expect(await trpc.account.resendVerification()).toEqual({ sent: false, alreadyVerified: true });
  });
});

describe('forgot and reset password', () => {
  it('end to end: single-use 1-hour link, other links invalidated, old password and older sessions refused', async () => {
    const { email, profile } = await signUp();
    const anonymous = await caller(null);
    const db = await getDb();

    const answer = await anonymous.account.requestPasswordReset({ email: email.toUpperCase() });
    expect(answer.message).toMatch(/If an account exists for this address/);
    const firstLink = await resetLink(email);
    expect(firstLink.startsWith(`${config().appUrl}/reset-password?token=`)).toBe(true);
    const first = tokenOf(firstLink);
    const [stored] = await db
      .select()
      .from(emailTokens)
      .where(eq(emailTokens.tokenDigest, tokenDigest(first)));
    expect(stored.expiresAt.getTime() - stored.createdAt.getTime()).toBe(60 * 60 * 1000);

    // A new link invalidates the first one.
    await anonymous.account.requestPasswordReset({ email });
    const second = tokenOf(await resetLink(email, 2));
    expect((await rejection(anonymous.account.checkResetLink({ token: first }))).cause.details.state).toBe(
      'link_invalid',
    );
    expect(await anonymous.account.checkResetLink({ token: second })).toMatchObject({ email });

    // The password rules apply, and a refused password leaves the link usable.
    const weak = await rejection(anonymous.account.resetPassword({ token: second, password: 'short' }));
    expect(weak.cause.details.issues).toEqual([{ path: 'password', message: expect.any(String) }]);

    const signedInBefore = Date.now() - 1;
    expect(await sessionStillValid(db, profile.id, signedInBefore)).toBe(true);
    expect(await anonymous.account.resetPassword({ token: second, password: 'new-river-stone-77' })).toEqual({ email });

    expect(await checkCredentials(db, email, password)).toEqual({ error: 'invalid_credentials' });
    expect(await checkCredentials(db, email, 'new-river-stone-77')).toMatchObject({ profile: { id: profile.id } });
    expect(await sessionStillValid(db, profile.id, signedInBefore)).toBe(false);
    expect(await sessionStillValid(db, profile.id, Date.now() + 1)).toBe(true);
    // The link proved the address.
    expect(await (await caller(profile.id)).account.emailStatus()).toMatchObject({ verified: true });

    const reused = await rejection(
      anonymous.account.resetPassword({ token: second, password: 'third-river-stone-99' }),
    );
    expect(reused.cause.details.state).toBe('link_used');
    expect(await checkCredentials(db, email, 'new-river-stone-77')).toMatchObject({ profile: { id: profile.id } });
  });

  it('a link older than 1 hour is refused', async () => {
    const { email } = await signUp();
    const anonymous = await caller(null);
    await anonymous.account.requestPasswordReset({ email });
    const token = tokenOf(await resetLink(email));
    const db = await getDb();
    await db
      .update(emailTokens)
      .set({ expiresAt: new Date(Date.now() - 1) })
      .where(eq(emailTokens.tokenDigest, tokenDigest(token)));
    expect((await rejection(anonymous.account.checkResetLink({ token }))).cause.details.state).toBe('link_expired');
    expect(
      (await rejection(anonymous.account.resetPassword({ token, password: 'new-river-stone-77' }))).cause.details.state,
    ).toBe('link_expired');
    expect(await checkCredentials(db, email, password)).toMatchObject({ profile: { email } });
  });

  it('an unknown address gets the same answer and no email; requests are rate limited per address', async () => {
    const anonymous = await caller(null);
    const unknown = address('nobody');
    const { email } = await signUp();
    const forUnknown = await anonymous.account.requestPasswordReset({ email: unknown });
    const forKnown = await anonymous.account.requestPasswordReset({ email });
    expect(forUnknown).toEqual(forKnown);
    await resetLink(email);
    expect(smtp.received.filter((m) => m.to.includes(unknown))).toEqual([]);

    for (let i = 0; i < 4; i++) await anonymous.account.requestPasswordReset({ email: unknown });
    const limited = await rejection(anonymous.account.requestPasswordReset({ email: unknown }));
    expect(limited.code).toBe('TOO_MANY_REQUESTS');
    expect(limited.cause.code).toBe('rate_limited');
    expect(limited.message).toMatch(/Too many attempts/);
  });
});

describe('members are added only by a verified address', () => {
  it('an unverified account is 404 at the email field until it verifies; the added person is emailed', async () => {
    const admin = await newUser();
    const org = await newOrganization(admin, `Verified Org ${randomUUID().slice(0, 6)}`);
    const { email, profile } = await signUp(address('squatter'));

    const refused = await admin.call('POST', `/organizations/${org.id}/members`, { body: { email, role: 'editor' } });
    expect(refused.status).toBe(404);
    expect(refused.body.error.code).toBe('not_found');
    expect(refused.body.error.details.field).toBe('email');
    expect(refused.body.error.message).toMatch(/No verified account uses this email/);

    await (await caller(null)).account.verifyEmail({ token: tokenOf(await verificationLink(email)) });
    const added = await admin.call('POST', `/organizations/${org.id}/members`, {
      body: { email, role: 'editor' },
      headers: { 'idempotency-key': `add-${randomUUID()}` },
    });
    expect(added.status).toBe(201);
    expect(added.body.userId).toBe(profile.id);

    const [invitation] = await smtp.waitFor(email, /You were added to/);
    expect(invitation.subject).toContain(org.name);
    expect(invitation.body).toContain(`You were added to ${org.name} as an editor`);
    expect(linkTo(invitation, `/organizations/${org.id}`)).toBe(`${config().appUrl}/organizations/${org.id}`);
  });
});

describe('external issuer email', () => {
  it('the email claim is kept (and verified) only with email_verified: true', async () => {
    const db = await getDb();
    const verified = address('issuer-verified');
    const withClaim = await call('GET', '/me', {
      token: await signToken({ sub: `sub-${randomUUID()}`, email: verified, extra: { email_verified: true } }),
    });
    expect(withClaim.body.email).toBe(verified);
    const [row] = await db.select().from(users).where(eq(users.id, withClaim.body.id));
    expect(row.emailVerifiedAt).toBeInstanceOf(Date);

    for (const extra of [{}, { email_verified: false }, { email_verified: 'true' }]) {
      const claimed = address('issuer-unverified');
      const me = await call('GET', '/me', {
        token: await signToken({ sub: `sub-${randomUUID()}`, email: claimed, extra }),
      });
      expect(me.status).toBe(200);
      expect(me.body.email).toBeNull();
      // So nobody can add that person by an address the issuer never checked.
      const admin = await newUser();
      const org = await newOrganization(admin);
      const result = await admin.call('POST', `/organizations/${org.id}/members`, {
        body: { email: claimed, role: 'viewer' },
      });
      expect(result.status).toBe(404);
    }
  });
});

describe('housekeeping', () => {
  it('purges expired email links and stale rate-limit windows, and keeps live ones', async () => {
    const { email } = await signUp();
    const live = tokenOf(await verificationLink(email));
    const db = await getDb();
    await (await caller(null)).account.requestPasswordReset({ email });
    const expired = tokenOf(await resetLink(email));
    await db
      .update(emailTokens)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(emailTokens.tokenDigest, tokenDigest(expired)));
    const staleKey = `test-stale:${randomUUID()}`;
    await db
      .insert(rateLimits)
      .values({ key: staleKey, windowStartedAt: new Date(Date.now() - 2 * 60 * 60 * 1000), hits: 3 });

    const removed = await purgeExpired(db);
    expect(removed.emailTokens).toBeGreaterThanOrEqual(1);
    expect(removed.rateLimits).toBeGreaterThanOrEqual(1);
    expect(
      await db
        .select()
        .from(emailTokens)
        .where(eq(emailTokens.tokenDigest, tokenDigest(expired))),
    ).toHaveLength(0);
    expect(
      await db
        .select()
        .from(emailTokens)
        .where(eq(emailTokens.tokenDigest, tokenDigest(live))),
    ).toHaveLength(1);
    expect(await db.select().from(rateLimits).where(eq(rateLimits.key, staleKey))).toHaveLength(0);
    expect(
      await db
        .select()
        .from(rateLimits)
        .where(eq(rateLimits.key, `reset:email:${email}`)),
    ).toHaveLength(1);
  });
});
