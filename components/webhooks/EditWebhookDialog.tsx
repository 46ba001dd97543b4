'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import { webhookEventTypes, type Webhook } from '@/server/webhooks/schemas';
import type { EventType, WebhookValues } from './form';
import { WebhookFormDialog } from './WebhookFormDialog';

const isEventType = (type: string): type is EventType => (webhookEventTypes as readonly string[]).includes(type);

// Changes an endpoint's URL, events and description; its secret and its log stay as they are.
export function EditWebhookDialog({
  organizationId,
  webhook,
  onClose,
  onSaved,
}: {
  organizationId: string;
  webhook: Webhook;
  onClose: () => void;
  onSaved: () => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [values, setValues] = useState<WebhookValues>({
    url: webhook.url,
    events: webhook.events.filter(isEventType),
    description: webhook.description ?? '',
  });
  const update = useMutation(
    trpc.webhooks.update.mutationOptions({
      onSuccess: async () => {
        onSaved();
        onClose();
        await queryClient.invalidateQueries(trpc.webhooks.pathFilter());
      },
    }),
  );

  return (
    <WebhookFormDialog
      title="Edit endpoint"
      description="The signing secret and the delivery log stay as they are. Deliveries already queued go to the new URL."
      submitLabel="Save changes"
      values={values}
      onValues={(next) => {
        setValues(next);
        if (update.error) update.reset();
      }}
      pending={update.isPending}
      error={readAppError(update.error)}
      onSubmit={({ url, events, description }) =>
        update.mutate({
          organizationId,
          webhookId: webhook.id,
          ...(url === webhook.url ? {} : { url }),
          events,
          description: description || null,
        })
      }
      onClose={() => !update.isPending && onClose()}
    />
  );
}
