import { and, eq } from 'drizzle-orm';
import { emailTokens, users } from '@/db/schema';
import { withTransaction, type ServiceContext } from '../context';
import { AppError } from '../errors';
import { hitLimit, limitKeys, limits, refundHit, tooManyAttempts } from '../credentials/attempts';
import { hashPassword, passwordProblem, verifyPassword } from '../credentials/passwords';
import { recordAudit } from '../audit/service';

// The account page's own settings (dashboard only): the display name and, for accounts that sign
// in with a password here, a new password. An external issuer's accounts manage both there.

export type AccountSettings = { name: string | null; email: string | null; passwordSignIn: boolean };

async function loadPerson(ctx: ServiceContext) {
  if (ctx.actor.serviceAccount) throw new AppError('forbidden', 'A service account has no personal settings.');
  const [row] = await ctx.db.select().from(users).where(eq(users.id, ctx.actor.userId));
  if (!row) throw new AppError('unauthorized', 'This account no longer exists.');
  return row;
}

export async function getAccountSettings(ctx: ServiceContext): Promise<AccountSettings> {
  const row = await loadPerson(ctx);
  return { name: row.name, email: row.email, passwordSignIn: Boolean(row.passwordHash) };
}

// `name` is trimmed; an empty one clears it (the dashboard then shows the address).
export async function setAccountName(ctx: ServiceContext, input: { name: string }): Promise<AccountSettings> {
  const row = await loadPerson(ctx);
  const name = input.name.trim() || null;
  await ctx.db.update(users).set({ name }).where(eq(users.id, row.id));
  await recordAudit(ctx, { organizationId: null, operation: 'account.rename', targetType: 'user', targetId: row.id });
  return { name, email: row.email, passwordSignIn: Boolean(row.passwordHash) };
}

function passwordIssue(path: string, message: string): AppError {
  return new AppError('invalid_request', message, { issues: [{ path, message }] });
}

// Needs the current password. A wrong one counts against the address exactly like a failed sign-in
// (one counter: a borrowed session cannot guess faster than the sign-in form), so the counter is hit
// on the root handle before the change's own transaction: a refusal stays counted. The change ends
// every dashboard session of the account, this one included: the page signs in again with the new
// password. Called outside an edge transaction (the tRPC procedure opens none).
export async function changePassword(
  ctx: ServiceContext,
  input: { currentPassword: string; newPassword: string },
): Promise<{ email: string }> {
  const row = await loadPerson(ctx);
  if (!row.passwordHash || !row.email)
    throw new AppError(
      'invalid_request',
      'This account signs in through its identity provider; change the password there.',
    );
  const problem = passwordProblem(input.newPassword, row.email);
  if (problem) throw passwordIssue('newPassword', problem);
  const key = limitKeys.signInEmail(row.email);
  const hit = await hitLimit(ctx.db, key, limits.signInFailuresPerEmail);
  if (!hit.allowed) throw tooManyAttempts(hit.retryAfterSeconds);
  const check = await verifyPassword(input.currentPassword, row.passwordHash);
  if (!check.valid) throw passwordIssue('currentPassword', 'This is not your current password.');
  await refundHit(ctx.db, key, hit);
  if (input.newPassword === input.currentPassword)
    throw passwordIssue('newPassword', 'Choose a password other than the current one.');
  const passwordHash = await hashPassword(input.newPassword);
  const email = row.email;
  const verifiedHash = row.passwordHash;
  return withTransaction(ctx, async (txCtx) => {
    const tx = txCtx.db;
    // Only if nothing changed the password meanwhile (a reset, another tab): never overwrite a newer one.
    const [changed] = await tx
      .update(users)
      .set({ passwordHash, sessionsValidAfter: new Date() })
      .where(and(eq(users.id, row.id), eq(users.passwordHash, verifiedHash)))
      .returning({ id: users.id });
    if (!changed) throw passwordIssue('currentPassword', 'Your password changed meanwhile. Enter the new one.');
    // Reset links asked for before the change have nothing left to do.
    await tx.delete(emailTokens).where(and(eq(emailTokens.userId, row.id), eq(emailTokens.purpose, 'reset_password')));
    await recordAudit(txCtx, {
      organizationId: null,
      operation: 'account.changePassword',
      targetType: 'user',
      targetId: row.id,
    });
    return { email };
  });
}
