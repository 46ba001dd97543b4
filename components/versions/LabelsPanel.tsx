'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { formatDateTime, formatRelative } from '@/components/format';
import { usePeople } from '@/components/evals/parts';
import type { Label, Version } from '@/components/evals/types';
import type { PromptScope } from '@/components/prompts/PromptShell';
import { Alert } from '@/components/ui/Alert';
import { Button } from '@/components/ui/Button';
import { Card, CardHeader } from '@/components/ui/Card';
import { ConfirmDialog } from '@/components/ui/ConfirmDialog';
import { Dialog } from '@/components/ui/Dialog';
import { Field, Input, Select } from '@/components/ui/Field';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { EmptyState, SkeletonRows } from '@/components/ui/States';
import { Table } from '@/components/ui/Table';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError, type AppErrorInfo } from '@/lib/trpc/errors';
import { useLabels } from './hooks';

type MoveState = { label: string; from: Label | null; versionId: string };

function useLabelMutations(scope: PromptScope) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const refresh = () => {
    void queryClient.invalidateQueries(trpc.versions.pathFilter());
    void queryClient.invalidateQueries(
      trpc.prompts.get.queryFilter({ organizationId: scope.organizationId, promptId: scope.promptId }),
    );
  };
  const move = useMutation(trpc.versions.moveLabel.mutationOptions({ onSettled: refresh }));
  const remove = useMutation(trpc.versions.removeLabel.mutationOptions({ onSettled: refresh }));
  return { move, remove };
}

// Which version each label serves, with move / roll back / remove. Moving asks for confirmation
// naming both versions, since applications follow a label on their next request.
export function LabelsPanel({ scope, versions }: { scope: PromptScope; versions: Version[] }) {
  const target = { organizationId: scope.organizationId, promptId: scope.promptId };
  const labels = useLabels(target);
  const person = usePeople(scope.organizationId);
  const { move, remove } = useLabelMutations(scope);
  const [moving, setMoving] = useState<MoveState | null>(null);
  const [confirmMove, setConfirmMove] = useState(false);
  const [removing, setRemoving] = useState<Label | null>(null);
  const [error, setError] = useState<AppErrorInfo | null>(null);
  const [newLabel, setNewLabel] = useState('');
  const [newVersionId, setNewVersionId] = useState('');
  const [addError, setAddError] = useState<AppErrorInfo | null>(null);
  const items: Label[] = labels.data?.items ?? [];
  const numberOf = (versionId: string) => versions.find((version) => version.id === versionId)?.number;

  const target_ = moving ? versions.find((version) => version.id === moving.versionId) : undefined;
  const rollback = moving?.from && target_ ? target_.number < moving.from.version : false;

  function submitMove() {
    if (!moving) return;
    setError(null);
    move.mutate(
      { ...target, label: moving.label, versionId: moving.versionId },
      {
        onSuccess: () => {
          setMoving(null);
          setConfirmMove(false);
        },
        onError: (e) => setError(readAppError(e)),
      },
    );
  }

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
    if (existing) {
      setError(null);
      setMoving({ label: name, from: existing, versionId });
      setConfirmMove(true);
      return;
    }
    move.mutate(
      { ...target, label: name, versionId },
      {
        onSuccess: () => setNewLabel(''),
        onError: (e) => setAddError(readAppError(e)),
      },
    );
  }

  return (
    <Card flush id="labels">
      <CardHeader
        title="Labels"
        description="Applications retrieve a label (production when none is given); moving a label changes what they get on their next request."
      />
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
              <th scope="col">Version</th>
              <th scope="col">Last moved</th>
              {scope.canWrite ? (
                <th scope="col" className="cell-actions">
                  <span className="visually-hidden">Actions</span>
                </th>
              ) : null}
            </tr>
          </thead>
          <tbody>
            {items.map((label) => (
              <tr key={label.label} data-label={label.label}>
                <td>
                  <span className="label-chip">{label.label}</span>
                </td>
                <td>
                  <strong>v{label.version}</strong>
                </td>
                <td className="muted" title={formatDateTime(label.updatedAt)}>
                  {formatRelative(label.updatedAt)} by {person(label.updatedBy)}
                </td>
                {scope.canWrite ? (
                  <td className="cell-actions">
                    <div className="inline">
                      <Button
                        size="sm"
                        onClick={() => (
                          setError(null),
                          setConfirmMove(false),
                          setMoving({ label: label.label, from: label, versionId: label.versionId })
                        )}
                        aria-label={`Move ${label.label}`}
                      >
                        Move
                      </Button>
                      {label.label !== 'production' ? (
                        <Button
                          size="sm"
                          variant="ghost"
                          onClick={() => (setError(null), setRemoving(label))}
                          aria-label={`Remove ${label.label}`}
                        >
                          Remove
                        </Button>
                      ) : null}
                    </div>
                  </td>
                ) : null}
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
            <Select value={newVersionId || versions[0]?.id} onChange={(e) => setNewVersionId(e.target.value)}>
              {versions.map((version) => (
                <option key={version.id} value={version.id}>
                  v{version.number}
                </option>
              ))}
            </Select>
          </Field>
          <Button type="submit" loading={move.isPending && !moving}>
            Add label
          </Button>
        </form>
      ) : null}

      <Dialog
        open={moving !== null && !confirmMove}
        // Closing this picker to open the confirmation also fires its close event: keep the choice then.
        onClose={() => !confirmMove && setMoving(null)}
        title={`Move ${moving?.label ?? ''}`}
        description="Choose the version this label should serve."
        footer={
          <>
            <Button onClick={() => setMoving(null)}>Cancel</Button>
            <Button
              variant="primary"
              disabled={!moving || moving.versionId === moving.from?.versionId}
              onClick={() => (setError(null), setConfirmMove(true))}
            >
              Continue
            </Button>
          </>
        }
      >
        {moving ? (
          <Field label="Version">
            <Select value={moving.versionId} onChange={(e) => setMoving({ ...moving, versionId: e.target.value })}>
              {versions.map((version) => (
                <option key={version.id} value={version.id}>
                  v{version.number}
                  {version.id === moving.from?.versionId ? ' (current)' : ''}
                </option>
              ))}
            </Select>
          </Field>
        ) : null}
      </Dialog>
      <ConfirmDialog
        open={moving !== null && confirmMove}
        onClose={() => (setConfirmMove(false), setMoving(null))}
        title={
          rollback
            ? `Roll back ${moving?.label} to v${target_?.number}?`
            : `Move ${moving?.label} to v${target_?.number ?? numberOf(moving?.versionId ?? '')}?`
        }
        description={
          moving?.from
            ? `${moving.label} moves from v${moving.from.version} to v${target_?.number}. Applications retrieving ${moving.label} get v${target_?.number} on their next request.`
            : `${moving?.label} will point at v${target_?.number}.`
        }
        confirmLabel={rollback ? `Roll back to v${target_?.number}` : `Move to v${target_?.number}`}
        pending={move.isPending}
        error={error?.message ?? null}
        onConfirm={submitMove}
      />
      <ConfirmDialog
        open={removing !== null}
        onClose={() => setRemoving(null)}
        title={`Remove ${removing?.label}?`}
        description={`Applications retrieving ${removing?.label} (now v${removing?.version}) get “label not assigned” until it is set again. No version is deleted.`}
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
      {error && !moving && !removing ? <Alert tone="error">{error.message}</Alert> : null}
    </Card>
  );
}
