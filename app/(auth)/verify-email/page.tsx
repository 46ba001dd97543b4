import type { Metadata } from 'next';
import { AuthResult } from '@/components/auth/AuthResult';
import { ResendVerificationButton } from '@/components/auth/ResendVerificationButton';
import { ButtonLink } from '@/components/ui/Button';
import { getDb } from '@/db/client';
import { getEmailStatus, verifyEmail } from '@/server/account/email-verification';
import { getSessionActor } from '@/server/auth/nextauth';
import { runInTransaction } from '@/server/context';
import { isAppError } from '@/server/errors';

export const metadata: Metadata = { title: 'Confirm your email' };
export const dynamic = 'force-dynamic';

// Opening the emailed link confirms the address (once) and says what happened.
export default async function VerifyEmailPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const params = await searchParams;
  const token = typeof params.token === 'string' ? params.token : '';
  const db = await getDb();
  let verified: string | null = null;
  let state = 'link_invalid';
  try {
    // This page is the edge here: it owns the transaction of the one write.
    verified = (await runInTransaction(db, (tx, afterCommit) => verifyEmail({ db: tx, afterCommit }, token))).email;
  } catch (error) {
    if (!isAppError(error)) throw error;
    state = typeof error.details.state === 'string' ? error.details.state : state;
  }
  const actor = await getSessionActor();

  if (verified) {
    return (
      <AuthResult
        tone="success"
        title="Email address confirmed"
        actions={
          <ButtonLink
            href={actor ? '/organizations' : `/sign-in?email=${encodeURIComponent(verified)}`}
            variant="primary"
            block
          >
            {actor ? 'Continue to Promptloop' : 'Sign in'}
          </ButtonLink>
        }
      >
        <strong style={{ color: 'var(--text)' }}>{verified}</strong> is confirmed. Teammates can now add you to their
        organizations.
      </AuthResult>
    );
  }

  const status = actor ? await getEmailStatus({ db, actor }) : null;
  if (status?.verified) {
    return (
      <AuthResult
        tone="success"
        title="Your email is already confirmed"
        actions={
          <ButtonLink href="/organizations" variant="primary" block>
            Continue to Promptloop
          </ButtonLink>
        }
      >
        <strong style={{ color: 'var(--text)' }}>{status.email}</strong> is confirmed. There is nothing else to do.
      </AuthResult>
    );
  }
  const problem =
    state === 'link_expired'
      ? 'This link has expired'
      : state === 'link_used'
        ? 'This link was already used'
        : 'This link is not valid';
  return (
    <AuthResult
      tone="warning"
      title={problem}
      actions={
        actor ? (
          <div className="auth-result">
            <ResendVerificationButton size="md" variant="primary" />
          </div>
        ) : (
          <ButtonLink href="/sign-in?callbackUrl=%2Faccount" variant="primary" block>
            Sign in to get a new link
          </ButtonLink>
        )
      }
    >
      {actor
        ? 'Confirmation links work once and expire after 24 hours. Send yourself a new one.'
        : 'Confirmation links work once and expire after 24 hours. Sign in, then send yourself a new one from your account page.'}
    </AuthResult>
  );
}
