'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { FormDialog } from '@/components/ui/FormDialog';
import { Field, Input } from '@/components/ui/Field';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';

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

  function onSubmit() {
    create.mutate({ name });
  }

  return (
    <FormDialog
      open={open}
      onClose={close}
      title="Create organization"
      description="Organizations hold your prompts, datasets and evaluations. You will be its admin."
      submitLabel="Create organization"
      pending={create.isPending}
      onSubmit={onSubmit}
      error={error}
      fieldNames={['name']}
    >
      <Field label="Organization name" error={error?.fields.name} hint="You can change it later in settings.">
        <Input
          name="name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          placeholder="Acme Inc."
          maxLength={200}
          autoFocus
        />
      </Field>
    </FormDialog>
  );
}
