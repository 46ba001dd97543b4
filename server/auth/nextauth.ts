import { getServerSession, type NextAuthOptions } from 'next-auth';
import CredentialsProvider from 'next-auth/providers/credentials';
import { getDb } from '@/db/client';
import { checkCredentials, getProfile } from '@/server/account/service';
import type { Actor } from '@/server/context';
import { isAppError } from '@/server/errors';
import { safeRedirectPathOn } from '@/lib/redirects';
import { clientIpFromHeaders } from './client-ip';
import { rateLimitedSignInError } from './sign-in-status';
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
      // The thrown message reaches the form as `result.error`: `invalid_credentials` for an unknown
      // email and a wrong password alike, `rate_limited:<seconds>` over a limit (answered as 429).
      async authorize(credentials, req) {
        if (!credentials?.email || !credentials.password) throw new Error('invalid_credentials');
        try {
          const result = await checkCredentials(await getDb(), credentials.email, credentials.password, { clientIp: clientIpFromHeaders(req?.headers) });
          if ('error' in result) throw new Error(result.error);
          return { id: result.profile.id, email: result.profile.email, name: result.profile.name };
        } catch (error) {
          if (isAppError(error) && error.code === 'rate_limited') throw rateLimitedSignInError(Number(error.details.retryAfterSeconds) || 60);
          throw error;
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
      if (user) token.sub = user.id;
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

// The dashboard actor of the current request, or null when signed out.
export async function getSessionActor(): Promise<Actor | null> {
  const user = await getSessionUser();
  return user ? { userId: user.id, clientId: 'dashboard', human: true } : null;
}

// True when the session cookie is valid and its account still exists; the sign-in page uses it so
// a stale cookie shows the form instead of bouncing between sign-in and the dashboard.
export async function hasLiveSession(): Promise<boolean> {
  const actor = await getSessionActor();
  if (!actor) return false;
  return getProfile({ db: await getDb(), actor }).then(
    () => true,
    () => false,
  );
}
