import { eq } from 'drizzle-orm';
import { cookies, headers } from 'next/headers';
import { getServerSession, type NextAuthOptions } from 'next-auth';
import { getToken } from 'next-auth/jwt';
import CredentialsProvider from 'next-auth/providers/credentials';
import { getDb, type Db } from '@/db/client';
import { users } from '@/db/schema';
import { checkCredentials } from '@/server/account/service';
import type { Actor } from '@/server/context';
import { sessionSecret } from './session-secret';

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
      async authorize(credentials) {
        if (!credentials?.email || !credentials.password) throw new Error('unknown_email');
        const result = await checkCredentials(await getDb(), credentials.email, credentials.password);
        if ('error' in result) throw new Error(result.error);
        return { id: result.profile.id, email: result.profile.email, name: result.profile.name };
      },
    }),
  ],
  callbacks: {
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
  const token = await getToken({ req: { headers: await headers(), cookies: await cookies() } as never, secret: sessionSecret() }).catch(() => null);
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
