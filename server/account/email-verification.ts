import { and, eq, isNull } from 'drizzle-orm';
import { emailTokens, users } from '@/db/schema';
import { config } from '../config';
import { onCommit, type DbContext, type ServiceContext } from '../context';
import { AppError } from '../errors';
import { enforceLimit, limitKeys, limits } from '../credentials/attempts';
import { recordAudit } from '../audit/service';
import { sendEmail } from '../email/mailer';
import { verificationEmail } from '../email/templates';
import type { Profile } from '../orgs/schemas';
import { findToken, linkError, markUsed } from './email-tokens';
import { newToken } from '../credentials/link-tokens';

// Email verification (API.md "Accounts and email"): a link sent on sign-up, valid 24 hours, single
// use, bound to the address it was sent to.

const verificationTtlMs = 24 * 60 * 60 * 1000;

export type EmailStatus = { email: string | null; verified: boolean; verificationRequired: boolean };

export async function getEmailStatus(ctx: ServiceContext): Promise<EmailStatus> {
  const [row] = await ctx.db
    .select({ email: users.email, verifiedAt: users.emailVerifiedAt })
    .from(users)
    .where(eq(users.id, ctx.actor.userId));
  if (!row) throw new AppError('unauthorized', 'This account no longer exists.');
  return {
    email: row.email,
    verified: Boolean(row.email && row.verifiedAt),
    verificationRequired: config().requireEmailVerification,
  };
}

// Stores a new link for the account's current, unverified address and emails it once that has
// committed, in the background. Returns false when there is nothing to verify.
async function sendVerification(ctx: DbContext, userId: string): Promise<boolean> {
  const [user] = await ctx.db.select().from(users).where(eq(users.id, userId));
  if (!user?.email || user.emailVerifiedAt) return false;
  const { token, digest } = newToken();
  const now = new Date();
  await ctx.db.insert(emailTokens).values({
    tokenDigest: digest,
    userId,
    purpose: 'verify_email',
    email: user.email,
    createdAt: now,
    expiresAt: new Date(now.getTime() + verificationTtlMs),
  });
  const message = verificationEmail(user.email, `${config().appUrl}/verify-email?token=${token}`);
  onCommit(ctx, () => sendEmail(message));
  return true;
}

// After a dashboard sign-up: the new account gets its link; a slow or failed send never holds up
// or fails the sign-up (the person can resend).
export async function afterSignUp(ctx: DbContext, profile: Profile): Promise<Profile> {
  await sendVerification(ctx, profile.id);
  return profile;
}

// "Resend email" for the signed-in person (rate limited like reset requests).
export async function resendVerification(ctx: ServiceContext): Promise<{ sent: boolean; alreadyVerified: boolean }> {
  const status = await getEmailStatus(ctx);
  if (!status.email || status.verified) return { sent: false, alreadyVerified: status.verified };
  await enforceLimit(ctx.db, limitKeys.verificationUser(ctx.actor.userId), limits.passwordResetsPerEmail);
  return { sent: await sendVerification(ctx, ctx.actor.userId), alreadyVerified: false };
}

export type VerifyResult = { email: string };

// Confirms the address once; a second use, an expired link or one for a changed address is refused.
export async function verifyEmail(ctx: DbContext, token: string): Promise<VerifyResult> {
  const now = new Date();
  const found = await findToken(ctx.db, token, 'verify_email', { lock: true, now });
  if (found.problem) throw linkError(found.problem, 'verification');
  const { user, token: link } = found.row;
  await markUsed(ctx.db, link.tokenDigest, now);
  await ctx.db
    .update(users)
    .set({ emailVerifiedAt: now })
    .where(and(eq(users.id, user.id), eq(users.email, link.email), isNull(users.emailVerifiedAt)));
  await recordAudit(
    { db: ctx.db, actor: { userId: user.id, clientId: 'dashboard', human: true } },
    { organizationId: null, operation: 'account.verifyEmail', targetType: 'user', targetId: user.id },
  );
  return { email: link.email };
}
