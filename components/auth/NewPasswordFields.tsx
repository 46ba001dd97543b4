'use client';

import { Field, Input } from '@/components/ui/Field';

type Props = {
  // The account's address, so a password manager saves the new password for the right account.
  email: string;
  password: string;
  confirm: string;
  onPassword: (value: string) => void;
  onConfirm: (value: string) => void;
  // The server's word on the new password, and the form's own when the two do not match.
  error?: string;
  mismatch: string | null;
  name?: string;
  autoFocus?: boolean;
};

// "New password" and "Confirm new password", as the reset page and the account page ask for them.
export function NewPasswordFields({
  email,
  password,
  confirm,
  onPassword,
  onConfirm,
  error,
  mismatch,
  name = 'password',
  autoFocus,
}: Props) {
  return (
    <>
      <input type="email" name="email" autoComplete="username" value={email} readOnly hidden />
      <Field label="New password" error={error} hint="At least 10 characters, mixing letters with digits or symbols.">
        <Input
          type="password"
          name={name}
          autoComplete="new-password"
          value={password}
          onChange={(e) => onPassword(e.target.value)}
          autoFocus={autoFocus}
        />
      </Field>
      <Field label="Confirm new password" error={mismatch ?? undefined}>
        <Input
          type="password"
          name="confirmPassword"
          autoComplete="new-password"
          value={confirm}
          onChange={(e) => onConfirm(e.target.value)}
        />
      </Field>
    </>
  );
}
