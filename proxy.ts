import { getToken } from 'next-auth/jwt';
import { NextResponse, type NextRequest } from 'next/server';
import { sessionSecret } from '@/server/credentials/session-secret';
import { config as appConfig } from '@/server/config';
import { safeRedirectPath } from '@/lib/redirects';

// Signed-out requests for dashboard pages get an HTTP redirect to sign-in that remembers where
// they were going. The dashboard layout checks the session again (and that the account exists).
export async function proxy(request: NextRequest) {
  const token = await getToken({ req: request, secret: sessionSecret() });
  if (token?.sub) return NextResponse.next();
  const signIn = new URL('/sign-in', appConfig().appUrl);
  signIn.searchParams.set('callbackUrl', safeRedirectPath(`${request.nextUrl.pathname}${request.nextUrl.search}`));
  return NextResponse.redirect(signIn);
}

export const config = {
  matcher: ['/organizations/:path*', '/account/:path*'],
};
