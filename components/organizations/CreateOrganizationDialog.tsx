'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState, type FormEvent } from 'react';
import { Alert } from '@/components/ui/Alert';
import { Button } from '@/components/ui/Button';
import { Dialog } from '@/components/ui/Dialog';
import { Field, Input } from '@/components/ui/Field';
import { useTRPC } from '@/lib/trpc/client';
import { formMessage, readAppError } from '@/lib/trpc/errors';

export function CreateOrganizationDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const router = useRouter();
  const [name, setName] = useState('');
  const create = useMutation(
    trpc.organizations.create.mutationOptions({
      onSuccess: async (organization) => {
        await Promise.all([
          queryClient.invalidateQueries(trpc.organizations.list.pathFilter()),
          queryClient.invalidateQueries(trpc.account.pathFilter()),
        ]);
        router.push(`/organizations/${organization.id}`);
      },
    }),
  );
  const error = readAppError(create.error);

  function close() {
    if (create.isPending) return;
    setName('');
    create.reset();
    onClose();
  }

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    create.mutate({ name });
  }

  const formId = 'create-organization-form';
  return (
    <Dialog
      open={open}
      onClose={close}
      title="Create organization"
      description="Organizations hold your prompts, datasets and evaluations. You will be its admin."
      footer={
        <>
          <Button onClick={close} disabled={create.isPending}>
            Cancel
          </Button>
          <Button type="submit" form={formId} variant="primary" loading={create.isPending}>
            Create organization
          </Button>
        </>
      }
    >
      <form id={formId} className="form" onSubmit={onSubmit} noValidate style={{ marginTop: 12 }}>
        {formMessage(error, ['name']) ? <Alert tone="error">{formMessage(error, ['name'])}</Alert> : null}
        <Field label="Organization name" error={error?.fields.name} hint="You can change it later in settings.">
          <Input name="name" value={name} onChange={(e) => setName(e.target.value)} placeholder="Acme Inc." maxLength={200} autoFocus />
        </Field>
      </form>
    </Dialog>
  );
}
