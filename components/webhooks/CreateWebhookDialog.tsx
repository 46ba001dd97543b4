'use client';

import { useCreateDialog, type CreateDialogProps } from '@/components/ui/useCreateDialog';
import { useTRPC } from '@/lib/trpc/client';
import type { Webhook } from '@/server/webhooks/schemas';
import type { WebhookValues } from './form';
import { WebhookFormDialog } from './WebhookFormDialog';

export type CreatedWebhook = { webhook: Webhook; secret: string };

const empty: WebhookValues = { url: '', events: [], description: '' };

export function CreateWebhookDialog({ organizationId, open, onClose, onCreated }: CreateDialogProps<CreatedWebhook>) {
  const trpc = useTRPC();
  const { values, setValues, create, error, close } = useCreateDialog(
    empty,
    trpc.webhooks.create.mutationOptions(),
    trpc.webhooks.pathFilter(),
    { onCreated, onClose },
  );

  return (
    <WebhookFormDialog
      open={open}
      title="New webhook endpoint"
      description="Promptloop POSTs a signed JSON event to this URL when something happens in the organization. Its signing secret is shown once."
      submitLabel="Add endpoint"
      values={values}
      onValues={(next) => {
        setValues(next);
        if (create.error) create.reset();
      }}
      pending={create.isPending}
      error={error}
      onSubmit={({ url, events, description }) =>
        create.mutate({ organizationId, url, events, ...(description ? { description } : {}) })
      }
      onClose={close}
    />
  );
}
