import { randomBytes } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { cookies, headers } from 'next/headers';
import { getServerSession, type NextAuthOptions } from 'next-auth';
import { getToken } from 'next-auth/jwt';
import Credentials from 'next-auth/providers/credentials';
import { getDb, type Db } from '@/db/client';
import { endedSessions, users } from '@/db/schema';
import { checkCredentials } from '@/server/account/service';
import type { Actor } from '@/server/context';
import { isAppError, isUnavailableError } from '@/server/errors';
import { stringProblem } from '@/server/input-hygiene';
import { log } from '@/server/log';
import { safeRedirectPathOn } from '@/lib/redirects';
import { clientIpFromHeaders } from '../credentials/client-ip';
import { rateLimitedSignInError } from './sign-in-status';
import { sessionSecret } from '../credentials/session-secret';

// next-auth 4 is CommonJS: a bundler's default import is its `default` export, Node's loader (the
// production server, where server/ is not bundled: docs/deploy.md) gives the whole module.exports.
const CredentialsProvider: typeof Credentials =
  (Credentials as unknown as { default?: typeof Credentials }).default ?? Credentials;

declare module 'next-auth' {
  interface Session {
    user: { id: string; email: string | null; name: string | null };
  }
}

// A dashboard session lasts 30 days from its sign-in, however often it is used: after that the
// person signs in again. The bound is what lets an ended session's record be forgotten (below).
export const sessionLifetimeMs = 30 * 24 * 3600_000;

export const authOptions: NextAuthOptions = {
  secret: sessionSecret(),
  session: { strategy: 'jwt', maxAge: sessionLifetimeMs / 1000 },
  pages: { signIn: '/sign-in', error: '/sign-in' },
  providers: [
    CredentialsProvider({
      id: 'credentials',
      name: 'Email and password',
      credentials: { email: { label: 'Email', type: 'email' }, password: { label: 'Password', type: 'password' } },
      // The thrown message reaches the form as `result.error`: `invalid_credentials` for an unknown
      // email and a wrong password alike, `rate_limited:<seconds>` over a limit (answered as 429).
      async authorize(credentials, req) {
        if (!credentials?.email || !credentials.password) throw new Error('invalid_credentials');
        // Unstorable or absurd input is a wrong credential too, answered before any query runs.
        if (
          credentials.email.length > 320 ||
          credentials.password.length > 1000 ||
          stringProblem(credentials.email) ||
          stringProblem(credentials.password)
        ) {
          throw new Error('invalid_credentials');
        }
        try {
          const result = await checkCredentials(await getDb(), credentials.email, credentials.password, {
            clientIp: clientIpFromHeaders(req?.headers),
          });
          if ('error' in result) throw new Error(result.error);
          return { id: result.profile.id, email: result.profile.email, name: result.profile.name };
        } catch (error) {
          if (isAppError(error) && error.code === 'rate_limited')
            throw rateLimitedSignInError(Number(error.details.retryAfterSeconds) || 60);
          if (error instanceof Error && error.message === 'invalid_credentials') throw error;
          // next-auth puts the message in the redirect URL: never a driver's text.
          const code = isUnavailableError(error) ? 'unavailable' : 'internal';
          log.error({ operation: 'auth.signIn', code, err: error }, 'sign-in failed');
          throw new Error(code);
        }
      },
    }),
  ],
  callbacks: {
    // Only same-origin paths; anything else lands on the home page.
    redirect({ url, baseUrl }) {
      return `${baseUrl}${safeRedirectPathOn(url, baseUrl)}`;
    },
    jwt({ token, user }) {
      if (user) {
        token.sub = user.id;
        // When the person signed in (ms): `iat` is renewed on every refresh, this is not.
        token.authTime = Date.now();
        // This session's own id: "Sign out" ends it by this id (endSession).
        token.sid = randomBytes(18).toString('base64url');
      }
      return token;
    },
    session({ session, token }) {
      session.user = { id: token.sub ?? '', email: token.email ?? null, name: token.name ?? null };
      // next-auth reports a sliding expiry (now + maxAge); the session ends 30 days after its sign-in.
      if (typeof token.authTime === 'number')
        session.expires = new Date(token.authTime + sessionLifetimeMs).toISOString();
      return session;
    },
  },
  events: {
    // "Sign out" ends this session on the server too, not only in this browser: a copy of its
    // cookie is refused from now on. When the record cannot be written, the browser is still signed
    // out and the failure is logged.
    async signOut({ token }) {
      try {
        await endSession(await getDb(), sessionClaims(token));
      } catch (error) {
        log.error({ operation: 'auth.signOut', err: error }, 'the session could not be ended on the server');
      }
    },
  },
};

// What a session cookie says about its session: who, when it began (ms; 0 for a session issued
// before `authTime` existed) and its id (null before `sid` existed).
export type SessionClaims = { userId: string | null; signedInAt: number; sessionId: string | null };

function sessionClaims(token: Record<string, unknown> | null | undefined): SessionClaims {
  return {
    userId: typeof token?.sub === 'string' ? token.sub : null,
    signedInAt: typeof token?.authTime === 'number' ? token.authTime : 0,
    sessionId: typeof token?.sid === 'string' ? token.sid : null,
  };
}

// Records the session as ended; kept until its lifetime would have ended it anyway.
export async function endSession(db: Db, claims: SessionClaims): Promise<void> {
  if (!claims.userId || !claims.sessionId) return;
  await db
    .insert(endedSessions)
    .values({
      sessionId: claims.sessionId,
      userId: claims.userId,
      expiresAt: new Date(Math.max(claims.signedInAt, 0) + sessionLifetimeMs),
    })
    .onConflictDoNothing();
}

export async function getSessionUser(): Promise<{ id: string; email: string | null; name: string | null } | null> {
  const session = await getServerSession(authOptions);
  return session?.user?.id ? session.user : null;
}

// The current request's session cookie, decoded (`iat` cannot tell when the session began: next-auth
// renews it on every refresh, so `authTime` does).
async function currentSessionClaims(): Promise<SessionClaims> {
  const token = await getToken({
    req: { headers: await headers(), cookies: await cookies() } as never,
    secret: sessionSecret(),
  }).catch(() => null);
  return sessionClaims(token);
}

// A session of `userId` is refused once the account is gone, when it began before the account's
// `sessions_valid_after` (set by a password reset or change), when it began more than the session
// lifetime ago, or when "Sign out" ended it. One statement.
export async function sessionStillValid(
  db: Db,
  userId: string,
  signedInAt: number,
  sessionId: string | null = null,
  now = Date.now(),
): Promise<boolean> {
  if (signedInAt <= now - sessionLifetimeMs) return false;
  const [row] = await db
    .select({
      validAfter: users.sessionsValidAfter,
      ended: sessionId
        ? sql<boolean>`exists (select 1 from ${endedSessions} where ${and(
            eq(endedSessions.sessionId, sessionId),
            eq(endedSessions.userId, userId),
          )})`
        : sql<boolean>`false`,
    })
    .from(users)
    .where(eq(users.id, userId));
  return Boolean(row) && !row.ended && (!row.validAfter || signedInAt >= row.validAfter.getTime());
}

// The dashboard actor of the current request, or null when signed out or when the session is no
// longer accepted (sessionStillValid).
export async function getSessionActor(): Promise<Actor | null> {
  const user = await getSessionUser();
  if (!user) return null;
  const claims = await currentSessionClaims();
  if (!(await sessionStillValid(await getDb(), user.id, claims.signedInAt, claims.sessionId))) return null;
  return { userId: user.id, clientId: 'dashboard', human: true };
}

// True when the session cookie is valid and its account still exists and accepts it; the sign-in
// page uses it so a stale cookie shows the form instead of bouncing between sign-in and the dashboard.
export async function hasLiveSession(): Promise<boolean> {
  return (await getSessionActor()) !== null;
}
