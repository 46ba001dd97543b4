import NextAuth from 'next-auth';
import { authOptions } from '@/server/auth/nextauth';
import { withSignInStatus } from '@/server/auth/sign-in-status';

const handler = withSignInStatus(NextAuth(authOptions));

export { handler as GET, handler as POST };
