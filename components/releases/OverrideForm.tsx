'use client';

import { useId } from 'react';
import { FieldError } from '@/components/ui/FieldError';

const overrideReasonMax = 500;

/** The problem with an override reason, or null (API.md: 1–500 characters, not only spaces). */
export function overrideReasonError(reason: string): string | null {
  if (!reason.trim()) return 'Say why the release policy is bypassed; the reason is kept in the label history.';
  if (reason.length > overrideReasonMax)
    return `Keep it to ${overrideReasonMax} characters (${reason.length.toLocaleString('en-US')} now).`;
  return null;
}

// An admin's reason for moving a protected label against its release policy.
export function OverrideForm({
  label,
  reason,
  onChange,
  error,
}: {
  label: string;
  reason: string;
  onChange: (reason: string) => void;
  error: string | null;
}) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  return (
    <div className="override">
      <p className="override-note">
        As an admin you can move “{label}” even though its release policy refuses it. Applications get the new version
        on their next request; the label history and the audit log keep who did it and why.
      </p>
      <div className="field">
        <label className="field-label" htmlFor={id}>
          Reason for the override
        </label>
        <textarea
          id={id}
          className="textarea"
          rows={3}
          value={reason}
          autoFocus
          placeholder="e.g. Hotfix for the refund-policy outage; the comparison is running and will be reviewed tomorrow."
          aria-invalid={error ? true : undefined}
          aria-describedby={[error ? errorId : null, hintId].filter(Boolean).join(' ')}
          onChange={(e) => onChange(e.target.value)}
        />
        <FieldError id={errorId} message={error} />
        <p className="field-hint" id={hintId}>
          {reason.length}/{overrideReasonMax} characters. Shown in the label history next to the move.
        </p>
      </div>
    </div>
  );
}
