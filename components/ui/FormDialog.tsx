'use client';

import { useId, type FormEvent, type ReactNode } from 'react';
import { Alert } from '@/components/ui/Alert';
import { Button } from '@/components/ui/Button';
import { Dialog } from '@/components/ui/Dialog';
import { formMessage, type AppErrorInfo } from '@/lib/trpc/errors';
import { useFocusFirstInvalid } from './useFocusFirstInvalid';

type FormDialogProps = {
  open: boolean;
  onClose: () => void;
  title: string;
  description?: string;
  submitLabel: string;
  pending: boolean;
  onSubmit: () => void;
  // Errors that belong to a field show next to it; anything else shows above the form.
  error: AppErrorInfo | null;
  fieldNames: string[];
  children: ReactNode;
};

// A dialog holding one form: Cancel and submit in the footer, the form-level error on top.
export function FormDialog({
  open,
  onClose,
  title,
  description,
  submitLabel,
  pending,
  onSubmit,
  error,
  fieldNames,
  children,
}: FormDialogProps) {
  const formId = useId();
  const message = formMessage(error, fieldNames);
  const { formRef, submitted } = useFocusFirstInvalid();
  function submit(event: FormEvent) {
    event.preventDefault();
    submitted();
    onSubmit();
  }
  return (
    <Dialog
      open={open}
      onClose={onClose}
      title={title}
      description={description}
      footer={
        <>
          <Button onClick={onClose} disabled={pending}>
            Cancel
          </Button>
          <Button type="submit" form={formId} variant="primary" loading={pending}>
            {submitLabel}
          </Button>
        </>
      }
    >
      <form ref={formRef} id={formId} className="form" onSubmit={submit} noValidate style={{ marginTop: 12 }}>
        {message ? <Alert tone="error">{message}</Alert> : null}
        {children}
      </form>
    </Dialog>
  );
}
