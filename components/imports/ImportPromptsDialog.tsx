'use client';

import Link from 'next/link';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState, type ChangeEvent, type DragEvent } from 'react';
import { Alert } from '@/components/ui/Alert';
import { Button } from '@/components/ui/Button';
import { Dialog } from '@/components/ui/Dialog';
import { Field, Input } from '@/components/ui/Field';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import type { ConflictPolicy, ImportInput, ImportSource } from '@/server/imports/schemas';
import { CommandLine } from './CommandLine';
import {
  cliImportCommand,
  dashboardRequestLimitBytes,
  formatBytes,
  importProblems,
  parseDocumentText,
  promptCount,
  tooLargeForDashboard,
  utf8Bytes,
} from './importDocument';
import { ImportProblemsView, ImportReportView } from './ImportReportView';
import { importGuidePath } from './links';
import { sourceOption, sourceOptions } from './sources';
import '@/components/evals/evals.css';
import '@/components/prompts/prompts.css';
import './imports.css';

type Request = Omit<ImportInput, 'dryRun'> & { organizationId: string };

function SourceField({ source, onChange }: { source: ImportSource; onChange: (source: ImportSource) => void }) {
  return (
    <fieldset className="choice-group">
      <legend className="field-label">Source</legend>
      <div className="choices" role="radiogroup" aria-label="Source">
        {sourceOptions.map((option) => (
          <label key={option.value} className="choice" data-checked={option.value === source || undefined}>
            <input
              type="radio"
              name="import-source"
              value={option.value}
              checked={option.value === source}
              onChange={() => onChange(option.value)}
            />
            <span className="choice-title">{option.title}</span>
            <span className="choice-text">{option.hint}</span>
          </label>
        ))}
      </div>
    </fieldset>
  );
}

function ConflictField({ value, onChange }: { value: ConflictPolicy; onChange: (value: ConflictPolicy) => void }) {
  return (
    <fieldset className="segmented-field">
      <legend className="field-label">When a prompt with the same name exists</legend>
      <div className="segmented" role="radiogroup" aria-label="When a prompt with the same name exists">
        {(['skip', 'rename'] as const).map((policy) => (
          <label key={policy} className="segment" data-checked={value === policy || undefined}>
            <input
              type="radio"
              name="import-conflict"
              value={policy}
              checked={value === policy}
              onChange={() => onChange(policy)}
            />
            {policy === 'skip' ? 'Skip it' : 'Import a copy'}
          </label>
        ))}
      </div>
      <p className="field-hint">
        {value === 'skip'
          ? 'The existing prompt is left alone and reported as skipped. Names match exactly.'
          : 'Imported as “Name (imported)”, “Name (imported 2)”, …'}
      </p>
    </fieldset>
  );
}

// Import prompts from another tool (API.md "Moving prompts in and out"): choose the source, paste or
// upload the document, preview (a dry run that writes nothing), then import.
export function ImportPromptsDialog({
  organizationId,
  open,
  onClose,
}: {
  organizationId: string;
  open: boolean;
  onClose: () => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [source, setSource] = useState<ImportSource>('openai');
  const [text, setText] = useState('');
  const [fileName, setFileName] = useState<string | null>(null);
  const [onConflict, setOnConflict] = useState<ConflictPolicy>('skip');
  const [productionVersion, setProductionVersion] = useState('');
  const [documentError, setDocumentError] = useState<string | null>(null);
  const [versionError, setVersionError] = useState<string | null>(null);
  // Bytes of a document too large for the dashboard's 1 MiB request limit.
  const [oversize, setOversize] = useState<number | null>(null);
  // The request the preview answered: Import sends exactly that one.
  const [previewed, setPreviewed] = useState<Request | null>(null);

  const preview = useMutation(trpc.imports.importPrompts.mutationOptions());
  const run = useMutation(
    trpc.imports.importPrompts.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries(trpc.prompts.list.pathFilter()),
    }),
  );
  const option = sourceOption(source);
  const error = readAppError(run.error ?? preview.error);
  const problems =
    error?.code === 'import_rejected' || error?.code === 'invalid_request' ? importProblems(error.details) : [];
  const serverTooLarge = error?.code === 'payload_too_large';
  const fieldError = error?.fields.productionVersion ?? null;
  const documentFieldError = error?.fields.document ?? null;
  const otherError =
    error && !problems.length && !serverTooLarge && !fieldError && !documentFieldError ? error.message : null;
  const result = run.data ?? null;
  const report = result ?? (previewed ? preview.data : undefined);
  const creating = preview.data?.prompts.filter((prompt) => prompt.action === 'create').length ?? 0;
  const origin = typeof window === 'undefined' ? '' : window.location.origin;
  // The answer appears below the form: bring it into view when it arrives.
  const outcome = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (preview.data || preview.error || run.error) outcome.current?.scrollIntoView({ block: 'nearest' });
  }, [preview.data, preview.error, run.error]);
  const command = cliImportCommand({ origin, organizationId, source, fileName, onConflict, dryRun: true });

  // Any change of the inputs makes the preview stale: preview again before importing.
  function edited() {
    setPreviewed(null);
    setDocumentError(null);
    setOversize(null);
    preview.reset();
    run.reset();
  }

  function reset() {
    edited();
    setSource('openai');
    setText('');
    setFileName(null);
    setOnConflict('skip');
    setProductionVersion('');
    setVersionError(null);
  }

  function close() {
    if (run.isPending) return;
    reset();
    onClose();
  }

  function buildRequest(): Request | null {
    const parsed = parseDocumentText(text);
    if (!parsed.ok) {
      setDocumentError(parsed.message);
      return null;
    }
    const version = productionVersion.trim();
    if (option.takesProductionVersion && version !== '' && !/^[1-9]\d{0,8}$/.test(version)) {
      setVersionError('A version number: 1 or more.');
      return null;
    }
    const document = parsed.document as ImportInput['document'];
    const bytes = utf8Bytes(JSON.stringify(document));
    if (tooLargeForDashboard(bytes)) {
      setOversize(bytes);
      return null;
    }
    return {
      organizationId,
      source,
      document,
      onConflict,
      ...(option.takesProductionVersion && version !== '' ? { productionVersion: Number(version) } : {}),
    };
  }

  function onPreview() {
    edited();
    const request = buildRequest();
    if (!request) return;
    setPreviewed(request);
    preview.mutate({ ...request, dryRun: true });
  }

  function onImport() {
    // No Idempotency-Key over tRPC: the button stays disabled while the import runs, so it is sent once.
    if (!previewed || run.isPending || result) return;
    run.mutate({ ...previewed, dryRun: false });
  }

  async function readFile(file: File) {
    edited();
    setFileName(file.name);
    // A file over the limit is not read into the page at all: the CLI sends it.
    if (tooLargeForDashboard(file.size)) {
      setText('');
      setOversize(file.size);
      return;
    }
    setText(await file.text());
  }

  function onFile(event: ChangeEvent<HTMLInputElement>) {
    const file = event.target.files?.[0];
    if (file) void readFile(file);
  }

  function onDrop(event: DragEvent<HTMLTextAreaElement>) {
    const file = event.dataTransfer.files[0];
    if (!file) return;
    event.preventDefault();
    void readFile(file);
  }

  const tooLarge = oversize !== null || serverTooLarge;
  const pasteError =
    documentError ??
    documentFieldError ??
    (tooLarge
      ? `Too large for the dashboard, which sends at most ${formatBytes(dashboardRequestLimitBytes)} per request: import it with the CLI below (up to 8 MiB).`
      : null);
  const canImport = Boolean(previewed && preview.data && !preview.isPending && creating > 0 && !result);

  return (
    <Dialog
      open={open}
      onClose={close}
      title="Import prompts"
      description={
        <>
          Bring prompts, versions, labels and test cases from another tool. The preview shows what carries over and what
          does not; nothing is stored until you import.{' '}
          <Link href={importGuidePath(organizationId)}>Guide: coming from OpenAI prompts or Langfuse</Link>
        </>
      }
      footer={
        result ? (
          <Button variant="primary" onClick={close}>
            Done
          </Button>
        ) : (
          <>
            <Button onClick={close} disabled={run.isPending}>
              Cancel
            </Button>
            <Button onClick={onPreview} loading={preview.isPending} disabled={run.isPending}>
              Preview
            </Button>
            <Button variant="primary" onClick={onImport} loading={run.isPending} disabled={!canImport}>
              {run.isPending ? 'Importing…' : creating ? `Import ${promptCount(creating)}` : 'Import'}
            </Button>
          </>
        )
      }
    >
      <div className="prompt-import">
        {result ? (
          <Alert tone="success" title="Import complete">
            {summary(result.prompts.map((prompt) => prompt.action))} Open a prompt below to see its versions and labels.
          </Alert>
        ) : (
          <>
            <SourceField
              source={source}
              onChange={(value) => {
                edited();
                setSource(value);
              }}
            />
            <details className="import-example">
              <summary>Example: {option.title}</summary>
              <pre className="mono">{JSON.stringify(option.example, null, 2)}</pre>
              <Button
                size="sm"
                onClick={() => {
                  edited();
                  setFileName(null);
                  setText(JSON.stringify(option.example, null, 2));
                }}
              >
                Use this example
              </Button>
            </details>
            <div className="prompt-import-source">
              <Field
                id="import-prompts-file"
                label="Upload JSON"
                hint={
                  fileName
                    ? `${fileName}${oversize !== null ? ` · ${formatBytes(oversize)}` : ''}`
                    : 'Read in your browser; nothing is sent until you preview.'
                }
              >
                <input
                  id="import-prompts-file"
                  aria-describedby="import-prompts-file-hint"
                  className="file-input"
                  type="file"
                  accept=".json,application/json"
                  onChange={onFile}
                />
              </Field>
              <Field
                id="import-prompts-document"
                label="Or paste JSON"
                error={pasteError}
                hint="Or drop a .json file here."
              >
                <textarea
                  id="import-prompts-document"
                  aria-invalid={pasteError ? true : undefined}
                  aria-describedby={`${pasteError ? 'import-prompts-document-error ' : ''}import-prompts-document-hint`}
                  className="textarea mono"
                  rows={8}
                  value={text}
                  spellCheck={false}
                  placeholder={JSON.stringify(option.example)}
                  onChange={(e) => {
                    edited();
                    setFileName(null);
                    setText(e.target.value);
                  }}
                  onDragOver={(e) => e.preventDefault()}
                  onDrop={onDrop}
                />
              </Field>
            </div>
            {tooLarge ? <CommandLine command={command} label="CLI command for this import" /> : null}
            <div className="import-options">
              <ConflictField
                value={onConflict}
                onChange={(value) => {
                  edited();
                  setOnConflict(value);
                }}
              />
              {option.takesProductionVersion ? (
                <Field
                  label="Production version (optional)"
                  error={versionError ?? fieldError}
                  hint="The version that gets the production label; by default the highest."
                >
                  <Input
                    inputMode="numeric"
                    value={productionVersion}
                    placeholder="Highest"
                    onChange={(e) => {
                      edited();
                      setVersionError(null);
                      setProductionVersion(e.target.value);
                    }}
                  />
                </Field>
              ) : null}
            </div>
          </>
        )}

        <div ref={outcome} className="prompt-import-outcome">
          {otherError ? <Alert tone="error">{otherError}</Alert> : null}
          {problems.length ? <ImportProblemsView problems={problems} /> : null}
          {run.isPending ? (
            <p className="muted" role="status">
              Importing {promptCount(creating)}: versions, labels and test cases are stored in one step…
            </p>
          ) : null}
          {report ? (
            <ImportReportView report={report} organizationId={organizationId} stored={Boolean(result)} />
          ) : null}
          {preview.data && !result && creating === 0 && preview.data.prompts.length > 0 ? (
            <Alert tone="warning">
              Every prompt in the document exists already. Choose “Import a copy” to import them under new names.
            </Alert>
          ) : null}
        </div>
      </div>
    </Dialog>
  );
}

function summary(actions: ('create' | 'skip')[]): string {
  const created = actions.filter((action) => action === 'create').length;
  const skipped = actions.length - created;
  return `Imported ${promptCount(created)}${skipped ? `, skipped ${skipped} that existed already` : ''}.`;
}
