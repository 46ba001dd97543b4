'use client';

import { roleOptions } from '@/components/format';
import { FormDialog } from '@/components/ui/FormDialog';
import { Field, Input, Select } from '@/components/ui/Field';
import { useCreateDialog, type CreateDialogProps } from '@/components/ui/useCreateDialog';
import { useTRPC } from '@/lib/trpc/client';
import type { CreatedServiceAccount } from '@/server/service-accounts/schemas';

type Role = (typeof roleOptions)[number]['value'];
const empty: { name: string; role: Role } = { name: '', role: 'editor' };

export function CreateServiceAccountDialog({
  organizationId,
  open,
  onClose,
  onCreated,
}: CreateDialogProps<CreatedServiceAccount>) {
  const trpc = useTRPC();
  const { values, setValues, create, error, close } = useCreateDialog(
    empty,
    trpc.serviceAccounts.create.mutationOptions(),
    trpc.serviceAccounts.pathFilter(),
    { onCreated, onClose },
  );

  return (
    <FormDialog
      open={open}
      onClose={close}
      title="New service account"
      description="Machine credentials for CI: a client ID and a secret that get API tokens without a browser. The secret is shown once."
      submitLabel="Create service account"
      pending={create.isPending}
      onSubmit={() => create.mutate({ organizationId, ...values })}
      error={error}
      fieldNames={['name', 'role']}
    >
      <Field
        label="Name"
        error={error?.fields.name}
        hint="Where it is used, e.g. “GitHub Actions: release gate”. At most 100 characters."
      >
        <Input
          name="name"
          value={values.name}
          onChange={(e) => setValues((v) => ({ ...v, name: e.target.value }))}
          maxLength={120}
          autoFocus
        />
      </Field>
      <Field
        label="Role"
        error={error?.fields.role}
        hint="What it may do in this organization, like a member with this role."
      >
        <Select
          name="role"
          value={values.role}
          onChange={(e) => setValues((v) => ({ ...v, role: e.target.value as Role }))}
        >
          {roleOptions.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label} — {option.description}
            </option>
          ))}
        </Select>
      </Field>
    </FormDialog>
  );
}
