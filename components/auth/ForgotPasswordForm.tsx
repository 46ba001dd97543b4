'use client';

import Link from 'next/link';
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Alert } from '@/components/ui/Alert';
import { Button, ButtonLink } from '@/components/ui/Button';
import { Card } from '@/components/ui/Card';
import { Field, Input } from '@/components/ui/Field';
import { useTRPC } from '@/lib/trpc/client';
import { formMessage, readAppError } from '@/lib/trpc/errors';
import { AuthResult } from './AuthResult';

export function ForgotPasswordForm({ initialEmail }: { initialEmail: string }) {
  const trpc = useTRPC();
  const [email, setEmail] = useState(initialEmail);
  const [localError, setLocalError] = useState<string | null>(null);
  const request = useMutation(trpc.account.requestPasswordReset.mutationOptions());
  const error = readAppError(request.error);
  const topMessage =
    error?.code === 'rate_limited'
      ? 'Too many attempts. Wait a few minutes and try again.'
      : formMessage(error, ['email']);

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (!email.trim()) return setLocalError('Enter your email address.');
    setLocalError(null);
    request.mutate({ email: email.trim() });
  }

  const signInHref = `/sign-in${email.trim() ? `?email=${encodeURIComponent(email.trim())}` : ''}`;

  if (request.isSuccess) {
    return (
      <AuthResult
        tone="info"
        title="Check your email"
        takeFocus
        actions={
          <>
            <ButtonLink href={signInHref} variant="primary" block>
              Back to sign in
            </ButtonLink>
            <Button block onClick={() => request.reset()}>
              Use another address
            </Button>
          </>
        }
      >
        {request.data.message} The link works once and expires in 1 hour.
      </AuthResult>
    );
  }

  return (
    <>
      <Card className="auth-card">
        <div className="auth-heading">
          <h1>Reset your password</h1>
          <p className="muted">
            Enter the email address of your account and we will send you a link to choose a new password.
          </p>
        </div>
        {topMessage ? <Alert tone="error">{topMessage}</Alert> : null}
        <form className="form" onSubmit={onSubmit} noValidate>
          <Field label="Email" error={localError ?? error?.fields.email}>
            <Input
              type="email"
              name="email"
              autoComplete="email"
              value={email}
              onChange={(e) => setEmail(e.target.value)}
              autoFocus
            />
          </Field>
          <Button type="submit" variant="primary" block loading={request.isPending}>
            Send reset link
          </Button>
        </form>
      </Card>
      <p className="auth-switch">
        Remembered it? <Link href={signInHref}>Sign in</Link>
      </p>
    </>
  );
}
