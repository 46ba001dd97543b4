'use client';

import Link from 'next/link';
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Alert } from '@/components/ui/Alert';
import { Button, ButtonLink } from '@/components/ui/Button';
import { Card } from '@/components/ui/Card';
import { useTRPC } from '@/lib/trpc/client';
import { formMessage, readAppError } from '@/lib/trpc/errors';
import { AuthResult } from './AuthResult';
import { NewPasswordFields } from './NewPasswordFields';
import { useFocusFirstInvalid } from '@/components/ui/useFocusFirstInvalid';

export function ResetPasswordForm({ token, email }: { token: string; email: string }) {
  const trpc = useTRPC();
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [mismatch, setMismatch] = useState<string | null>(null);
  // Typed into since the server's answer: its "Choose a new password." is stale once the field holds a value.
  const [edited, setEdited] = useState(false);
  const reset = useMutation(trpc.account.resetPassword.mutationOptions({ onMutate: () => setEdited(false) }));
  const { formRef, submitted } = useFocusFirstInvalid();
  const error = readAppError(reset.error);
  const linkProblem = error?.code === 'invalid_state';

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    submitted();
    if (password && password !== confirm) return setMismatch('The two passwords do not match.');
    setMismatch(null);
    reset.mutate({ token, password });
  }

  const signInHref = `/sign-in?email=${encodeURIComponent(email)}`;

  if (reset.isSuccess) {
    return (
      <AuthResult
        tone="success"
        title="Your password was changed"
        actions={
          <ButtonLink href={signInHref} variant="primary" block>
            Sign in
          </ButtonLink>
        }
      >
        Sign in with your new password. Sessions that were open on other browsers have been signed out.
      </AuthResult>
    );
  }

  if (linkProblem) {
    return (
      <AuthResult
        tone="warning"
        title="This link can no longer be used"
        actions={
          <ButtonLink href={`/forgot-password?email=${encodeURIComponent(email)}`} variant="primary" block>
            Send a new link
          </ButtonLink>
        }
      >
        {error.message} Reset links work once and expire after 1 hour.
      </AuthResult>
    );
  }

  const topMessage = formMessage(error, ['password']);
  return (
    <>
      <Card className="auth-card">
        <div className="auth-heading">
          <h1>Choose a new password</h1>
          <p className="muted">
            For <strong style={{ color: 'var(--text)' }}>{email}</strong>
          </p>
        </div>
        {topMessage ? <Alert tone="error">{topMessage}</Alert> : null}
        <form ref={formRef} className="form" onSubmit={onSubmit} noValidate>
          <NewPasswordFields
            email={email}
            password={password}
            confirm={confirm}
            onPassword={(value) => (setPassword(value), setEdited(true))}
            onConfirm={setConfirm}
            error={password && edited ? undefined : error?.fields.password}
            mismatch={mismatch}
            autoFocus
          />
          <Button type="submit" variant="primary" block loading={reset.isPending}>
            Set new password
          </Button>
        </form>
      </Card>
      <p className="auth-switch">
        <Link href={signInHref}>Back to sign in</Link>
      </p>
    </>
  );
}
