import { and, asc, eq, isNull } from 'drizzle-orm';
import { memberships, organizations, users } from '@/db/schema';
import { getDb, type Db } from '@/db/client';
import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { AppError, notFound } from '../errors';
import { newId, isId } from '../ids';
import { hashPassword, passwordProblem, unmatchableHash, verifyPassword } from '../credentials/passwords';
import {
  enforceLimit,
  hitLimit,
  limitKeys,
  limits,
  refundHit,
  tooManyAttempts,
  type LimitWindow,
} from '../credentials/attempts';
import { recordAudit } from '../audit/service';
import type { Organization, Profile } from '../orgs/schemas';
import { getOrganization } from '../orgs/service';
import { serviceAccountProfile } from '../service-accounts/service';

type UserRow = typeof users.$inferSelect;

function toProfile(row: UserRow): Profile {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    defaultOrganizationId: row.defaultOrganizationId,
    kind: 'user',
  };
}

async function loadUser(db: Db, userId: string): Promise<UserRow> {
  const [row] = await db.select().from(users).where(eq(users.id, userId));
  if (!row) throw new AppError('unauthorized', 'This account no longer exists.');
  return row;
}

export async function getProfile(ctx: ServiceContext): Promise<Profile> {
  if (ctx.actor.serviceAccount) return serviceAccountProfile(ctx);
  return toProfile(await loadUser(ctx.db, ctx.actor.userId));
}

export async function setDefaultOrganization(
  ctx: ServiceContext,
  { organizationId }: OperationInput<'set_default_organization'>,
): Promise<Profile> {
  if (ctx.actor.serviceAccount) {
    throw new AppError(
      'forbidden',
      'A service account acts only in its own organization, which is always its default; there is no default to set.',
      {
        actor: 'service_account',
      },
    );
  }
  const { db } = ctx;
  if (organizationId !== null) await getOrganization(ctx, { organizationId });
  const [row] = await db
    .update(users)
    .set({ defaultOrganizationId: organizationId })
    .where(eq(users.id, ctx.actor.userId))
    .returning();
  if (!row) throw new AppError('unauthorized', 'This account no longer exists.');
  await recordAudit(ctx, {
    organizationId,
    operation: 'profile.setDefaultOrganization',
    targetType: 'user',
    targetId: ctx.actor.userId,
    details: { organizationId },
  });
  return toProfile(row);
}

const maxChoices = 100;

// Never switches silently: an unset or inaccessible default is an explicit choice for the caller.
export async function resolveDefaultOrganization(ctx: ServiceContext): Promise<Organization> {
  if (ctx.actor.serviceAccount)
    return getOrganization(ctx, { organizationId: (await serviceAccountProfile(ctx)).defaultOrganizationId! });
  const user = await loadUser(ctx.db, ctx.actor.userId);
  if (user.defaultOrganizationId) {
    try {
      return await getOrganization(ctx, { organizationId: user.defaultOrganizationId });
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
    .limit(maxChoices + 1);
  // Bounded like every list; a cut list says so (`more`) and where the whole one is.
  const more = accessible.length > maxChoices;
  throw new AppError(
    'choose_organization',
    (user.defaultOrganizationId
      ? 'Your default organization is no longer accessible. Choose one explicitly.'
      : 'No default organization is set. Choose one explicitly.') +
      (more ? ` The first ${maxChoices} are listed; GET /organizations lists them all.` : ''),
    { defaultOrganizationId: user.defaultOrganizationId, organizations: accessible.slice(0, maxChoices), more },
  );
}

// Dashboard accounts: email + password.
export type SignUpInput = { email: string; password: string; name?: string };

// Where an account attempt comes from: the rate-limit key of the caller's address, or null for
// callers in this process (no address to limit).
export type AttemptSource = { clientIp?: string | null };

// Every attempt counts (per address, then per email) before anything else runs, so a flood is
// refused however it is shaped; the counters live on the root handle so a refusal stays counted.
export async function signUp(db: Db, input: SignUpInput, source: AttemptSource = {}): Promise<Profile> {
  const email = input.email.trim().toLowerCase();
  const counters = await getDb();
  if (source.clientIp) await enforceLimit(counters, limitKeys.accountIp(source.clientIp), limits.accountAttemptsPerIp);
  await enforceLimit(counters, limitKeys.signUpEmail(email), limits.signUpsPerEmail);
  const problem = passwordProblem(input.password, email);
  if (problem) throw new AppError('invalid_request', problem, { issues: [{ path: 'password', message: problem }] });
  // A taken email is answered as such anyway, so it skips the (slow) hashing; the insert still
  // settles a race between two sign-ups.
  const [taken] = await db.select({ id: users.id }).from(users).where(eq(users.email, email));
  const passwordHash = taken ? null : await hashPassword(input.password);
  const [row] = passwordHash
    ? await db
        .insert(users)
        .values({ id: newId('usr'), email, name: input.name?.trim() || null, passwordHash })
        .onConflictDoNothing()
        .returning()
    : [];
  if (!row)
    throw new AppError('email_taken', 'An account with this email already exists. Sign in instead.', {
      issues: [{ path: 'email', message: 'An account with this email already exists.' }],
    });
  await recordAudit(
    { db, actor: { userId: row.id, clientId: 'dashboard', human: true } },
    { organizationId: null, operation: 'account.signUp', targetType: 'user', targetId: row.id },
  );
  return toProfile(row);
}

// An unknown email and a wrong password are one answer, reached by the same work: the password is
// always verified (against a hash no password matches when there is no account) and a failure
// always counts against the email and the address. Each attempt is counted before the password is
// checked (one atomic statement per counter, so concurrent guesses cannot slip past the limit) and
// handed back when it succeeds, so only failures use up the limit. Over a limit: 429 rate_limited,
// even with the right password.
export async function checkCredentials(
  db: Db,
  emailInput: string,
  password: string,
  source: AttemptSource = {},
): Promise<{ profile: Profile } | { error: 'invalid_credentials' }> {
  const email = emailInput.trim().toLowerCase();
  const counters = await getDb();
  const keys: { key: string; window: LimitWindow }[] = [
    { key: limitKeys.signInEmail(email), window: limits.signInFailuresPerEmail },
  ];
  if (source.clientIp) keys.push({ key: limitKeys.accountIp(source.clientIp), window: limits.accountAttemptsPerIp });
  const hits = await Promise.all(keys.map(({ key, window }) => hitLimit(counters, key, window)));
  const refused = hits.filter((hit) => !hit.allowed);
  if (refused.length) throw tooManyAttempts(Math.max(...refused.map((hit) => hit.retryAfterSeconds)));

  const [row] = await db.select().from(users).where(eq(users.email, email));
  const check = await verifyPassword(password, row?.passwordHash ?? unmatchableHash);
  if (!row?.passwordHash || !check.valid) return { error: 'invalid_credentials' };

  await Promise.all(keys.map(({ key }, i) => refundHit(counters, key, hits[i])));
  if (check.needsRehash) {
    // Only replaces the hash that was verified: a password changed meanwhile is kept.
    await db
      .update(users)
      .set({ passwordHash: await hashPassword(password) })
      .where(and(eq(users.id, row.id), eq(users.passwordHash, row.passwordHash)));
  }
  return { profile: toProfile(row) };
}

// OAuth subjects: users are keyed by (issuer, sub); the built-in issuer's sub is the user id.
export async function provisionOAuthUser(
  db: Db,
  claims: {
    issuer: string;
    subject: string;
    email?: string;
    emailVerified?: boolean;
    name?: string;
    builtInIssuer: boolean;
  },
): Promise<string> {
  if (claims.builtInIssuer) {
    if (!isId('usr', claims.subject)) throw new AppError('unauthorized', 'Unknown subject.');
    const [row] = await db.select({ id: users.id }).from(users).where(eq(users.id, claims.subject));
    if (!row) throw new AppError('unauthorized', 'Unknown subject.');
    return row.id;
  }
  const identity = and(eq(users.issuer, claims.issuer), eq(users.subject, claims.subject));
  // The issuer's address is kept only when it says it verified it (`email_verified: true`).
  const email = (claims.emailVerified === true && claims.email?.trim().toLowerCase()) || null;
  const [existing] = await db.select({ id: users.id, email: users.email }).from(users).where(identity);
  if (existing) {
    // An address the issuer verifies only later (the first token had none, or an unverified one)
    // is kept then, if it is still free: until then the person could not be added by email.
    if (existing.email === null && email && !(await emailTaken(db, email)))
      await db
        .update(users)
        .set({ email, emailVerifiedAt: new Date() })
        .where(and(eq(users.id, existing.id), isNull(users.email)))
        .catch((error: unknown) => {
          // Taken by another account meanwhile (the unique index): it stays without one.
          const code = (error as { code?: string; cause?: { code?: string } }).cause?.code;
          if (code !== '23505' && (error as { code?: string }).code !== '23505') throw error;
        });
    return existing.id;
  }
  // An email already owned by another account is not linked (that would let any issuer claim it).
  const kept = email && !(await emailTaken(db, email)) ? email : null;
  await db
    .insert(users)
    .values({
      id: newId('usr'),
      issuer: claims.issuer,
      subject: claims.subject,
      email: kept,
      emailVerifiedAt: kept ? new Date() : null,
      name: claims.name ?? null,
    })
    .onConflictDoNothing();
  const [created] = await db.select({ id: users.id }).from(users).where(identity);
  if (!created) throw notFound('User');
  return created.id;
}

async function emailTaken(db: Db, email: string): Promise<boolean> {
  const [owner] = await db.select({ id: users.id }).from(users).where(eq(users.email, email));
  return owner !== undefined;
}
