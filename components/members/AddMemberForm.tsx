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
import { formMessage, readAppError } from '@/lib/trpc/errors';

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
  const error = readAppError(add.error);

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    setAdded(null);
    add.mutate({ organizationId, email, role });
  }

  return (
    <Card>
      <CardHeader
        title="Add a member"
        description="They need a Promptloop account first: ask them to sign up, then add them by email."
      />
      <form className="card-body form" onSubmit={onSubmit} noValidate aria-label="Add a member">
        {formMessage(error, ['email', 'role']) ? (
          <Alert tone="error">{formMessage(error, ['email', 'role'])}</Alert>
        ) : null}
        {added ? <Alert tone="success">{added} now has access to this organization.</Alert> : null}
        <div className="form-row">
          <Field label="Email address" error={error?.fields.email}>
            <Input
              type="email"
              name="email"
              autoComplete="off"
              placeholder="teammate@company.com"
              value={email}
              onChange={(e) => setEmail(e.target.value)}
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
