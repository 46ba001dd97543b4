'use client';

import { useState } from 'react';
import { FormDialog } from '@/components/ui/FormDialog';
import { useCreateDialog } from '@/components/ui/useCreateDialog';
import { useTRPC } from '@/lib/trpc/client';
import type { Webhook } from '@/server/webhooks/schemas';
import { WebhookFields } from './WebhookFields';
import { checkValues, fieldNames, withFieldErrors, type WebhookFieldErrors, type WebhookValues } from './form';

export type CreatedWebhook = { webhook: Webhook; secret: string };

const empty: WebhookValues = { url: '', events: [], description: '' };

export function CreateWebhookDialog({
  organizationId,
  open,
  onClose,
  onCreated,
}: {
  organizationId: string;
  open: boolean;
  onClose: () => void;
  onCreated: (created: CreatedWebhook) => void;
}) {
  const trpc = useTRPC();
  const { values, setValues, create, error, close } = useCreateDialog(
    empty,
    trpc.webhooks.create.mutationOptions(),
    trpc.webhooks.pathFilter(),
    { onCreated, onClose },
  );
  const [checked, setChecked] = useState<WebhookFieldErrors>({});
  const shown = withFieldErrors(error);

  function submit() {
    const problems = checkValues(values);
    setChecked(problems);
    if (Object.keys(problems).length > 0) return;
    const description = values.description.trim();
    create.mutate({
      organizationId,
      url: values.url.trim(),
      events: values.events,
      ...(description ? { description } : {}),
    });
  }

  return (
    <FormDialog
      open={open}
      onClose={() => (setChecked({}), close())}
      title="New webhook endpoint"
      description="Promptloop POSTs a signed JSON event to this URL when something happens in the organization. Its signing secret is shown once."
      submitLabel="Add endpoint"
      pending={create.isPending}
      onSubmit={submit}
      error={shown}
      fieldNames={fieldNames}
    >
      <WebhookFields
        values={values}
        errors={{ ...shown?.fields, ...checked }}
        onChange={(next) => {
          setValues(next);
          setChecked({});
          if (create.error) create.reset();
        }}
      />
    </FormDialog>
  );
}
