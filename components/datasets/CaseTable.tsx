'use client';

import Link from 'next/link';
import { useMutation } from '@tanstack/react-query';
import { Fragment, memo, useEffect, useMemo, useRef, useState } from 'react';
import { Badge } from '@/components/ui/Badge';
import { Button } from '@/components/ui/Button';
import { ConfirmDialog } from '@/components/ui/ConfirmDialog';
import { TrashIcon } from '@/components/ui/icons';
import { FieldError } from '@/components/ui/FieldError';
import { DragHandle } from '@/components/prompts/DragHandle';
import { moveItem, useDragReorder } from '@/components/prompts/dragReorder';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import { CaseFields, caseErrors, toCaseRow, type CaseDraft } from './CaseFields';
import { retryAfterConflict, type DatasetActions, type DatasetScope } from './useDataset';
import { casePageSize, casePaging } from './paging';
import { quickEvaluationSize, type Dataset, type DatasetCase } from './types';

function Preview({ text, format }: { text: string; format: string }) {
  return (
    <div className="case-preview">
      <span className={format === 'json' ? 'mono' : undefined}>{text || <em className="subtle">(empty)</em>}</span>
      {format === 'json' ? <span className="format-tag">JSON</span> : null}
    </div>
  );
}

function EditRow({
  scope,
  dataset,
  row,
  actions,
  onDone,
}: {
  scope: DatasetScope;
  dataset: Dataset;
  row: DatasetCase;
  actions: DatasetActions;
  onDone: (saved: boolean) => void;
}) {
  const trpc = useTRPC();
  const [value, setValue] = useState<CaseDraft>({
    input: row.input,
    expectedOutput: row.expectedOutput,
    inputFormat: row.inputFormat,
    referenceFormat: row.referenceFormat,
  });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [message, setMessage] = useState<string | null>(null);
  const update = useMutation(
    trpc.datasets.updateCase.mutationOptions({
      onSuccess: () => onDone(true),
      onError: (error) => {
        const info = actions.handleError(error);
        // Stale revision: keep the edit open; the table now shows the stored cases and a retry uses the new revision.
        if (!info) return setMessage(retryAfterConflict);
        setErrors(info.fields);
        setMessage(Object.keys(info.fields).length ? null : info.message);
      },
      onSettled: actions.refresh,
    }),
  );
  return (
    <tr className="case-editing">
      <td colSpan={4}>
        <form
          className="stack-sm"
          aria-label={`Edit case ${row.position}`}
          noValidate
          onSubmit={(event) => {
            event.preventDefault();
            const local = caseErrors(value);
            setErrors(local);
            setMessage(null);
            if (Object.keys(local).length === 0)
              update.mutate({ ...scope, caseId: row.id, revision: dataset.revision, row: toCaseRow(value) });
          }}
          onKeyDown={(e) => e.key === 'Escape' && onDone(false)}
        >
          <CaseFields idPrefix={`case-${row.id}`} value={value} errors={errors} onChange={setValue} autoFocus />
          <FieldError id={`case-${row.id}-error`} message={message} />
          <div className="inline">
            <Button type="submit" size="sm" variant="primary" loading={update.isPending}>
              Save case
            </Button>
            <Button size="sm" variant="ghost" onClick={() => onDone(false)} disabled={update.isPending}>
              Cancel
            </Button>
          </div>
        </form>
      </td>
    </tr>
  );
}

// Memoized: the page's notices and the add form's typing do not re-render the rows.
export const CaseTable = memo(function CaseTable({
  scope,
  dataset,
  actions,
  readOnly,
}: {
  scope: DatasetScope;
  dataset: Dataset;
  actions: DatasetActions;
  readOnly: boolean;
}) {
  const trpc = useTRPC();
  const [editing, setEditing] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<{ row: DatasetCase; number: number } | null>(null);
  const [pendingOrder, setPendingOrder] = useState<string[] | null>(null);
  const [shown, setShown] = useState(casePageSize);
  const rowRefs = useRef<Record<string, HTMLTableRowElement | null>>({});
  // Said by a status region that is always in the page (one inserted with its text is often not read).
  const [announcement, setAnnouncement] = useState('');
  // After an edit or a move the row's buttons are new or moved elements: put focus back on the
  // row's button the person used (once it is rendered and enabled), not on the table body.
  const pendingFocus = useRef<{ id: string; labels: string[] } | null>(null);

  const remove = useMutation(
    trpc.datasets.deleteCase.mutationOptions({
      onSuccess: () => {
        if (deleting) actions.setNotice(`Case ${deleting.number} deleted.`, 'success');
        setDeleting(null);
      },
      onError: (error) => {
        // A stale revision: the page says so and reloads the table, whose numbering may have changed.
        if (actions.handleError(error) === null) setDeleting(null);
      },
      onSettled: actions.refresh,
    }),
  );
  const removeError = remove.error ? readAppError(remove.error) : null;
  const reorder = useMutation(
    trpc.datasets.reorder.mutationOptions({
      onError: (error) => {
        const info = actions.handleError(error);
        if (info) actions.setNotice(`The new order was not saved: ${info.message}`);
      },
      onSettled: async () => {
        await actions.refresh();
        setPendingOrder(null);
      },
    }),
  );

  // Cases the prompt's input type cannot take: flagged on their row with the reason.
  const problems = useMemo(
    () => new Map(dataset.warnings.map((warning) => [warning.caseId, warning.message])),
    [dataset.warnings],
  );

  // While a reorder is saving, show the order the user chose.
  const rows = useMemo(() => {
    if (!pendingOrder) return dataset.rows;
    const byId = new Map(dataset.rows.map((row) => [row.id, row]));
    return pendingOrder.map((id) => byId.get(id)).filter((row): row is DatasetCase => Boolean(row));
  }, [dataset.rows, pendingOrder]);
  // The first rows, so a row's index is its case number and moves use the same indexes.
  const paging = casePaging(rows.length, shown);
  const visible = rows.slice(0, paging.visible);

  function move(from: number, to: number) {
    const ids = moveItem(rows, from, to).map((row) => row.id);
    const moved = rows[from].id;
    setPendingOrder(ids);
    setAnnouncement(`Case moved to position ${to + 1}.`);
    const direction = to > from ? ['down', 'up'] : ['up', 'down'];
    pendingFocus.current = { id: moved, labels: direction.map((way) => `Move case ${to + 1} ${way}`) };
    // A case moved down past the last shown row stays in view.
    setShown((current) => Math.max(current, to + 1));
    actions.setNotice(null);
    reorder.mutate({ ...scope, revision: dataset.revision, caseIds: ids });
  }
  useEffect(() => {
    const target = pendingFocus.current;
    // The move buttons are disabled while the order saves: wait until it is saved.
    if (!target || reorder.isPending || pendingOrder) return;
    const row = rowRefs.current[target.id];
    if (!row) return;
    pendingFocus.current = null;
    target.labels
      .map((label) => row.querySelector<HTMLButtonElement>(`button[aria-label="${label}"]:not(:disabled)`))
      .find(Boolean)
      ?.focus();
  });
  const drag = useDragReorder(move, !readOnly && !reorder.isPending);

  return (
    <div className="table-wrap">
      <p className="visually-hidden" role="status">
        {announcement}
      </p>
      <table className="table case-table">
        <caption className="visually-hidden">Dataset cases</caption>
        <thead>
          <tr>
            <th scope="col" className="col-handle">
              <span className="visually-hidden">Order</span>#
            </th>
            <th scope="col">Input</th>
            <th scope="col">Expected output</th>
            <th scope="col" className="col-actions">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {visible.map((row, index) => (
            <Fragment key={row.id}>
              {editing === row.id ? (
                <EditRow
                  scope={scope}
                  dataset={dataset}
                  row={row}
                  actions={actions}
                  onDone={(saved) => {
                    setEditing(null);
                    setAnnouncement(saved ? `Case ${index + 1} saved.` : '');
                    pendingFocus.current = { id: row.id, labels: [`Edit case ${index + 1}`] };
                  }}
                />
              ) : (
                <tr ref={(el) => void (rowRefs.current[row.id] = el)} data-case={row.id} {...drag.targetProps(index)}>
                  <td className="col-handle">
                    <div className="handle-cell">
                      {!readOnly ? (
                        <DragHandle handle={drag.handleProps(index, () => rowRefs.current[row.id])} />
                      ) : null}
                      <span className="case-number">{index + 1}</span>
                    </div>
                  </td>
                  <td>
                    <Preview text={row.input} format={row.inputFormat} />
                    {row.source ? (
                      <p className="case-source" data-testid="case-source">
                        From{' '}
                        <Link
                          href={`/organizations/${scope.organizationId}/traces/${row.source.traceId}?span=${row.source.spanId}`}
                        >
                          span <code className="mono-sm">{row.source.spanId}</code>
                        </Link>
                      </p>
                    ) : null}
                    {problems.has(row.id) ? (
                      <p className="case-warning" data-testid="case-warning">
                        <Badge tone="warning">Cannot run</Badge> <span>{problems.get(row.id)}</span>
                      </p>
                    ) : null}
                  </td>
                  <td>
                    <Preview text={row.expectedOutput} format={row.referenceFormat} />
                  </td>
                  <td className="cell-actions">
                    {!readOnly ? (
                      <div className="row-actions">
                        <Button
                          size="sm"
                          variant="ghost"
                          aria-label={`Move case ${index + 1} up`}
                          disabled={index === 0 || reorder.isPending}
                          onClick={() => move(index, index - 1)}
                        >
                          ↑
                        </Button>
                        <Button
                          size="sm"
                          variant="ghost"
                          aria-label={`Move case ${index + 1} down`}
                          disabled={index === rows.length - 1 || reorder.isPending}
                          onClick={() => move(index, index + 1)}
                        >
                          ↓
                        </Button>
                        <Button
                          size="sm"
                          variant="ghost"
                          aria-label={`Edit case ${index + 1}`}
                          onClick={() => (setEditing(row.id), actions.setNotice(null))}
                        >
                          Edit
                        </Button>
                        <Button
                          size="sm"
                          variant="ghost"
                          aria-label={`Delete case ${index + 1}`}
                          onClick={() => (remove.reset(), setDeleting({ row, number: index + 1 }))}
                        >
                          <TrashIcon size={14} />
                        </Button>
                      </div>
                    ) : null}
                  </td>
                </tr>
              )}
              {index === quickEvaluationSize - 1 ? (
                <tr className="quick-divider">
                  <td colSpan={4}>
                    <span>Quick evaluations use the cases above</span>
                  </td>
                </tr>
              ) : null}
            </Fragment>
          ))}
        </tbody>
      </table>
      {paging.next > 0 ? (
        <div className="list-footer case-more">
          <span className="muted">
            Showing {paging.visible} of {rows.length} cases
          </span>
          <Button size="sm" onClick={() => setShown(paging.visible + paging.next)}>
            Show {paging.next} more
          </Button>
        </div>
      ) : null}
      <ConfirmDialog
        open={deleting !== null}
        onClose={() => setDeleting(null)}
        title={`Delete case ${deleting?.number ?? ''}?`}
        description="It is removed from the dataset and the cases after it move up. This cannot be undone."
        confirmLabel="Delete case"
        pending={remove.isPending}
        error={removeError?.message}
        onConfirm={() => deleting && remove.mutate({ ...scope, caseId: deleting.row.id, revision: dataset.revision })}
      >
        {deleting ? (
          <div className="case-delete-preview">
            <Preview text={deleting.row.input} format={deleting.row.inputFormat} />
            <Preview text={deleting.row.expectedOutput} format={deleting.row.referenceFormat} />
          </div>
        ) : null}
      </ConfirmDialog>
    </div>
  );
});
