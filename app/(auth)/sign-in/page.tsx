import type { Metadata } from 'next';
import { redirect } from 'next/navigation';
import { SignInForm } from '@/components/auth/SignInForm';
import { safeRedirectPath } from '@/lib/redirects';
import { hasLiveSession } from '@/server/auth/nextauth';

export const metadata: Metadata = { title: 'Sign in' };

export default async function SignInPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const params = await searchParams;
  const callbackUrl = safeRedirectPath(params.callbackUrl);
  if (await hasLiveSession()) redirect(callbackUrl);
  const email = typeof params.email === 'string' ? params.email : '';
  return <SignInForm callbackUrl={callbackUrl} initialEmail={email} />;
}
