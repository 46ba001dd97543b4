'use client';

import Link from 'next/link';
import { useMutation } from '@tanstack/react-query';
import { Fragment, useRef, useState } from 'react';
import { Badge } from '@/components/ui/Badge';
import { Button } from '@/components/ui/Button';
import { TrashIcon } from '@/components/ui/icons';
import { FieldError } from '@/components/ui/FieldError';
import { DragHandle } from '@/components/prompts/DragHandle';
import { moveItem, useDragReorder } from '@/components/prompts/dragReorder';
import { useTRPC } from '@/lib/trpc/client';
import { CaseFields, caseErrors, toCaseRow, type CaseDraft } from './CaseFields';
import { retryAfterConflict, type DatasetScope, type useDataset } from './useDataset';
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
  data,
  onDone,
}: {
  scope: DatasetScope;
  dataset: Dataset;
  row: DatasetCase;
  data: ReturnType<typeof useDataset>;
  onDone: () => void;
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
      onSuccess: onDone,
      onError: (error) => {
        const info = data.handleError(error);
        // Stale revision: keep the edit open; the table now shows the stored cases and a retry uses the new revision.
        if (!info) return setMessage(retryAfterConflict);
        setErrors(info.fields);
        setMessage(Object.keys(info.fields).length ? null : info.message);
      },
      onSettled: data.refresh,
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
          onKeyDown={(e) => e.key === 'Escape' && onDone()}
        >
          <CaseFields idPrefix={`case-${row.id}`} value={value} errors={errors} onChange={setValue} autoFocus />
          <FieldError id={`case-${row.id}-error`} message={message} />
          <div className="inline">
            <Button type="submit" size="sm" variant="primary" loading={update.isPending}>
              Save case
            </Button>
            <Button size="sm" variant="ghost" onClick={onDone} disabled={update.isPending}>
              Cancel
            </Button>
          </div>
        </form>
      </td>
    </tr>
  );
}

export function CaseTable({
  scope,
  dataset,
  data,
  readOnly,
}: {
  scope: DatasetScope;
  dataset: Dataset;
  data: ReturnType<typeof useDataset>;
  readOnly: boolean;
}) {
  const trpc = useTRPC();
  const [editing, setEditing] = useState<string | null>(null);
  const [rowErrors, setRowErrors] = useState<Record<string, string>>({});
  const [pendingOrder, setPendingOrder] = useState<string[] | null>(null);
  const rowRefs = useRef<Record<string, HTMLTableRowElement | null>>({});

  const remove = useMutation(
    trpc.datasets.deleteCase.mutationOptions({
      onError: (error, input) => {
        const info = data.handleError(error);
        if (info) setRowErrors((current) => ({ ...current, [input.caseId]: info.message }));
      },
      onSettled: data.refresh,
    }),
  );
  const reorder = useMutation(
    trpc.datasets.reorder.mutationOptions({
      onError: (error) => {
        const info = data.handleError(error);
        if (info) data.setNotice(`The new order was not saved: ${info.message}`);
      },
      onSettled: async () => {
        await data.refresh();
        setPendingOrder(null);
      },
    }),
  );

  // Cases the prompt's input type cannot take: flagged on their row with the reason.
  const problems = new Map(dataset.warnings.map((warning) => [warning.caseId, warning.message]));

  // While a reorder is saving, show the order the user chose.
  const byId = new Map(dataset.rows.map((row) => [row.id, row]));
  const rows = pendingOrder
    ? pendingOrder.map((id) => byId.get(id)).filter((row): row is DatasetCase => Boolean(row))
    : dataset.rows;

  function move(from: number, to: number) {
    const ids = moveItem(rows, from, to).map((row) => row.id);
    setPendingOrder(ids);
    data.setNotice(null);
    reorder.mutate({ ...scope, revision: dataset.revision, caseIds: ids });
  }
  const drag = useDragReorder(move, !readOnly && !reorder.isPending);

  return (
    <div className="table-wrap">
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
          {rows.map((row, index) => (
            <Fragment key={row.id}>
              {editing === row.id ? (
                <EditRow scope={scope} dataset={dataset} row={row} data={data} onDone={() => setEditing(null)} />
              ) : (
                <tr ref={(el) => void (rowRefs.current[row.id] = el)} data-case={row.id} {...drag.targetProps(index)}>
                  <td className="col-handle">
                    <div className="handle-cell">
                      {!readOnly ? (
                        <DragHandle
                          label={`Drag case ${index + 1}`}
                          handle={drag.handleProps(index, () => rowRefs.current[row.id])}
                        />
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
                          onClick={() => (setEditing(row.id), data.setNotice(null))}
                        >
                          Edit
                        </Button>
                        <Button
                          size="sm"
                          variant="ghost"
                          aria-label={`Delete case ${index + 1}`}
                          loading={remove.isPending && remove.variables?.caseId === row.id}
                          onClick={() => {
                            setRowErrors((current) => ({ ...current, [row.id]: '' }));
                            remove.mutate({ ...scope, caseId: row.id, revision: dataset.revision });
                          }}
                        >
                          <TrashIcon size={14} />
                        </Button>
                      </div>
                    ) : null}
                    <FieldError id={`case-${row.id}-row-error`} message={rowErrors[row.id]} />
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
    </div>
  );
}
