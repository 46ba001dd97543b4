import { and, eq, isNull, ne, sql } from 'drizzle-orm';
import { emailTokens, users } from '@/db/schema';
import { config } from '../config';
import { onCommit, withTransaction, type DbContext } from '../context';
import { AppError } from '../errors';
import { enforceLimit, limitKeys, limits } from '../credentials/attempts';
import { hashPassword, passwordProblem } from '../credentials/passwords';
import { recordAudit } from '../audit/service';
import { sendEmail } from '../email/mailer';
import { passwordResetEmail } from '../email/templates';
import { findToken, linkError, markUsed } from './email-tokens';
import { newToken } from '../credentials/link-tokens';

// Forgot / reset password (API.md "Accounts and email"): an emailed link valid 1 hour, single use,
// stored as a digest; a new link or a successful reset invalidates the account's other links.

const resetTtlMs = 60 * 60 * 1000;

// The answer never depends on whether an account uses the address.
const resetRequestedMessage = 'If an account exists for this address, we sent a link to reset its password.';

// Every request does the same work up to the email, which goes out in the background.
// Runs outside an edge transaction (the counters must commit even when the request is refused).
export async function requestPasswordReset(
  ctx: DbContext,
  input: { email: string; clientIp: string | null },
): Promise<{ message: string }> {
  const email = input.email.trim().toLowerCase();
  // One counter per address with sign-up and sign-in; callers in this process have no address.
  if (input.clientIp) await enforceLimit(ctx.db, limitKeys.accountIp(input.clientIp), limits.accountAttemptsPerIp);
  await enforceLimit(ctx.db, limitKeys.resetEmail(email), limits.passwordResetsPerEmail);
  const { token, digest } = newToken();
  // Its own transaction (one owner): the edge opens none, so the counters above commit even when refused.
  await withTransaction(ctx, async (txCtx) => {
    const tx = txCtx.db;
    // Only dashboard accounts (with a password) are reset; an issuer's accounts sign in there.
    const [user] = await tx
      .select({ id: users.id, email: users.email, passwordHash: users.passwordHash })
      .from(users)
      .where(eq(users.email, email))
      .for('update');
    if (!user?.email || !user.passwordHash) return null;
    await tx.delete(emailTokens).where(and(eq(emailTokens.userId, user.id), eq(emailTokens.purpose, 'reset_password')));
    const now = new Date();
    await tx.insert(emailTokens).values({
      tokenDigest: digest,
      userId: user.id,
      purpose: 'reset_password',
      email: user.email,
      createdAt: now,
      expiresAt: new Date(now.getTime() + resetTtlMs),
    });
    const message = passwordResetEmail(user.email, `${config().appUrl}/reset-password?token=${token}`);
    onCommit(txCtx, () => sendEmail(message));
    return null;
  });
  return { message: resetRequestedMessage };
}

// What the reset page shows before the new password is chosen.
export async function checkResetLink({ db }: DbContext, token: string): Promise<{ email: string; expiresAt: string }> {
  const found = await findToken(db, token, 'reset_password');
  if (found.problem) throw linkError(found.problem, 'password reset');
  return { email: found.row.token.email, expiresAt: found.row.token.expiresAt.toISOString() };
}

// Sets the new password, uses the link, ends older dashboard sessions and (the link proved the
// address) marks the email verified, all in the caller's transaction (the edge's).
export async function resetPassword(
  ctx: DbContext,
  input: { token: string; password: string },
): Promise<{ email: string }> {
  const problem = passwordProblem(input.password);
  if (problem) throw new AppError('invalid_request', problem, { issues: [{ path: 'password', message: problem }] });
  const passwordHash = await hashPassword(input.password);
  const { db } = ctx;
  const now = new Date();
  const found = await findToken(db, input.token, 'reset_password', { lock: true, now });
  if (found.problem) throw linkError(found.problem, 'password reset');
  const { user, token: link } = found.row;
  const personal = passwordProblem(input.password, link.email);
  if (personal) throw new AppError('invalid_request', personal, { issues: [{ path: 'password', message: personal }] });
  await markUsed(db, link.tokenDigest, now);
  await db
    .delete(emailTokens)
    .where(
      and(
        eq(emailTokens.userId, user.id),
        eq(emailTokens.purpose, 'reset_password'),
        ne(emailTokens.tokenDigest, link.tokenDigest),
      ),
    );
  await db
    .update(users)
    .set({
      passwordHash,
      sessionsValidAfter: now,
      emailVerifiedAt: sql`coalesce(${users.emailVerifiedAt}, ${now.toISOString()}::timestamptz)`,
    })
    .where(eq(users.id, user.id));
  // Pending verification links for this address have nothing left to prove.
  await db
    .update(emailTokens)
    .set({ usedAt: now })
    .where(and(eq(emailTokens.userId, user.id), eq(emailTokens.purpose, 'verify_email'), isNull(emailTokens.usedAt)));
  await recordAudit(
    { db: db, actor: { userId: user.id, clientId: 'dashboard', human: true } },
    { organizationId: null, operation: 'account.resetPassword', targetType: 'user', targetId: user.id },
  );
  return { email: link.email };
}
