'use client';

import { useRef, useState } from 'react';
import { Alert } from '@/components/ui/Alert';
import { Button, ButtonLink } from '@/components/ui/Button';
import { Card, CardBody, CardHeader } from '@/components/ui/Card';
import { ConfirmDialog } from '@/components/ui/ConfirmDialog';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { SkeletonRows } from '@/components/ui/States';
import { useLeaveGuard } from '@/components/ui/useLeaveGuard';
import { PlaygroundPanel } from '@/components/playground/PlaygroundPanel';
import { SetupChecklist } from '@/components/evals/SetupChecklist';
import { SaveVersionButton } from '@/components/versions/SaveVersionButton';
import type { PromptScope } from '../PromptShell';
import type { Draft, DraftContent } from '../types';
import { ConflictDialog } from './ConflictDialog';
import { CustomMetricsEditor } from './CustomMetricsEditor';
import { InputTypeToggle, VariableChips } from './InputTypeToggle';
import { MessageList } from './MessageList';
import { ModelSettings } from './ModelSettings';
import { OutputSchemaField } from './OutputSchemaField';
import { SaveStatusPill } from './SaveStatusPill';
import { ToolsEditor } from './ToolsEditor';
import { useDraftAutosave, type DraftConflict, type SaveStatus } from './useDraftAutosave';
import { useToolParameterTexts } from './useToolParameterTexts';
import { validateContent } from './validate';
import { extractVariables } from './variables';
import { RelativeTime } from '@/components/ui/RelativeTime';

function DiscardButton({ onDiscard, busy }: { onDiscard: () => Promise<string | null>; busy: boolean }) {
  const [open, setOpen] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <>
      <Button size="sm" variant="ghost" onClick={() => (setError(null), setOpen(true))}>
        Discard draft
      </Button>
      <ConfirmDialog
        open={open}
        onClose={() => setOpen(false)}
        title="Discard your draft?"
        description="Your changes are thrown away. The draft starts again from the prompt’s latest saved version, or empty when it has none."
        confirmLabel="Discard draft"
        pending={busy}
        error={error}
        onConfirm={async () => {
          const message = await onDiscard();
          if (message) setError(message);
          else setOpen(false);
        }}
      />
    </>
  );
}

const noTools: DraftContent['tools'] = [];

// Edits that will not save by themselves; leaving through a link asks first. (Unsaved edits that
// are valid are saved as the editor goes away.)
const unsavableReason: Record<SaveStatus, string | null> = {
  saved: null,
  dirty: null,
  saving: null,
  invalid: 'Some fields are not valid, so your latest edits are not saved. Leaving now loses them.',
  conflict: 'Your draft changed in another window and saving is paused. Leaving now loses your latest edits.',
  error: 'Your latest edits could not be saved. Leaving now loses them.',
};

// A teammate saved a version after this draft started: saving it would replace what they changed.
function NewerVersionNotice({ scope, draft }: { scope: PromptScope; draft: Draft }) {
  const { basedOnVersion: base, latestVersion: latest } = draft;
  if (base === null || latest <= base) return null;
  const versions = `/organizations/${scope.organizationId}/prompts/${scope.promptId}/versions`;
  const newer = latest - base === 1 ? `Version ${latest} was` : `Versions ${base + 1}–${latest} were`;
  return (
    <Alert
      tone="warning"
      title={`${newer} saved after your draft started`}
      action={
        <ButtonLink
          size="sm"
          href={base > 0 ? `${versions}?compare=${base}..${latest}` : `${versions}?version=${latest}`}
        >
          {base > 0 ? `Compare v${base} with v${latest}` : `See v${latest}`}
        </ButtonLink>
      }
    >
      Your draft started from {base > 0 ? `version ${base}` : 'an empty prompt'}. Saving a version from it replaces what
      changed since; discard your draft to start again from version {latest}.
    </Alert>
  );
}

export function DraftEditor({ scope }: { scope: PromptScope }) {
  const readOnly = !scope.canWrite;
  // Parameters texts that do not parse yet: shown on their fields, and autosave waits for them.
  const pendingIssues = useRef<Record<string, string>>({});
  const draft = useDraftAutosave({
    organizationId: scope.organizationId,
    promptId: scope.promptId,
    enabled: !readOnly,
    pendingIssues,
  });
  const toolTexts = useToolParameterTexts(draft.content?.tools ?? noTools);
  pendingIssues.current = toolTexts.issues;
  // Closing the conflict dialog postpones the choice for that conflict; a new conflict opens it again.
  const [postponed, setPostponed] = useState<DraftConflict | null>(null);
  const conflictHidden = draft.conflict !== null && postponed === draft.conflict;
  const held = useLeaveGuard({
    unsaved: !readOnly && draft.status !== 'saved',
    blockLinks: readOnly ? null : unsavableReason[draft.status],
    onUnload: () => void draft.flush(),
  });

  if (draft.draftQuery.isError) {
    return (
      <Card>
        <QueryErrorState title="Could not load your draft" query={draft.draftQuery} />
      </Card>
    );
  }
  const content = draft.content;
  if (!content) {
    return (
      <Card>
        <SkeletonRows rows={6} label="Loading draft" />
      </Card>
    );
  }

  const issues = readOnly ? {} : { ...validateContent(content), ...toolTexts.issues, ...draft.issues };
  const variables =
    content.inputType === 'variables' ? extractVariables(content.messages.map((message) => message.content)) : [];
  const set = (patch: Partial<DraftContent>) => draft.edit((current) => ({ ...current, ...patch }));
  const loaded = draft.draftQuery.data;
  const stored = draft.status === 'saved';

  return (
    <>
      {scope.prompt.state === 'setup' && !readOnly ? (
        <SetupChecklist
          scope={scope}
          content={content}
          revision={draft.revision}
          saved={stored}
          contentValid={Object.keys(issues).length === 0}
        />
      ) : null}
      <div className="editor-layout">
        <div className="editor-main">
          <div className="editor-toolbar">
            <div className="inline">
              {readOnly ? (
                <span className="save-pill" data-status="saved">
                  Revision {draft.revision}
                </span>
              ) : (
                <SaveStatusPill status={draft.status} revision={draft.revision} />
              )}
              {loaded ? (
                <span className="subtle">
                  Updated <RelativeTime time={loaded.updatedAt} />
                </span>
              ) : null}
            </div>
            {!readOnly ? (
              <div className="inline">
                <DiscardButton onDiscard={draft.discard} busy={draft.busy} />
                <SaveVersionButton
                  scope={scope}
                  onStale={() => void draft.resolveStale()}
                  revision={stored ? draft.revision : null}
                  pendingReason={
                    stored
                      ? null
                      : draft.status === 'invalid'
                        ? 'Fix the highlighted fields first.'
                        : draft.status === 'conflict'
                          ? 'Resolve the draft conflict first.'
                          : 'Saving your draft…'
                  }
                />
              </div>
            ) : null}
          </div>
          {draft.status === 'error' && draft.errorMessage ? (
            <Alert
              tone="error"
              title="Your latest changes are not saved"
              action={
                <Button size="sm" onClick={() => void draft.flush()}>
                  Retry
                </Button>
              }
            >
              {draft.errorMessage}
            </Alert>
          ) : null}
          {loaded && !readOnly ? <NewerVersionNotice scope={scope} draft={loaded} /> : null}
          {draft.conflict && conflictHidden ? (
            <Alert
              tone="warning"
              title="Saving is paused"
              action={
                <Button size="sm" onClick={() => setPostponed(null)}>
                  Resolve conflict
                </Button>
              }
            >
              Your draft changed in another window. Choose which version to keep before saving again.
            </Alert>
          ) : null}

          <Card>
            <CardHeader
              title="Messages"
              description="The conversation sent to the model. Use {{name}} for values filled in at run time."
            />
            <CardBody className="stack">
              <InputTypeToggle
                value={content.inputType}
                readOnly={readOnly}
                onChange={(inputType) => set({ inputType })}
              />
              {content.inputType === 'variables' ? <VariableChips names={variables} /> : null}
              <MessageList
                messages={content.messages}
                readOnly={readOnly}
                issues={issues}
                onChange={(messages) => set({ messages })}
              />
            </CardBody>
          </Card>

          <Card>
            <CardHeader title="Model" description="Where the prompt runs and how." />
            <CardBody>
              <ModelSettings
                organizationId={scope.organizationId}
                content={content}
                readOnly={readOnly}
                issues={issues}
                onChange={set}
              />
            </CardBody>
          </Card>

          <Card>
            <CardHeader
              title="Tools"
              description="Functions the model may call. When it calls one, the output is the call as JSON: [{ name, arguments }]."
            />
            <CardBody>
              <ToolsEditor
                tools={content.tools}
                texts={toolTexts.texts}
                readOnly={readOnly}
                issues={issues}
                onChange={(tools, texts) => {
                  toolTexts.change(tools, texts);
                  set({ tools });
                }}
              />
            </CardBody>
          </Card>

          <Card>
            <CardHeader
              title="Output checks"
              description="Optional structure and metrics every output is scored against."
            />
            <CardBody className="stack">
              <OutputSchemaField
                value={content.outputSchema}
                readOnly={readOnly}
                error={issues['content.outputSchema']}
                onChange={(outputSchema) => set({ outputSchema })}
              />
              <div className="stack-sm">
                <span className="field-label">Custom metrics</span>
                <CustomMetricsEditor
                  metrics={content.customMetrics}
                  readOnly={readOnly}
                  issues={issues}
                  onChange={(customMetrics) => set({ customMetrics })}
                />
              </div>
            </CardBody>
          </Card>
        </div>
        <aside className="editor-side" aria-label="Playground">
          <PlaygroundPanel
            scope={scope}
            content={content}
            variables={variables}
            blocked={Object.keys(issues).length > 0}
          />
        </aside>
        <ConfirmDialog
          open={held.href !== null}
          onClose={held.stay}
          title="Leave without saving?"
          description={unsavableReason[draft.status] ?? 'Your latest edits are not saved yet.'}
          confirmLabel="Leave anyway"
          dismissLabel="Stay on this page"
          pending={false}
          onConfirm={held.leave}
        />
        <ConflictDialog
          conflict={conflictHidden ? null : draft.conflict}
          onClose={() => setPostponed(draft.conflict)}
          onKeepMine={draft.keepMine}
          onUseTheirs={draft.takeTheirs}
        />
      </div>
    </>
  );
}
