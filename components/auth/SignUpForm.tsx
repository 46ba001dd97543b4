'use client';

import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { signIn } from 'next-auth/react';
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Alert } from '@/components/ui/Alert';
import { Button } from '@/components/ui/Button';
import { Card } from '@/components/ui/Card';
import { Field, Input } from '@/components/ui/Field';
import { passwordProblem } from '@/lib/password-rules';
import { safeRedirectPath } from '@/lib/redirects';
import { useTRPC } from '@/lib/trpc/client';
import { formMessage, readAppError } from '@/lib/trpc/errors';
import { useFocusFirstInvalid } from '@/components/ui/useFocusFirstInvalid';

export function SignUpForm({ callbackUrl, initialEmail = '' }: { callbackUrl: string; initialEmail?: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [name, setName] = useState('');
  const [email, setEmail] = useState(initialEmail);
  const [password, setPassword] = useState('');
  const [signInFailed, setSignInFailed] = useState(false);
  const signUp = useMutation(trpc.account.signUp.mutationOptions());
  const [signingIn, setSigningIn] = useState(false);

  const error = readAppError(signUp.error);
  const fields = error?.fields ?? {};
  // The server stops at the first field it refuses (the email's format comes before the password
  // rules): a weak password is named at once too, by the same rules.
  const passwordError =
    fields.password ?? (fields.email && password ? (passwordProblem(password) ?? undefined) : undefined);

  const { formRef, submitted } = useFocusFirstInvalid();
  async function onSubmit(event: FormEvent) {
    event.preventDefault();
    submitted();
    setSignInFailed(false);
    signUp.mutate(
      { email, password, name: name.trim() || undefined },
      {
        onSuccess: async () => {
          setSigningIn(true);
          const result = await signIn('credentials', { email: email.trim(), password, redirect: false }).catch(
            () => null,
          );
          if (!result?.ok || result.error) {
            setSigningIn(false);
            setSignInFailed(true);
            return;
          }
          const target = safeRedirectPath(callbackUrl);
          router.replace(target === '/' ? '/organizations' : target);
          router.refresh();
        },
      },
    );
  }

  const signInHref = `/sign-in?${new URLSearchParams({ ...(email ? { email } : {}), ...(callbackUrl !== '/' ? { callbackUrl } : {}) }).toString()}`;
  const topMessage = formMessage(error, ['email', 'password', 'name']);

  return (
    <>
      <Card className="auth-card">
        <div className="auth-heading">
          <h1>Create your account</h1>
          <p className="muted">Start managing prompts with your team in minutes.</p>
        </div>
        {topMessage ? <Alert tone="error">{topMessage}</Alert> : null}
        {signInFailed ? (
          <Alert tone="warning" title="Your account is ready">
            We could not sign you in automatically. <Link href={signInHref}>Sign in</Link>
          </Alert>
        ) : null}
        <form ref={formRef} className="form" onSubmit={onSubmit} noValidate>
          <Field label="Name" error={fields.name} hint="Optional. Shown to people in your organizations.">
            <Input name="name" autoComplete="name" value={name} onChange={(e) => setName(e.target.value)} autoFocus />
          </Field>
          <Field label="Email" error={fields.email}>
            <Input
              type="email"
              name="email"
              autoComplete="email"
              value={email}
              onChange={(e) => setEmail(e.target.value)}
            />
          </Field>
          {error?.code === 'email_taken' ? (
            <p className="field-hint" style={{ marginTop: -8 }}>
              Already have an account? <Link href={signInHref}>Sign in instead</Link>
            </p>
          ) : null}
          <Field
            label="Password"
            error={passwordError}
            hint="At least 10 characters, mixing letters with digits or symbols."
          >
            <Input
              type="password"
              name="password"
              autoComplete="new-password"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
            />
          </Field>
          <Button type="submit" variant="primary" block loading={signUp.isPending || signingIn}>
            Create account
          </Button>
        </form>
      </Card>
      <p className="auth-switch">
        Already have an account? <Link href={signInHref}>Sign in</Link>
      </p>
    </>
  );
}
