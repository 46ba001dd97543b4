'use client';

import { formatDateTime } from '@/components/format';
import { Button } from '@/components/ui/Button';
import { Dialog } from '@/components/ui/Dialog';
import type { DraftContent } from '../types';
import type { DraftConflict } from './useDraftAutosave';

function ContentColumn({
  title,
  subtitle,
  content,
  other,
  label,
}: {
  title: string;
  subtitle: string;
  content: DraftContent;
  other: DraftContent;
  label: string;
}) {
  const changed = (a: unknown, b: unknown) => JSON.stringify(a) !== JSON.stringify(b);
  return (
    <section className="conflict-column" aria-label={label}>
      <header className="conflict-column-head">
        <strong>{title}</strong>
        <span className="muted">{subtitle}</span>
      </header>
      <ol className="conflict-messages">
        {content.messages.map((message, i) => (
          <li key={i} data-changed={changed(message, other.messages[i]) || undefined}>
            <span className="conflict-role">{message.role}</span>
            <p className="conflict-text">{message.content || <em className="subtle">(empty)</em>}</p>
          </li>
        ))}
      </ol>
      <dl className="conflict-settings">
        <div data-changed={changed(content.modelRouteId, other.modelRouteId) || undefined}>
          <dt>Model</dt>
          <dd className="mono">{content.modelRouteId}</dd>
        </div>
        <div data-changed={changed(content.temperature, other.temperature) || undefined}>
          <dt>Temperature</dt>
          <dd>{content.temperature}</dd>
        </div>
        <div data-changed={changed(content.inputType, other.inputType) || undefined}>
          <dt>Input</dt>
          <dd>{content.inputType === 'variables' ? 'Variables' : 'User message'}</dd>
        </div>
        <div data-changed={changed(content.outputSchema, other.outputSchema) || undefined}>
          <dt>Output schema</dt>
          <dd>{content.outputSchema.trim() ? 'Set' : 'None'}</dd>
        </div>
        <div data-changed={changed(content.customMetrics, other.customMetrics) || undefined}>
          <dt>Custom metrics</dt>
          <dd>{content.customMetrics.length}</dd>
        </div>
      </dl>
    </section>
  );
}

// Both versions side by side; nothing is overwritten until the user picks one.
export function ConflictDialog({
  conflict,
  onClose,
  onKeepMine,
  onUseTheirs,
}: {
  conflict: DraftConflict | null;
  onClose: () => void;
  onKeepMine: () => void;
  onUseTheirs: () => void;
}) {
  return (
    <Dialog
      open={conflict !== null}
      onClose={onClose}
      title="This draft changed elsewhere"
      description="Another window or tool saved your draft after you loaded it. Choose which version to keep; the other one is replaced."
      footer={
        <>
          <Button onClick={onUseTheirs}>Use theirs</Button>
          <Button variant="primary" onClick={onKeepMine}>
            Keep mine
          </Button>
        </>
      }
    >
      {conflict ? (
        <div className="conflict-grid">
          <ContentColumn
            title="Yours"
            subtitle="Unsaved, in this window"
            content={conflict.mine}
            other={conflict.theirs.content}
            label="Your version"
          />
          <ContentColumn
            title={`Stored · revision ${conflict.theirs.revision}`}
            subtitle={`Saved ${formatDateTime(conflict.theirs.updatedAt)}`}
            content={conflict.theirs.content}
            other={conflict.mine}
            label="Stored version"
          />
        </div>
      ) : null}
    </Dialog>
  );
}
