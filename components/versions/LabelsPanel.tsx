'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { usePeople } from '@/components/evals/parts';
import type { Label, Version } from '@/components/evals/types';
import type { PromptScope } from '@/components/prompts/PromptShell';
import type { MoveRequest } from '@/components/releases/MoveLabelDialog';
import { useMoveLabel } from '@/components/releases/hooks';
import { dashboardReason, gateOn, type NumberOf } from '@/components/releases/rules';
import { blockedDetails } from '@/components/releases/BlockedExplanation';
import { SplitId } from '@/components/releases/SplitId';
import { Alert } from '@/components/ui/Alert';
import { Button } from '@/components/ui/Button';
import { Card, CardHeader } from '@/components/ui/Card';
import { ConfirmDialog } from '@/components/ui/ConfirmDialog';
import { Field, Input } from '@/components/ui/Field';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { EmptyState, SkeletonRows } from '@/components/ui/States';
import { Table } from '@/components/ui/Table';
import { LockIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError, type AppErrorInfo } from '@/lib/trpc/errors';
import type { ReleasePolicy } from '@/server/releases/schemas';
import type { useLabels } from './hooks';
import { VersionPicker } from './VersionPicker';
import { RelativeTime } from '@/components/ui/RelativeTime';

function useRemoveLabel(scope: PromptScope) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return useMutation(
    trpc.versions.removeLabel.mutationOptions({
      onSettled: () => {
        void queryClient.invalidateQueries(trpc.versions.pathFilter());
        void queryClient.invalidateQueries(
          trpc.prompts.get.queryFilter({ organizationId: scope.organizationId, promptId: scope.promptId }),
        );
      },
    }),
  );
}

// "v3 90% · v4 10%": each version of a split with its weight.
function SplitCell({ label, numberOf }: { label: Label; numberOf: NumberOf }) {
  return (
    <div className="traffic-cell">
      <span className="traffic-text">
        {label.split!.map((entry, index) => (
          <span key={entry.versionId}>
            {index > 0 ? <span className="subtle"> · </span> : null}
            <strong>v{numberOf(entry.versionId) ?? '?'}</strong> {entry.weight}%
          </span>
        ))}
      </span>
      {label.splitId ? <SplitId value={label.splitId} /> : null}
    </div>
  );
}

// Which version (or split) each label serves, with move, split traffic and remove. Moves go through
// the release policy's dialog (components/releases), opened by the Versions page.
export function LabelsPanel({
  scope,
  versions,
  labels,
  policy,
  numberOf,
  notice,
  onMove,
  onSplit,
  isAdmin,
}: {
  scope: PromptScope;
  isAdmin: boolean;
  versions: Version[];
  labels: ReturnType<typeof useLabels>;
  policy: ReleasePolicy | undefined;
  numberOf: NumberOf;
  notice: string | null;
  onMove: (request: MoveRequest) => void;
  onSplit: (label: Label) => void;
}) {
  const target = { organizationId: scope.organizationId, promptId: scope.promptId };
  const person = usePeople(scope.organizationId);
  const move = useMoveLabel(target);
  const remove = useRemoveLabel(scope);
  const [removing, setRemoving] = useState<Label | null>(null);
  const [error, setError] = useState<AppErrorInfo | null>(null);
  const [newLabel, setNewLabel] = useState('');
  const [newVersionId, setNewVersionId] = useState('');
  const [addError, setAddError] = useState<AppErrorInfo | null>(null);
  const items: Label[] = labels.data?.items ?? [];

  function addLabel(event: FormEvent) {
    event.preventDefault();
    setAddError(null);
    const name = newLabel.trim();
    const versionId = newVersionId || versions[0]?.id;
    if (!name)
      return setAddError({
        code: 'invalid_request',
        message: 'Name the label.',
        fields: { label: 'Name the label.' },
        details: {},
      });
    if (!versionId) return;
    const existing = items.find((item) => item.label === name);
    // An existing label is a move, and so is a protected one the gate checks against production: the
    // move dialog shows the release policy's rules for it (and the comparison to choose).
    if (existing || gateOn(policy, name)) return onMove({ label: name, current: existing ?? null, versionId });
    move.mutate(
      { ...target, label: name, versionId },
      {
        onSuccess: () => setNewLabel(''),
        onError: (e) => {
          const info = readAppError(e);
          // Refused by a policy changed meanwhile: say why in the dashboard's words, next to the field.
          if (info?.code === 'promotion_blocked') {
            const reasons = blockedDetails(info.details).reasons.map((reason) => dashboardReason(reason, null));
            return setAddError({ ...info, message: reasons.join(' ') || info.message });
          }
          setAddError(info);
        },
      },
    );
  }

  return (
    <Card flush id="labels">
      <CardHeader
        title="Labels"
        description="Applications retrieve a label (production when none is given); moving a label changes what they get on their next request."
      />
      {notice ? (
        <div className="card-notice">
          <Alert tone="success">{notice}</Alert>
        </div>
      ) : null}
      {labels.isPending ? (
        <SkeletonRows rows={2} label="Loading labels" />
      ) : labels.isError ? (
        <QueryErrorState title="Could not load labels" query={labels} />
      ) : items.length === 0 ? (
        <EmptyState
          title="No labels yet"
          description="Initializing the baseline points production and staging at version 1."
        />
      ) : (
        <Table caption="Labels" className="labels-table">
          <thead>
            <tr>
              <th scope="col">Label</th>
              <th scope="col">Serves</th>
              <th scope="col">Last moved</th>
              <th scope="col" className="cell-actions">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((label) => (
              <tr key={label.label} data-label={label.label}>
                <td>
                  <div className="inline">
                    <span className="label-chip">{label.label}</span>
                    {policy?.protectedLabels.includes(label.label) ? (
                      <span
                        className="protected-tag"
                        title={
                          gateOn(policy, label.label)
                            ? 'Protected: moving it to a version it never served needs a completed comparison.'
                            : 'Protected, but the release policy requires no comparison at the moment.'
                        }
                      >
                        <LockIcon size={12} /> Protected
                      </span>
                    ) : null}
                  </div>
                </td>
                <td>
                  {label.split ? <SplitCell label={label} numberOf={numberOf} /> : <strong>v{label.version}</strong>}
                </td>
                <td className="muted">
                  <RelativeTime time={label.updatedAt} /> by {person(label.updatedBy)}
                </td>
                <td className="cell-actions">
                  <div className="inline">
                    {label.split ? (
                      <a className="btn btn-sm btn-ghost" href={`#split-${label.label}`}>
                        View split
                      </a>
                    ) : null}
                    {scope.canWrite ? (
                      <>
                        <Button
                          size="sm"
                          onClick={() => onMove({ label: label.label, current: label, versionId: label.versionId })}
                          aria-label={`Move ${label.label}`}
                        >
                          Move
                        </Button>
                        <Button
                          size="sm"
                          disabled={versions.length < 2}
                          title={versions.length < 2 ? 'Save a second version to split traffic.' : undefined}
                          onClick={() => onSplit(label)}
                          aria-label={`${label.split ? 'Change the split of' : 'Split traffic of'} ${label.label}`}
                        >
                          {label.split ? 'Edit split' : 'Split traffic'}
                        </Button>
                        {label.label !== 'production' ? (
                          <Button
                            size="sm"
                            variant="ghost"
                            disabled={!isAdmin && gateOn(policy, label.label)}
                            title={
                              !isAdmin && gateOn(policy, label.label)
                                ? 'Protected by the release policy: only an admin can remove it.'
                                : undefined
                            }
                            onClick={() => (setError(null), setRemoving(label))}
                            aria-label={`Remove ${label.label}`}
                          >
                            Remove
                          </Button>
                        ) : null}
                      </>
                    ) : null}
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      {scope.canWrite && versions.length > 0 ? (
        <form className="add-label" onSubmit={addLabel} noValidate aria-label="Add a label">
          <Field
            label="New label"
            error={addError?.fields.label ?? (addError && !addError.fields.versionId ? addError.message : null)}
            hint="Lowercase letters, digits and hyphens, e.g. canary or eu-west."
          >
            <Input value={newLabel} onChange={(e) => setNewLabel(e.target.value)} placeholder="canary" maxLength={64} />
          </Field>
          <Field label="Points at" error={addError?.fields.versionId}>
            <VersionPicker
              target={target}
              value={newVersionId || versions[0]?.id || ''}
              selectedNumber={newVersionId ? numberOf(newVersionId) : versions[0]?.number}
              onChange={(version) => (setNewVersionId(version.id), setAddError(null))}
            />
          </Field>
          <Button type="submit" loading={move.isPending}>
            Add label
          </Button>
        </form>
      ) : null}
      <ConfirmDialog
        open={removing !== null}
        onClose={() => setRemoving(null)}
        title={`Remove ${removing?.label}?`}
        description={`Applications retrieving ${removing?.label} (now ${removing?.split ? 'a traffic split' : `v${removing?.version}`}) get “label not assigned” until it is set again. No version is deleted.`}
        confirmLabel="Remove label"
        pending={remove.isPending}
        error={error?.message ?? null}
        onConfirm={() =>
          removing &&
          remove.mutate(
            { ...target, label: removing.label },
            { onSuccess: () => setRemoving(null), onError: (e) => setError(readAppError(e)) },
          )
        }
      />
      {error && !removing ? <Alert tone="error">{error.message}</Alert> : null}
    </Card>
  );
}
