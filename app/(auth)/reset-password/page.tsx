import type { Metadata } from 'next';
import { AuthResult } from '@/components/auth/AuthResult';
import { ResetPasswordForm } from '@/components/auth/ResetPasswordForm';
import { ButtonLink } from '@/components/ui/Button';
import { getDb } from '@/db/client';
import { checkResetLink } from '@/server/account/password-reset';
import { isAppError } from '@/server/errors';

export const metadata: Metadata = { title: 'Choose a new password' };
export const dynamic = 'force-dynamic';

// Checks the emailed link first, so an expired or used one never shows a form that cannot work.
export default async function ResetPasswordPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const params = await searchParams;
  const token = typeof params.token === 'string' ? params.token : '';
  try {
    const link = await checkResetLink({ db: await getDb() }, token);
    return <ResetPasswordForm token={token} email={link.email} />;
  } catch (error) {
    if (!isAppError(error)) throw error;
    const state = error.details.state;
    const title =
      state === 'link_expired'
        ? 'This link has expired'
        : state === 'link_used'
          ? 'This link was already used'
          : 'This link is not valid';
    return (
      <AuthResult
        tone="warning"
        title={title}
        actions={
          <ButtonLink href="/forgot-password" variant="primary" block>
            Send a new link
          </ButtonLink>
        }
      >
        Reset links work once and expire after 1 hour, and a newer link replaces older ones. Ask for a new one.
      </AuthResult>
    );
  }
}
