import { AlertCircleIcon } from '@/components/ui/icons';

// An error under a control that is not wrapped in <Field> (rows of the message and metric lists).
export function FieldError({ id, message }: { id: string; message?: string | null }) {
  if (!message) return null;
  return (
    <p className="field-error" id={id} role="alert">
      <AlertCircleIcon size={14} />
      <span>{message}</span>
    </p>
  );
}
