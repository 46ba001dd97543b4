import NextAuth from 'next-auth';
import { authOptions } from '@/server/auth/nextauth';
import { withBoundedBody } from '@/server/api/next-auth-body';
import { withSignInStatus } from '@/server/auth/sign-in-status';

const handler = withBoundedBody(withSignInStatus(NextAuth(authOptions)));

export { handler as GET, handler as POST };
