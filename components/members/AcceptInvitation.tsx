'use client';

import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { signOut } from 'next-auth/react';
import { useState } from 'react';
import { AuthResult } from '@/components/auth/AuthResult';
import { Alert } from '@/components/ui/Alert';
import { Button, ButtonLink } from '@/components/ui/Button';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import { withArticle } from '@/lib/words';

type Props = {
  token: string;
  organization: string;
  email: string;
  role: string;
  // The signed-in account's address; null when signed out.
  signedInAs: string | null;
  signUpHref: string;
  signInHref: string;
};

export function AcceptInvitation({ token, organization, email, role, signedInAs, signUpHref, signInHref }: Props) {
  const trpc = useTRPC();
  const router = useRouter();
  const [leaving, setLeaving] = useState(false);
  const accept = useMutation(
    trpc.members.acceptInvitation.mutationOptions({
      onSuccess: (joined) => router.replace(`/organizations/${joined.organizationId}`),
    }),
  );
  const error = readAppError(accept.error);
  const invited = (
    <>
      You were invited to join <strong style={{ color: 'var(--text)' }}>{organization}</strong> as {withArticle(role)},
      as <strong style={{ color: 'var(--text)' }}>{email}</strong>.
    </>
  );

  if (signedInAs === null) {
    return (
      <AuthResult
        tone="info"
        title={`Join ${organization}`}
        actions={
          <>
            <ButtonLink href={signUpHref} variant="primary" block>
              Create an account
            </ButtonLink>
            <ButtonLink href={signInHref} block>
              I have an account: sign in
            </ButtonLink>
          </>
        }
      >
        {invited} Create an account or sign in with that address to accept.
      </AuthResult>
    );
  }

  if (signedInAs !== email) {
    return (
      <AuthResult
        tone="warning"
        title="Sign in with the invited address"
        actions={
          <Button
            variant="primary"
            block
            loading={leaving}
            onClick={() => {
              setLeaving(true);
              void signOut({ callbackUrl: signInHref });
            }}
          >
            Sign out and sign in as {email}
          </Button>
        }
      >
        {invited} You are signed in as {signedInAs || 'an account without an email address'}.
      </AuthResult>
    );
  }

  return (
    <>
      <AuthResult
        tone="info"
        title={`Join ${organization}`}
        actions={
          <Button variant="primary" block loading={accept.isPending} onClick={() => accept.mutate({ token })}>
            Accept invitation
          </Button>
        }
      >
        {invited}
      </AuthResult>
      {error ? <Alert tone="error">{error.message}</Alert> : null}
    </>
  );
}
