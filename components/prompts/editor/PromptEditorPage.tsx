'use client';

import { PromptShell } from '../PromptShell';
import { DraftEditor } from './DraftEditor';

export function PromptEditorPage({ organizationId, promptId }: { organizationId: string; promptId: string }) {
  return (
    <PromptShell organizationId={organizationId} promptId={promptId}>
      {(scope) => <DraftEditor key={scope.promptId} scope={scope} />}
    </PromptShell>
  );
}
