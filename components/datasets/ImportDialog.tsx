'use client';

import { useMutation } from '@tanstack/react-query';
import { useState, type ChangeEvent } from 'react';
import { Alert } from '@/components/ui/Alert';
import { Button } from '@/components/ui/Button';
import { Dialog } from '@/components/ui/Dialog';
import { Field } from '@/components/ui/Field';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import { detectKind, parseImportText, type ParseProblem, type SourceRow } from './importFile';
import type { DatasetScope, useDataset } from './useDataset';
import { ImportModeField } from './ImportModeField';
import { ImportPreviewPanel, rejectedRows, rowErrorsOfIssues } from './ImportPreviewPanel';
import type { Dataset, ImportMode, ImportPreview, ImportResult } from './types';

export function ImportDialog({
  open,
  onClose,
  scope,
  dataset,
  data,
}: {
  open: boolean;
  onClose: () => void;
  scope: DatasetScope;
  dataset: Dataset;
  data: ReturnType<typeof useDataset>;
}) {
  const trpc = useTRPC();
  const [text, setText] = useState('');
  const [fileName, setFileName] = useState<string | null>(null);
  const [mode, setMode] = useState<ImportMode>('append');
  const [rows, setRows] = useState<SourceRow[]>([]);
  const [problems, setProblems] = useState<ParseProblem[]>([]);
  const [fatal, setFatal] = useState<string | null>(null);
  const [result, setResult] = useState<ImportResult | null>(null);

  const preview = useMutation(trpc.datasets.previewImport.mutationOptions());
  const runImport = useMutation(
    trpc.datasets.import.mutationOptions({
      onSuccess: (imported) => setResult(imported),
      onError: (error) => {
        // Stale revision: the dataset is refetched; preview again against what is stored now.
        if (data.handleError(error) === null) requestPreview(rows, mode);
      },
      onSettled: data.refresh,
    }),
  );
  const previewData = preview.data;
  const importError = readAppError(runImport.error);
  const importDetails =
    importError?.code === 'import_rejected' ? (importError.details as Partial<ImportPreview>) : null;
  // A row the server refuses outright (U+0000, a lone surrogate: 400 before any preview) is named too.
  const previewError = readAppError(preview.error);
  const refusedRows = [...rowErrorsOfIssues(previewError?.fields), ...rowErrorsOfIssues(importError?.fields)];
  const rejected = rejectedRows(rows, problems, [
    ...(previewData?.rowErrors ?? []),
    ...(importDetails?.rowErrors ?? []),
    ...refusedRows,
  ]);
  const skipped = (previewData?.skippedRows ?? []).map((skip) => rows[skip.row - 1]?.sourceRow ?? skip.row);

  function reset() {
    setText('');
    setFileName(null);
    setRows([]);
    setProblems([]);
    setFatal(null);
    setResult(null);
    setMode('append');
    preview.reset();
    runImport.reset();
  }

  function close() {
    // After a successful import the mutation still awaits its refetch; closing is fine then.
    if (runImport.isPending && !result) return;
    reset();
    onClose();
  }

  function requestPreview(nextRows: SourceRow[], nextMode: ImportMode) {
    runImport.reset();
    if (nextRows.length === 0) return preview.reset();
    preview.mutate({ ...scope, mode: nextMode, rows: nextRows.map((row) => row.row) });
  }

  function parse(source: string, name: string | null) {
    const parsed = parseImportText(detectKind(name, source), source);
    setRows(parsed.rows);
    setProblems(parsed.problems);
    setFatal(parsed.fatal);
    requestPreview(parsed.fatal ? [] : parsed.rows, mode);
  }

  async function onFile(event: ChangeEvent<HTMLInputElement>) {
    const file = event.target.files?.[0];
    if (!file) return;
    const content = await file.text();
    setFileName(file.name);
    setText(content);
    parse(content, file.name);
  }

  function removeRow(sourceRow: number) {
    const nextRows = rows.filter((row) => row.sourceRow !== sourceRow);
    setRows(nextRows);
    setProblems((current) => current.filter((problem) => problem.sourceRow !== sourceRow));
    requestPreview(nextRows, mode);
  }

  const parsedSomething = rows.length > 0 || problems.length > 0 || fatal !== null;
  const canImport =
    Boolean(previewData?.accepted) && rejected.length === 0 && rows.length > 0 && !preview.isPending && !result;
  const countAfter = previewData
    ? mode === 'replace'
      ? previewData.wouldAdd
      : previewData.currentCount + previewData.wouldAdd
    : null;

  return (
    <Dialog
      open={open}
      onClose={close}
      title="Import cases"
      description="CSV with the columns input and expectedOutput (optional inputFormat, referenceFormat), or JSONL with one object per line."
      footer={
        result ? (
          // The import button that had focus is gone: the result's only action takes it.
          <Button variant="primary" onClick={close} autoFocus>
            Done
          </Button>
        ) : (
          <>
            <Button onClick={close} disabled={runImport.isPending}>
              Cancel
            </Button>
            <Button
              variant="primary"
              disabled={!canImport}
              loading={runImport.isPending}
              onClick={() =>
                runImport.mutate({ ...scope, revision: dataset.revision, mode, rows: rows.map((row) => row.row) })
              }
            >
              {runImport.isPending
                ? 'Importing…'
                : previewData
                  ? `Import ${previewData.wouldAdd} ${previewData.wouldAdd === 1 ? 'case' : 'cases'}`
                  : 'Import'}
            </Button>
          </>
        )
      }
    >
      <div className="import-body">
        <p className="visually-hidden" role="status">
          {!result && parsedSomething && !fatal && previewData && !preview.isPending
            ? `Preview: ${rows.length + problems.length} ${rows.length + problems.length === 1 ? 'row' : 'rows'} read, ${previewData.wouldAdd} to add.`
            : ''}
        </p>
        {result ? (
          <>
            <Alert tone="success" title="Import complete">
              Added {result.added} {result.added === 1 ? 'case' : 'cases'}
              {result.skipped ? `, skipped ${result.skipped} ${result.skipped === 1 ? 'duplicate' : 'duplicates'}` : ''}
              . The dataset now has {result.count} cases.
            </Alert>
            {result.warnings.length ? (
              <Alert
                tone="warning"
                title={`${result.warnings.length} imported ${result.warnings.length === 1 ? 'row cannot' : 'rows cannot'} run under this prompt’s input type`}
              >
                Rows {result.warnings.map((warning) => warning.row).join(', ')}: {result.warnings[0].message}{' '}
                Evaluations record such cases as errors without charging a credit; they are flagged in the table.
              </Alert>
            ) : null}
          </>
        ) : (
          <>
            <div className="import-source">
              <Field
                id="import-file"
                label="File"
                hint={
                  fileName
                    ? `${fileName} · read as ${detectKind(fileName, text).toUpperCase()}`
                    : 'Read in your browser; nothing is uploaded until you import.'
                }
              >
                <input
                  id="import-file"
                  aria-describedby="import-file-hint"
                  className="file-input"
                  type="file"
                  accept=".csv,.jsonl,.ndjson,.json,text/csv,application/x-ndjson"
                  onChange={onFile}
                />
              </Field>
              <Field label="Or paste" id="import-paste">
                <textarea
                  id="import-paste"
                  // Text that cannot be read at all marks the box itself, described by the reason below.
                  aria-invalid={fatal && fileName === null ? true : undefined}
                  aria-describedby={fatal && fileName === null ? 'import-paste-error' : undefined}
                  className="textarea mono"
                  rows={4}
                  value={text}
                  placeholder={'input,expectedOutput\n"Where is my order?","Let me check the status for you."'}
                  onChange={(e) => {
                    setText(e.target.value);
                    setFileName(null);
                  }}
                  onBlur={() => text.trim() && fileName === null && parse(text, null)}
                />
              </Field>
            </div>
            <ImportModeField
              mode={mode}
              existingCount={dataset.count}
              onChange={(value) => {
                setMode(value);
                requestPreview(rows, value);
              }}
            />
            {fileName === null && text.trim() ? (
              <div>
                <Button size="sm" onClick={() => parse(text, null)}>
                  Preview pasted text
                </Button>
              </div>
            ) : null}

            {fatal ? (
              <Alert id="import-paste-error" tone="error">
                {fatal}
              </Alert>
            ) : null}
            {preview.isError ? (
              <Alert tone="error">
                {previewError?.message}
                {refusedRows.length ? ' Remove or fix the rows named below.' : null}
              </Alert>
            ) : null}
            {importError && !importDetails ? <Alert tone="error">{importError.message}</Alert> : null}
            {data.notice?.tone === 'warning' ? <Alert tone="warning">{data.notice.text}</Alert> : null}

            {parsedSomething && !fatal ? (
              <ImportPreviewPanel
                rowsRead={rows.length + problems.length}
                pending={preview.isPending}
                previewData={previewData}
                importDetails={importDetails}
                skipped={skipped}
                rejected={rejected}
                onRemoveRow={removeRow}
                capacity={dataset.capacity}
                countAfter={countAfter}
                organizationId={scope.organizationId}
                replacing={mode === 'replace'}
              />
            ) : null}
          </>
        )}
      </div>
    </Dialog>
  );
}
