import type { SaveStatus } from './useDraftAutosave';

const text: Record<SaveStatus, (revision: number) => string> = {
  saved: (revision) => `Saved · revision ${revision}`,
  dirty: () => 'Unsaved changes',
  saving: () => 'Saving…',
  conflict: () => 'Conflict',
  invalid: () => 'Not saved · fix errors',
  error: () => 'Save failed',
};

export function SaveStatusPill({ status, revision }: { status: SaveStatus; revision: number }) {
  return (
    <span
      className="save-pill"
      data-status={status}
      role="status"
      aria-live="polite"
      aria-label={`Draft status: ${text[status](revision)}`}
    >
      <span className="save-dot" aria-hidden="true" />
      {text[status](revision)}
    </span>
  );
}
