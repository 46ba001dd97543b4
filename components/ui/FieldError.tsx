import { AlertCircleIcon } from './icons';

// The error under a control: used by <Field> and by controls that are not wrapped in one
// (rows of the message and metric lists, table rows, inline forms). Renders nothing without a message.
export function FieldError({ id, message, className }: { id?: string; message?: string | null; className?: string }) {
  if (!message) return null;
  return (
    <p className={['field-error', className].filter(Boolean).join(' ')} id={id} role="alert">
      <AlertCircleIcon size={14} />
      <span>{message}</span>
    </p>
  );
}
