'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { roleOptions } from '@/components/format';
import { Alert } from '@/components/ui/Alert';
import { Button } from '@/components/ui/Button';
import { Card, CardHeader } from '@/components/ui/Card';
import { Field, Input, Select } from '@/components/ui/Field';
import { PlusIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import { withArticle } from '@/lib/words';
import { formMessage, readAppError } from '@/lib/trpc/errors';
import { useFocusFirstInvalid } from '@/components/ui/useFocusFirstInvalid';

type Role = (typeof roleOptions)[number]['value'];

export function AddMemberForm({ organizationId }: { organizationId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('editor');
  const [added, setAdded] = useState<string | null>(null);
  const add = useMutation(
    trpc.members.add.mutationOptions({
      onSuccess: async (member) => {
        setAdded(member.email ?? email);
        setEmail('');
        await queryClient.invalidateQueries(trpc.members.pathFilter());
      },
    }),
  );
  const [invited, setInvited] = useState<string | null>(null);
  const invite = useMutation(
    trpc.members.invite.mutationOptions({
      onSuccess: async (invitation) => {
        add.reset();
        setInvited(invitation.email);
        setEmail('');
        await queryClient.invalidateQueries(trpc.members.invitations.queryFilter({ organizationId }));
      },
    }),
  );
  const error = readAppError(invite.error) ?? readAppError(add.error);
  // No account uses the address yet (or it is not verified): an emailed invitation reaches them.
  const canInvite = add.error && readAppError(add.error)?.code === 'not_found' && !invite.error && email.trim() !== '';

  const { formRef, submitted } = useFocusFirstInvalid();
  function onSubmit(event: FormEvent) {
    event.preventDefault();
    submitted();
    setAdded(null);
    setInvited(null);
    invite.reset();
    add.mutate({ organizationId, email, role });
  }

  return (
    <Card>
      <CardHeader
        title="Add a member"
        description="Add someone who already uses Promptloop, or invite a new teammate by email."
      />
      <form ref={formRef} className="card-body form" onSubmit={onSubmit} noValidate aria-label="Add a member">
        {formMessage(error, ['email', 'role']) ? (
          <Alert tone="error">{formMessage(error, ['email', 'role'])}</Alert>
        ) : null}
        {added ? <Alert tone="success">{added} now has access to this organization.</Alert> : null}
        {invited ? (
          <Alert tone="success">
            Invitation sent to {invited}. They join when they open the link and sign in with that address (within 7
            days).
          </Alert>
        ) : null}
        {canInvite ? (
          <Alert
            tone="info"
            title={`Invite ${email.trim()} by email?`}
            action={
              <Button
                size="sm"
                variant="primary"
                loading={invite.isPending}
                onClick={() => invite.mutate({ organizationId, email, role })}
              >
                Send invitation
              </Button>
            }
          >
            They get a link to create an account (or sign in) and join as {withArticle(role)}.
          </Alert>
        ) : null}
        <div className="form-row">
          <Field label="Email address" error={canInvite ? 'No account uses this email yet.' : error?.fields.email}>
            <Input
              type="email"
              name="email"
              autoComplete="off"
              placeholder="teammate@company.com"
              value={email}
              onChange={(e) => (setEmail(e.target.value), add.reset(), invite.reset())}
            />
          </Field>
          <Field label="Role" error={error?.fields.role} className="field-role">
            <Select name="role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
              {roleOptions.map((option) => (
                <option key={option.value} value={option.value}>
                  {option.label}
                </option>
              ))}
            </Select>
          </Field>
          <div className="form-row-action">
            <Button type="submit" variant="primary" icon={<PlusIcon size={14} />} loading={add.isPending}>
              Add member
            </Button>
          </div>
        </div>
      </form>
    </Card>
  );
}
