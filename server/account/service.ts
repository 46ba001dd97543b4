import { and, asc, eq } from 'drizzle-orm';
import { memberships, organizations, users } from '@/db/schema';
import type { Db } from '@/db/client';
import { withTransaction, type ServiceContext } from '../context';
import { AppError, notFound } from '../errors';
import { newId, isId } from '../ids';
import { hashPassword, passwordProblem, verifyPassword } from '../auth/passwords';
import { recordAudit } from '../audit/service';
import type { Organization, Profile } from '../orgs/schemas';
import { getOrganization } from '../orgs/service';

type UserRow = typeof users.$inferSelect;

function toProfile(row: UserRow): Profile {
  return { id: row.id, email: row.email, name: row.name, defaultOrganizationId: row.defaultOrganizationId };
}

async function loadUser(db: Db, userId: string): Promise<UserRow> {
  const [row] = await db.select().from(users).where(eq(users.id, userId));
  if (!row) throw new AppError('unauthorized', 'This account no longer exists.');
  return row;
}

export async function getProfile(ctx: ServiceContext): Promise<Profile> {
  return toProfile(await loadUser(ctx.db, ctx.actor.userId));
}

export async function setDefaultOrganization(ctx: ServiceContext, input: { organizationId: string | null }): Promise<Profile> {
  return withTransaction(ctx, async (txCtx) => {
    const tx = txCtx.db;
    if (input.organizationId !== null) await getOrganization(txCtx, input.organizationId);
    const [row] = await tx.update(users).set({ defaultOrganizationId: input.organizationId }).where(eq(users.id, ctx.actor.userId)).returning();
    if (!row) throw new AppError('unauthorized', 'This account no longer exists.');
    await recordAudit(txCtx, { organizationId: input.organizationId, operation: 'profile.setDefaultOrganization', targetType: 'user', targetId: ctx.actor.userId, details: { organizationId: input.organizationId } });
    return toProfile(row);
  });
}

// Never switches silently: an unset or inaccessible default is an explicit choice for the caller.
export async function resolveDefaultOrganization(ctx: ServiceContext): Promise<Organization> {
  const user = await loadUser(ctx.db, ctx.actor.userId);
  if (user.defaultOrganizationId) {
    try {
      return await getOrganization(ctx, user.defaultOrganizationId);
    } catch (error) {
      if (!(error instanceof AppError && error.code === 'not_found')) throw error;
    }
  }
  const accessible = await ctx.db
    .select({ id: organizations.id, name: organizations.name, role: memberships.role })
    .from(memberships)
    .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
    .where(eq(memberships.userId, ctx.actor.userId))
    .orderBy(asc(organizations.id))
    .limit(100);
  throw new AppError(
    'choose_organization',
    user.defaultOrganizationId ? 'Your default organization is no longer accessible. Choose one explicitly.' : 'No default organization is set. Choose one explicitly.',
    { defaultOrganizationId: user.defaultOrganizationId, organizations: accessible },
  );
}

// Dashboard accounts: email + password.
export type SignUpInput = { email: string; password: string; name?: string };

export async function signUp(db: Db, input: SignUpInput): Promise<Profile> {
  const email = input.email.trim().toLowerCase();
  const problem = passwordProblem(input.password);
  if (problem) throw new AppError('invalid_request', problem, { issues: [{ path: 'password', message: problem }] });
  const passwordHash = await hashPassword(input.password);
  const [row] = await db
    .insert(users)
    .values({ id: newId('usr'), email, name: input.name?.trim() || null, passwordHash })
    .onConflictDoNothing()
    .returning();
  if (!row) throw new AppError('email_taken', 'An account with this email already exists. Sign in instead.', { issues: [{ path: 'email', message: 'An account with this email already exists.' }] });
  await recordAudit({ db, actor: { userId: row.id, clientId: 'dashboard', human: true } }, { organizationId: null, operation: 'account.signUp', targetType: 'user', targetId: row.id });
  return toProfile(row);
}

// Returns null for an unknown email or a wrong password; the caller says which field is wrong.
export async function checkCredentials(db: Db, emailInput: string, password: string): Promise<{ profile: Profile } | { error: 'unknown_email' | 'wrong_password' }> {
  const [row] = await db.select().from(users).where(eq(users.email, emailInput.trim().toLowerCase()));
  if (!row?.passwordHash) return { error: 'unknown_email' };
  if (!(await verifyPassword(password, row.passwordHash))) return { error: 'wrong_password' };
  return { profile: toProfile(row) };
}

// OAuth subjects: users are keyed by (issuer, sub); the built-in issuer's sub is the user id.
export async function provisionOAuthUser(
  db: Db,
  claims: { issuer: string; subject: string; email?: string; emailVerified?: boolean; name?: string; builtInIssuer: boolean },
): Promise<string> {
  if (claims.builtInIssuer) {
    if (!isId('usr', claims.subject)) throw new AppError('unauthorized', 'Unknown subject.');
    const [row] = await db.select({ id: users.id }).from(users).where(eq(users.id, claims.subject));
    if (!row) throw new AppError('unauthorized', 'Unknown subject.');
    return row.id;
  }
  const identity = and(eq(users.issuer, claims.issuer), eq(users.subject, claims.subject));
  const [existing] = await db.select({ id: users.id }).from(users).where(identity);
  if (existing) return existing.id;
  // The issuer's address is kept only when it says it verified it (`email_verified: true`).
  const email = (claims.emailVerified === true && claims.email?.trim().toLowerCase()) || null;
  const [emailOwner] = email ? await db.select({ id: users.id }).from(users).where(eq(users.email, email)) : [];
  // An email already owned by another account is not linked (that would let any issuer claim it).
  const kept = emailOwner ? null : email;
  await db
    .insert(users)
    .values({ id: newId('usr'), issuer: claims.issuer, subject: claims.subject, email: kept, emailVerifiedAt: kept ? new Date() : null, name: claims.name ?? null })
    .onConflictDoNothing();
  const [created] = await db.select({ id: users.id }).from(users).where(identity);
  if (!created) throw notFound('User');
  return created.id;
}
