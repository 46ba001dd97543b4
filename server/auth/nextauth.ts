import { eq } from 'drizzle-orm';
import { cookies, headers } from 'next/headers';
import { getServerSession, type NextAuthOptions } from 'next-auth';
import { getToken } from 'next-auth/jwt';
import Credentials from 'next-auth/providers/credentials';
import { getDb, type Db } from '@/db/client';
import { users } from '@/db/schema';
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

export const authOptions: NextAuthOptions = {
  secret: sessionSecret(),
  session: { strategy: 'jwt', maxAge: 30 * 24 * 60 * 60 },
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
      }
      return token;
    },
    session({ session, token }) {
      session.user = { id: token.sub ?? '', email: token.email ?? null, name: token.name ?? null };
      return session;
    },
  },
};

export async function getSessionUser(): Promise<{ id: string; email: string | null; name: string | null } | null> {
  const session = await getServerSession(authOptions);
  return session?.user?.id ? session.user : null;
}

// When the session's person signed in (ms). `iat` cannot tell: next-auth renews it on every refresh.
// A session issued before `authTime` existed predates any password reset, so it counts as 0.
async function sessionSignedInAt(): Promise<number> {
  const token = await getToken({
    req: { headers: await headers(), cookies: await cookies() } as never,
    secret: sessionSecret(),
  }).catch(() => null);
  return typeof token?.authTime === 'number' ? token.authTime : 0;
}

// A session of `userId` that began at `signedInAt` (ms) is refused once the account is gone or
// its `sessions_valid_after` (set by a password reset) is later.
export async function sessionStillValid(db: Db, userId: string, signedInAt: number): Promise<boolean> {
  const [row] = await db.select({ validAfter: users.sessionsValidAfter }).from(users).where(eq(users.id, userId));
  return Boolean(row) && (!row.validAfter || signedInAt >= row.validAfter.getTime());
}

// The dashboard actor of the current request, or null when signed out, when the account no longer
// exists, or when the session began before the account's `sessions_valid_after` (a password reset).
export async function getSessionActor(): Promise<Actor | null> {
  const user = await getSessionUser();
  if (!user) return null;
  if (!(await sessionStillValid(await getDb(), user.id, await sessionSignedInAt()))) return null;
  return { userId: user.id, clientId: 'dashboard', human: true };
}

// True when the session cookie is valid and its account still exists and accepts it; the sign-in
// page uses it so a stale cookie shows the form instead of bouncing between sign-in and the dashboard.
export async function hasLiveSession(): Promise<boolean> {
  return (await getSessionActor()) !== null;
}
