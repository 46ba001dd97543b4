'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { FormDialog } from '@/components/ui/FormDialog';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import { webhookEventTypes, type Webhook } from '@/server/webhooks/schemas';
import { WebhookFields } from './WebhookFields';
import {
  checkValues,
  fieldNames,
  withFieldErrors,
  type EventType,
  type WebhookFieldErrors,
  type WebhookValues,
} from './form';

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
  const [checked, setChecked] = useState<WebhookFieldErrors>({});
  const update = useMutation(
    trpc.webhooks.update.mutationOptions({
      onSuccess: async () => {
        onSaved();
        onClose();
        await queryClient.invalidateQueries(trpc.webhooks.pathFilter());
      },
    }),
  );
  const shown = withFieldErrors(readAppError(update.error));

  function submit() {
    const problems = checkValues(values);
    setChecked(problems);
    if (Object.keys(problems).length > 0) return;
    const description = values.description.trim();
    update.mutate({
      organizationId,
      webhookId: webhook.id,
      ...(values.url.trim() === webhook.url ? {} : { url: values.url.trim() }),
      events: values.events,
      description: description || null,
    });
  }

  return (
    <FormDialog
      open
      onClose={() => !update.isPending && onClose()}
      title="Edit endpoint"
      description="The signing secret and the delivery log stay as they are. Deliveries already queued go to the new URL."
      submitLabel="Save changes"
      pending={update.isPending}
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
          if (update.error) update.reset();
        }}
      />
    </FormDialog>
  );
}
