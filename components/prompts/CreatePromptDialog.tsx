'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useEffect, useState } from 'react';
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
  const sameName = useSameNamedPrompt(organizationId, open ? name : '');
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
        hint={
          sameName
            ? `A prompt named “${sameName.name}” already exists${sameName.archived ? ' (archived)' : ''}. You can still create another; they are told apart by their ids.`
            : 'For example “Support reply” or “Ticket classifier”. You can rename it later.'
        }
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

/** The first prompt of the organization whose name equals `name` (ignoring case), looked up once typing pauses. */
function useSameNamedPrompt(organizationId: string, name: string) {
  const trpc = useTRPC();
  const wanted = name.trim();
  const [settled, setSettled] = useState('');
  useEffect(() => {
    const timer = setTimeout(() => setSettled(wanted), 300);
    return () => clearTimeout(timer);
  }, [wanted]);
  const found = useQuery(
    trpc.prompts.list.queryOptions(
      { organizationId, limit: 25, search: settled },
      { enabled: settled.length > 0 && settled.length <= 200 },
    ),
  );
  if (!settled || settled !== wanted) return null;
  const match = found.data?.items.find((prompt) => prompt.name.toLowerCase() === settled.toLowerCase());
  return match ? { name: match.name, archived: match.archivedAt !== null } : null;
}
