'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { signIn } from 'next-auth/react';
import { useEffect, useState, type FormEvent } from 'react';
import { Alert } from '@/components/ui/Alert';
import { Button } from '@/components/ui/Button';
import { Card, CardBody, CardFooter, CardHeader } from '@/components/ui/Card';
import { Field, Input } from '@/components/ui/Field';
import { useTRPC } from '@/lib/trpc/client';
import { formMessage, readAppError } from '@/lib/trpc/errors';
import { NewPasswordFields } from '@/components/auth/NewPasswordFields';
import { useFocusFirstInvalid } from '@/components/ui/useFocusFirstInvalid';

// The display name shown to teammates (members, audit log); empty shows the address instead.
export function NameForm({ current }: { current: string | null }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState(current ?? '');
  const [saved, setSaved] = useState<string | null>(null);
  useEffect(() => setName(current ?? ''), [current]);
  const rename = useMutation(
    trpc.account.setName.mutationOptions({
      onSuccess: (settings) => {
        setSaved(settings.name ? 'Name saved.' : 'Name cleared.');
        return queryClient.invalidateQueries(trpc.account.pathFilter());
      },
    }),
  );
  const error = readAppError(rename.error);
  const topMessage = formMessage(error, ['name']);

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    setSaved(null);
    rename.mutate({ name });
  }

  return (
    <Card>
      <form onSubmit={onSubmit} noValidate>
        <CardHeader title="Name" description="Shown to your teammates. Leave it empty to show your email address." />
        <CardBody className="form">
          {topMessage ? <Alert tone="error">{topMessage}</Alert> : null}
          <Field label="Display name" error={error?.fields.name}>
            <Input
              name="name"
              autoComplete="name"
              value={name}
              maxLength={160}
              onChange={(e) => (setName(e.target.value), setSaved(null))}
            />
          </Field>
        </CardBody>
        <CardFooter>
          <span className="muted" role="status">
            {saved}
          </span>
          <Button type="submit" variant="primary" loading={rename.isPending} disabled={name.trim() === (current ?? '')}>
            Save name
          </Button>
        </CardFooter>
      </form>
    </Card>
  );
}

// A new password needs the current one. The change signs out every browser, so this one signs in
// again with the new password straight away.
export function PasswordForm({ email }: { email: string }) {
  const trpc = useTRPC();
  const [currentPassword, setCurrentPassword] = useState('');
  const [newPassword, setNewPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [mismatch, setMismatch] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  // Fields typed into since the server's answer: its errors about them ("Enter your current
  // password.") are stale once they hold a value, even while the form's own mismatch check stops the submit.
  const [edited, setEdited] = useState<string[]>([]);
  const markEdited = (field: string) => setEdited((fields) => (fields.includes(field) ? fields : [...fields, field]));
  const change = useMutation(
    trpc.account.changePassword.mutationOptions({
      onMutate: () => setEdited([]),
      onSuccess: async (_result, input) => {
        const again = await signIn('credentials', { email, password: input.newPassword, redirect: false });
        if (!again?.ok) {
          window.location.assign(`/sign-in?email=${encodeURIComponent(email)}`);
          return;
        }
        setCurrentPassword('');
        setNewPassword('');
        setConfirm('');
        setDone(true);
      },
    }),
  );
  const error = readAppError(change.error);
  const topMessage =
    error?.code === 'rate_limited'
      ? 'Too many wrong passwords. Wait a few minutes and try again.'
      : formMessage(error, ['currentPassword', 'newPassword']);

  const fieldError = (field: 'currentPassword' | 'newPassword', value: string) =>
    value && edited.includes(field) ? undefined : error?.fields[field];
  const { formRef, submitted } = useFocusFirstInvalid();

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    submitted();
    setDone(false);
    if (newPassword && newPassword !== confirm) return setMismatch('The two passwords do not match.');
    setMismatch(null);
    change.mutate({ currentPassword, newPassword });
  }

  return (
    <Card>
      <form ref={formRef} onSubmit={onSubmit} noValidate>
        <CardHeader
          title="Password"
          description="Changing it signs you out on every other browser. CLI and MCP sign-ins stay until you revoke them under Authorized applications."
        />
        <CardBody className="form">
          {topMessage ? <Alert tone="error">{topMessage}</Alert> : null}
          <Field label="Current password" error={fieldError('currentPassword', currentPassword)}>
            <Input
              type="password"
              name="currentPassword"
              autoComplete="current-password"
              value={currentPassword}
              onChange={(e) => (setCurrentPassword(e.target.value), markEdited('currentPassword'))}
            />
          </Field>
          <NewPasswordFields
            email={email}
            password={newPassword}
            confirm={confirm}
            onPassword={(value) => (setNewPassword(value), markEdited('newPassword'))}
            onConfirm={setConfirm}
            error={fieldError('newPassword', newPassword)}
            mismatch={mismatch}
            name="newPassword"
          />
        </CardBody>
        <CardFooter>
          <span className="muted" role="status">
            {done ? 'Password changed. Other browsers were signed out.' : null}
          </span>
          <Button type="submit" variant="primary" loading={change.isPending}>
            Change password
          </Button>
        </CardFooter>
      </form>
    </Card>
  );
}
