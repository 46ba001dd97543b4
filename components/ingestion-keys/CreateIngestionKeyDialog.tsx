'use client';

import { FormDialog } from '@/components/ui/FormDialog';
import { Field, Input } from '@/components/ui/Field';
import { useCreateDialog, type CreateDialogProps } from '@/components/ui/useCreateDialog';
import { useTRPC } from '@/lib/trpc/client';

import type { CreatedIngestionKey as Created } from '@/server/keys/schemas';
const empty = { name: '', application: '', environment: 'production' };

export function CreateIngestionKeyDialog({ organizationId, open, onClose, onCreated }: CreateDialogProps<Created>) {
  const trpc = useTRPC();
  const { values, setValues, create, error, close } = useCreateDialog(
    empty,
    trpc.ingestionKeys.create.mutationOptions(),
    trpc.ingestionKeys.pathFilter(),
    { onCreated, onClose },
  );
  const fieldNames = ['name', 'application', 'environment'];

  function onSubmit() {
    create.mutate({ organizationId, ...values });
  }

  const set = (field: keyof typeof empty) => (event: { target: { value: string } }) =>
    setValues((v) => ({ ...v, [field]: event.target.value }));
  return (
    <FormDialog
      open={open}
      onClose={close}
      title="New ingestion key"
      description="A key sends traces for one application and environment. Its secret is shown once."
      submitLabel="Create key"
      pending={create.isPending}
      onSubmit={onSubmit}
      error={error}
      fieldNames={fieldNames}
    >
      <Field label="Key name" error={error?.fields.name} hint="Where the key is used, e.g. “Checkout API on Fly”.">
        <Input name="name" value={values.name} onChange={set('name')} maxLength={120} autoFocus />
      </Field>
      <Field label="Application" error={error?.fields.application} hint="Stored with every span sent with this key.">
        <Input
          name="application"
          value={values.application}
          onChange={set('application')}
          placeholder="checkout"
          maxLength={120}
        />
      </Field>
      <Field label="Environment" error={error?.fields.environment}>
        <Input
          name="environment"
          value={values.environment}
          onChange={set('environment')}
          placeholder="production"
          maxLength={120}
        />
      </Field>
    </FormDialog>
  );
}
