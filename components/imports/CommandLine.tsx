'use client';

import { CopyButton } from '@/components/ui/CopyButton';

// One shell command with its copy button.
export function CommandLine({ command, label }: { command: string; label: string }) {
  return (
    <div className="command-line">
      <pre aria-label={label}>
        <code>{command}</code>
      </pre>
      <CopyButton value={command} label="Copy command" />
    </div>
  );
}
