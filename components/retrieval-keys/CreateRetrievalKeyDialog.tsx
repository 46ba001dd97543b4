'use client';

import { FormDialog } from '@/components/ui/FormDialog';
import { Field, Input } from '@/components/ui/Field';
import { useCreateDialog } from '@/components/ui/useCreateDialog';
import { useTRPC } from '@/lib/trpc/client';
import type { CreatedRetrievalKey } from '@/server/keys/schemas';

export function CreateRetrievalKeyDialog({
  organizationId,
  promptId,
  open,
  onClose,
  onCreated,
}: {
  organizationId: string;
  promptId: string;
  open: boolean;
  onClose: () => void;
  onCreated: (created: CreatedRetrievalKey) => void;
}) {
  const trpc = useTRPC();
  const {
    values: name,
    setValues: setName,
    create,
    error,
    close,
  } = useCreateDialog('', trpc.retrievalKeys.create.mutationOptions(), trpc.retrievalKeys.pathFilter(), {
    onCreated,
    onClose,
  });

  return (
    <FormDialog
      open={open}
      onClose={close}
      title="New retrieval key"
      description="A read-only key that fetches this prompt only. Its secret is shown once."
      submitLabel="Create key"
      pending={create.isPending}
      onSubmit={() => create.mutate({ organizationId, promptId, name })}
      error={error}
      fieldNames={['name']}
    >
      <Field label="Key name" error={error?.fields.name} hint="Where the key is used, e.g. “Support bot on Vercel”.">
        <Input name="name" value={name} onChange={(event) => setName(event.target.value)} maxLength={120} autoFocus />
      </Field>
    </FormDialog>
  );
}
