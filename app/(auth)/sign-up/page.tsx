import type { Metadata } from 'next';
import { redirect } from 'next/navigation';
import { SignUpForm } from '@/components/auth/SignUpForm';
import { safeRedirectPath } from '@/lib/redirects';
import { hasLiveSession } from '@/server/auth/nextauth';

export const metadata: Metadata = { title: 'Create your account' };

export default async function SignUpPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const params = await searchParams;
  const callbackUrl = safeRedirectPath(params.callbackUrl);
  if (await hasLiveSession()) redirect(callbackUrl);
  const email = typeof params.email === 'string' ? params.email.slice(0, 320) : '';
  return <SignUpForm callbackUrl={callbackUrl} initialEmail={email} />;
}
