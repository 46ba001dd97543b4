'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { FormDialog } from '@/components/ui/FormDialog';
import { Field, Input } from '@/components/ui/Field';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';

export function CreatePromptDialog({
  organizationId,
  open,
  onClose,
}: {
  organizationId: string;
  open: boolean;
  onClose: () => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const router = useRouter();
  const [name, setName] = useState('');
  const create = useMutation(
    trpc.prompts.create.mutationOptions({
      onSuccess: async (prompt) => {
        await queryClient.invalidateQueries(trpc.prompts.list.pathFilter());
        router.push(`/organizations/${organizationId}/prompts/${prompt.id}`);
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
    create.mutate({ organizationId, name });
  }

  return (
    <FormDialog
      open={open}
      onClose={close}
      title="Create prompt"
      description="A prompt starts in setup: write a draft, add test cases, then run its baseline evaluation."
      submitLabel="Create prompt"
      pending={create.isPending}
      onSubmit={onSubmit}
      error={error}
      fieldNames={['name']}
    >
      <Field
        label="Prompt name"
        error={error?.fields.name}
        hint="For example “Support reply” or “Ticket classifier”. You can rename it later."
      >
        <Input
          name="name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          placeholder="Support reply"
          maxLength={300}
          autoFocus
        />
      </Field>
    </FormDialog>
  );
}
