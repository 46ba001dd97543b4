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

export function CreatePromptDialog({ organizationId, open, onClose }: { organizationId: string; open: boolean; onClose: () => void }) {
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

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    create.mutate({ organizationId, name });
  }

  const formId = 'create-prompt-form';
  return (
    <Dialog
      open={open}
      onClose={close}
      title="Create prompt"
      description="A prompt starts in setup: write a draft, add test cases, then run its baseline evaluation."
      footer={
        <>
          <Button onClick={close} disabled={create.isPending}>
            Cancel
          </Button>
          <Button type="submit" form={formId} variant="primary" loading={create.isPending}>
            Create prompt
          </Button>
        </>
      }
    >
      <form id={formId} className="form" onSubmit={onSubmit} noValidate style={{ marginTop: 12 }}>
        {formMessage(error, ['name']) ? <Alert tone="error">{formMessage(error, ['name'])}</Alert> : null}
        <Field label="Prompt name" error={error?.fields.name} hint="For example “Support reply” or “Ticket classifier”. You can rename it later.">
          <Input name="name" value={name} onChange={(e) => setName(e.target.value)} placeholder="Support reply" maxLength={300} autoFocus />
        </Field>
      </form>
    </Dialog>
  );
}
