'use client';

import { useState } from 'react';
import { FormDialog } from '@/components/ui/FormDialog';
import type { AppErrorInfo } from '@/lib/trpc/errors';
import { WebhookFields } from './WebhookFields';
import { checkValues, fieldNames, withFieldErrors, type WebhookFieldErrors, type WebhookValues } from './form';

// The endpoint form both "New endpoint" and "Edit endpoint" show: the browser's own checks first,
// then the server's answer next to the same fields.
export function WebhookFormDialog({
  open = true,
  title,
  description,
  submitLabel,
  values,
  onValues,
  pending,
  error,
  onSubmit,
  onClose,
}: {
  open?: boolean;
  title: string;
  description: string;
  submitLabel: string;
  values: WebhookValues;
  onValues: (next: WebhookValues) => void;
  pending: boolean;
  error: AppErrorInfo | null;
  onSubmit: (trimmed: { url: string; events: WebhookValues['events']; description: string }) => void;
  onClose: () => void;
}) {
  const [checked, setChecked] = useState<WebhookFieldErrors>({});
  const shown = withFieldErrors(error);

  function submit() {
    const problems = checkValues(values);
    setChecked(problems);
    if (Object.keys(problems).length > 0) return;
    onSubmit({ url: values.url.trim(), events: values.events, description: values.description.trim() });
  }

  return (
    <FormDialog
      open={open}
      onClose={() => (setChecked({}), onClose())}
      title={title}
      description={description}
      submitLabel={submitLabel}
      pending={pending}
      onSubmit={submit}
      error={shown}
      fieldNames={fieldNames}
    >
      <WebhookFields
        values={values}
        errors={{ ...shown?.fields, ...checked }}
        onChange={(next) => {
          setChecked({});
          onValues(next);
        }}
      />
    </FormDialog>
  );
}
