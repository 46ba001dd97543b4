'use client';

import type { ReactNode } from 'react';
import { Alert } from './Alert';
import { Button } from './Button';
import { Dialog } from './Dialog';

type ConfirmDialogProps = {
  open: boolean;
  onClose: () => void;
  title: ReactNode;
  description?: ReactNode;
  confirmLabel: ReactNode;
  // The button that closes without acting ("Cancel" unless the action is itself a cancellation).
  dismissLabel?: ReactNode;
  pending: boolean;
  // The failure message shown under the description; null or undefined shows nothing.
  error?: string | null;
  onConfirm: () => void;
  children?: ReactNode;
};

// A danger confirmation: Cancel plus a danger action. While the action is pending the dialog
// stays open (Escape, the backdrop and Cancel do nothing).
export function ConfirmDialog({
  open,
  onClose,
  title,
  description,
  confirmLabel,
  dismissLabel = 'Cancel',
  pending,
  error,
  onConfirm,
  children,
}: ConfirmDialogProps) {
  return (
    <Dialog
      open={open}
      onClose={() => !pending && onClose()}
      title={title}
      description={description}
      footer={
        <>
          <Button onClick={() => onClose()} disabled={pending}>
            {dismissLabel}
          </Button>
          <Button variant="danger" loading={pending} onClick={onConfirm}>
            {confirmLabel}
          </Button>
        </>
      }
    >
      {children}
      {error !== null && error !== undefined ? <Alert tone="error">{error}</Alert> : null}
    </Dialog>
  );
}
