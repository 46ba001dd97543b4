'use client';

import { useState } from 'react';
import type { Label } from '@/components/evals/types';
import { Field } from '@/components/ui/Field';
import { VersionPicker } from '@/components/versions/VersionPicker';
import { GatedMoveDialog } from './GatedMoveDialog';
import { GateSection } from './GateSection';
import { useGate, type Target } from './hooks';
import { splitText, type NumberOf } from './rules';

export type MoveRequest = {
  label: string;
  current: Label | null;
  versionId: string;
  // The version is chosen by the action that opened the dialog (Promote vN), not in the dialog.
  fixed?: boolean;
  // The comparison that justifies the move, when the action that opened the dialog names one (an
  // evaluation's own Promote); else the gate takes the one that justifies it.
  evaluationId?: string;
};

/** What a label serves now, in words: "v3", "v3 90% · v4 10%", or null for a new label. */
export function servesText(label: Label | null, numberOf: NumberOf): string | null {
  if (!label) return null;
  return label.split ? splitText(label.split, numberOf) : `v${label.version}`;
}

// Moves a label to one version: a promotion, a rollback, or the end of a split. A protected label
// asks for the comparison that justifies the move and says whether the release policy would accept
// it; a refusal shows the server's reasons, and an admin may then override with a reason.
export function MoveLabelDialog({
  target,
  request,
  numberOf,
  isAdmin,
  evalsBase,
  onClose,
  onMoved,
}: {
  target: Target;
  request: MoveRequest;
  numberOf: NumberOf;
  isAdmin: boolean;
  evalsBase: string;
  onClose: () => void;
  onMoved: (message: string) => void;
}) {
  const { label, current, fixed } = request;
  const [versionId, setVersionId] = useState(request.versionId);
  // The user's justifying comparison ('' for none); null until they choose, so the gate takes the
  // one that justifies the move (see useGate).
  const [evaluationId, setEvaluationId] = useState<string | null>(request.evaluationId ?? null);
  const gate = useGate(target, { label, current, versionIds: [versionId], evaluationId, numberOf });

  const number = numberOf(versionId);
  const name = number === undefined ? 'this version' : `v${number}`;
  const serves = servesText(current, numberOf);
  const inSplit = (id: string) => Boolean(current?.split?.some((entry) => entry.versionId === id));
  const endsSplit = inSplit(versionId);
  const unchanged = current !== null && current.split === null && current.versionId === versionId;
  // A rollback is a move back to a version the label pointed at before (API.md), by its history:
  // not any move to a lower number (staging v7 → v2 is no rollback when staging never served v2).
  const rollback = !endsSplit && !unchanged && gate.pointedBefore;

  const title = endsSplit
    ? `End the split: move ${label} to ${name}?`
    : rollback
      ? `Roll back ${label} to ${name}?`
      : fixed
        ? `Promote ${name} to ${label}?`
        : `Move ${label}`;
  const description = current ? (
    <>
      <code>{label}</code> moves from <strong>{serves}</strong> to <strong>{name}</strong>
      {endsSplit ? ', which ends the traffic split' : ''}. Applications retrieving {label} get {name} on their next
      request.
    </>
  ) : (
    <>
      <code>{label}</code> will point at <strong>{name}</strong>.
    </>
  );

  return (
    <GatedMoveDialog
      target={target}
      label={label}
      gate={gate}
      isAdmin={isAdmin}
      evalsBase={evalsBase}
      title={title}
      description={description}
      submitLabel={rollback ? `Roll back to ${name}` : `Move to ${name}`}
      submitDisabled={unchanged ? `${label} already serves ${name}.` : null}
      overridable={!unchanged}
      body={() => ({ versionId })}
      fieldNames={['versionId']}
      evaluationId={gate.evaluationId}
      successMessage={(overridden) =>
        overridden ? `${label} now serves ${name} (release policy overridden).` : `${label} now serves ${name}.`
      }
      onClose={onClose}
      onMoved={onMoved}
    >
      {({ blocked, error, clearError }) => (
        <>
          {!fixed ? (
            <Field label="Version" error={error?.fields.versionId}>
              <VersionPicker
                target={target}
                value={versionId}
                selectedNumber={number}
                onChange={(version) => (setVersionId(version.id), setEvaluationId(null), clearError())}
                note={(version) =>
                  inSplit(version.id) ? ' (in the split)' : version.id === current?.versionId ? ' (current)' : ''
                }
              />
            </Field>
          ) : null}
          {unchanged ? (
            <p className="subtle">
              {label} already serves {name}. Choose another version.
            </p>
          ) : (
            <GateSection
              gate={gate}
              label={label}
              currentText={serves}
              currentIsSplit={Boolean(current?.split)}
              evaluationId={gate.evaluationId}
              onEvaluationChange={(id) => (setEvaluationId(id), clearError())}
              numberOf={numberOf}
              evalsBase={evalsBase}
              blocked={blocked}
            />
          )}
        </>
      )}
    </GatedMoveDialog>
  );
}
