import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { rateLimits } from '@/db/schema';
import { AppError } from '../errors';

// Fixed-window counters in Postgres (table rate_limits), so every process agrees. Callers pass the
// root database handle, never a request's transaction: a refused attempt must stay counted when
// the request that made it rolls back.

export type LimitWindow = { limit: number; windowMs: number };

// The limits of the dashboard's account flows and the playground, in one place.
export const limits = {
  // Strict per email: failed sign-ins (and password-reset requests) for one address.
  signInFailuresPerEmail: { limit: 10, windowMs: 15 * 60_000 },
  signUpsPerEmail: { limit: 10, windowMs: 15 * 60_000 },
  passwordResetsPerEmail: { limit: 5, windowMs: 15 * 60_000 },
  // Generous per IP address: offices and schools share one.
  accountAttemptsPerIp: { limit: 100, windowMs: 10 * 60_000 },
  playgroundRunsPerUser: { limit: 30, windowMs: 60_000 },
  // Invitation emails an organization sends an hour.
  invitationsPerOrganization: { limit: 50, windowMs: 60 * 60_000 },
} as const satisfies Record<string, LimitWindow>;

// Counter keys. Sign-up attempts, failed sign-ins and password-reset requests from one address
// share one counter: they are all ways to probe accounts.
export const limitKeys = {
  accountIp: (ip: string) => `account:ip:${ip}`,
  signInEmail: (email: string) => `signin:email:${email}`,
  signUpEmail: (email: string) => `signup:email:${email}`,
  resetEmail: (email: string) => `reset:email:${email}`,
  verificationUser: (userId: string) => `verify:user:${userId}`,
  playgroundUser: (userId: string) => `playground:user:${userId}`,
  inviteOrganization: (organizationId: string) => `invite:org:${organizationId}`,
};

export type LimitState = { hits: number; allowed: boolean; retryAfterSeconds: number; windowStartedAt: Date | null };

function stateOf(row: { hits: number; windowStartedAt: Date } | undefined, window: LimitWindow, now: Date): LimitState {
  if (!row || row.windowStartedAt.getTime() + window.windowMs <= now.getTime())
    return { hits: 0, allowed: true, retryAfterSeconds: 0, windowStartedAt: null };
  const retryAfterSeconds = Math.max(
    1,
    Math.ceil((row.windowStartedAt.getTime() + window.windowMs - now.getTime()) / 1000),
  );
  return { hits: row.hits, allowed: row.hits <= window.limit, retryAfterSeconds, windowStartedAt: row.windowStartedAt };
}

// Counts one hit against `key` (one statement: concurrent hits are all counted) and says whether it
// is within the limit.
export async function hitLimit(db: Db, key: string, window: LimitWindow, now = new Date()): Promise<LimitState> {
  // Raw SQL parameters go to the driver as they are: postgres-js takes no Date there, so timestamps
  // are sent as ISO text with a cast.
  const expired = sql`${new Date(now.getTime() - window.windowMs).toISOString()}::timestamptz`;
  const started = sql`${now.toISOString()}::timestamptz`;
  const t = rateLimits;
  const [row] = await db
    .insert(t)
    .values({ key, windowStartedAt: now, hits: 1 })
    .onConflictDoUpdate({
      target: t.key,
      set: {
        hits: sql`case when ${t.windowStartedAt} <= ${expired} then 1 else ${t.hits} + 1 end`,
        windowStartedAt: sql`case when ${t.windowStartedAt} <= ${expired} then ${started} else ${t.windowStartedAt} end`,
      },
    })
    .returning({ hits: t.hits, windowStartedAt: t.windowStartedAt });
  return stateOf(row, window, now);
}

// Takes back one hit of the same window (a sign-in that turned out to succeed is not a failure).
export async function refundHit(db: Db, key: string, hit: LimitState): Promise<void> {
  if (!hit.windowStartedAt) return;
  await db
    .update(rateLimits)
    .set({ hits: sql`greatest(${rateLimits.hits} - 1, 0)` })
    .where(and(eq(rateLimits.key, key), eq(rateLimits.windowStartedAt, hit.windowStartedAt)));
}

// "in 40 seconds", "in 38 minutes", "in 2 hours": the wait Retry-After gives, as a person reads it.
export function waitText(seconds: number): string {
  const plural = (n: number, unit: string) => `in ${n} ${unit}${n === 1 ? '' : 's'}`;
  if (seconds < 60) return plural(Math.max(1, Math.ceil(seconds)), 'second');
  if (seconds < 3600) return plural(Math.ceil(seconds / 60), 'minute');
  return plural(Math.ceil(seconds / 3600), 'hour');
}

export function tooManyAttempts(retryAfterSeconds: number, what = 'Too many attempts.'): AppError {
  return new AppError(
    'rate_limited',
    `${what} Try again ${waitText(retryAfterSeconds)}.`,
    { retryAfterSeconds },
    { 'retry-after': String(retryAfterSeconds) },
  );
}

// Throws 429 rate_limited (Retry-After) when the hit passes the limit.
export async function enforceLimit(db: Db, key: string, window: LimitWindow): Promise<void> {
  const state = await hitLimit(db, key, window);
  if (!state.allowed) throw tooManyAttempts(state.retryAfterSeconds);
}
