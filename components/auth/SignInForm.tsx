'use client';

import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { signIn } from 'next-auth/react';
import { useState, type FormEvent } from 'react';
import { Alert } from '@/components/ui/Alert';
import { Button } from '@/components/ui/Button';
import { Card } from '@/components/ui/Card';
import { Field, Input } from '@/components/ui/Field';
import { safeRedirectPath } from '@/lib/redirects';

type Errors = { email?: string; password?: string; form?: string };

// next-auth passes the provider's error code through. An unknown email and a wrong password are
// one answer on purpose, so the form never confirms which accounts exist.
function errorsFor(code: string | null | undefined): Errors {
  if (code === 'invalid_credentials') return { form: 'Email or password is not right.' };
  if (code?.startsWith('rate_limited')) return { form: 'Too many attempts. Wait a few minutes and try again.' };
  return { form: 'We could not sign you in right now. Try again in a moment.' };
}

export function SignInForm({ callbackUrl, initialEmail }: { callbackUrl: string; initialEmail: string }) {
  const router = useRouter();
  const [email, setEmail] = useState(initialEmail);
  const [password, setPassword] = useState('');
  const [errors, setErrors] = useState<Errors>({});
  const [pending, setPending] = useState(false);

  async function onSubmit(event: FormEvent) {
    event.preventDefault();
    const next: Errors = {};
    if (!email.trim()) next.email = 'Enter your email address.';
    if (!password) next.password = 'Enter your password.';
    setErrors(next);
    if (next.email || next.password) return;
    setPending(true);
    try {
      const result = await signIn('credentials', { email: email.trim(), password, redirect: false });
      if (!result || result.error || !result.ok) {
        setErrors(errorsFor(result?.error));
        setPending(false);
        return;
      }
      router.replace(safeRedirectPath(callbackUrl));
      router.refresh();
    } catch {
      setErrors({ form: 'Could not reach the server. Check your connection and try again.' });
      setPending(false);
    }
  }

  const signUpHref = callbackUrl === '/' ? '/sign-up' : `/sign-up?callbackUrl=${encodeURIComponent(callbackUrl)}`;

  return (
    <>
      <Card className="auth-card">
        <div className="auth-heading">
          <h1>Sign in</h1>
          <p className="muted">Welcome back. Sign in to manage your prompts.</p>
        </div>
        <form className="form" onSubmit={onSubmit} noValidate>
          <Field label="Email" error={errors.email}>
            <Input
              type="email"
              name="email"
              autoComplete="email"
              value={email}
              onChange={(e) => setEmail(e.target.value)}
              autoFocus={!initialEmail}
            />
          </Field>
          <Field label="Password" error={errors.password}>
            <Input
              type="password"
              name="password"
              autoComplete="current-password"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              autoFocus={Boolean(initialEmail)}
            />
          </Field>
          <p className="field-hint" style={{ marginTop: -8, textAlign: 'right' }}>
            <Link href={`/forgot-password${email.trim() ? `?email=${encodeURIComponent(email.trim())}` : ''}`}>
              Forgot password?
            </Link>
          </p>
          <Button type="submit" variant="primary" block loading={pending}>
            Sign in
          </Button>
        </form>
        {errors.form ? <Alert tone="error">{errors.form}</Alert> : null}
      </Card>
      <p className="auth-switch">
        New to Promptloop? <Link href={signUpHref}>Create an account</Link>
      </p>
    </>
  );
}
