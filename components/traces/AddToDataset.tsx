'use client';

import { useMutation, useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import type { Span } from '@/server/traces/schemas';
import { planCapacity, type InputWarning } from '@/server/datasets/schemas';
import { useCheckoutAvailable } from '@/components/billing/checkout-availability';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError, type AppErrorInfo } from '@/lib/trpc/errors';
import { Alert } from '@/components/ui/Alert';
import { Button, ButtonLink } from '@/components/ui/Button';
import { Dialog } from '@/components/ui/Dialog';
import { FieldError } from '@/components/ui/FieldError';
import { SkeletonRows } from '@/components/ui/States';
import { formatCount } from '@/components/format';
import { missingContentMessage, spanCaseWarning } from './span-case';

// "Add to dataset" on a model span that names a prompt version and has content (API.md "From a span
// to a case"): the dialog shows the case the server will make (traces.caseFromSpan, the same mapping
// as POST …/dataset/cases/from-span), lets the expected output be edited, and adds it at the
// dataset's current revision. The operation takes no input override, so when the span's input cannot
// run under the prompt (a variables prompt given text) the dialog says so before adding, and the
// case is fixed on the Dataset page.

export const offersAddToDataset = (span: Span) =>
  span.kind === 'model' && span.promptVersionId !== null && span.contentJson !== null;

const datasetHref = (organizationId: string, promptId: string) =>
  `/organizations/${organizationId}/prompts/${promptId}/dataset`;

type Added = { position: number; promptId: string; promptName: string; warnings: InputWarning[] };

// Where each refusal shows: the pair's duplicate and the output's problems next to the expected
// output, the input's next to the input, anything else above the form.
function placeError(error: AppErrorInfo): { field: 'input' | 'expectedOutput' | null; message: string } {
  const state = error.details.state;
  if (state === 'duplicate')
    return {
      field: 'expectedOutput',
      message: 'The dataset already has a case with this input and this expected output. Change the expected output.',
    };
  if (error.code === 'dataset_conflict')
    return { field: null, message: 'The dataset changed while this was open. Check the case below and add it again.' };
  const field = typeof error.details.field === 'string' ? error.details.field : Object.keys(error.fields)[0];
  if (field === 'input' || field === 'expectedOutput') return { field, message: error.fields[field] ?? error.message };
  return { field: null, message: error.message };
}

function CaseText({ text, format }: { text: string; format: string }) {
  return (
    <div className="span-case-text">
      <pre className={format === 'json' ? 'mono-sm' : undefined}>{text}</pre>
      {format === 'json' ? <span className="span-case-format">JSON</span> : null}
    </div>
  );
}

function AddToDatasetDialog({
  organizationId,
  span,
  onClose,
}: {
  organizationId: string;
  span: Span;
  onClose: () => void;
}) {
  const trpc = useTRPC();
  const ids = { input: useId(), expected: useId() };
  const preview = useQuery({
    ...trpc.traces.caseFromSpan.queryOptions({ organizationId, traceId: span.traceId, spanId: span.spanId }),
    staleTime: 0,
  });
  const [expected, setExpected] = useState<string | null>(null);
  const [error, setError] = useState<{ field: 'input' | 'expectedOutput' | null; message: string } | null>(null);
  const [added, setAdded] = useState<Added | null>(null);
  const add = useMutation(
    trpc.datasets.addFromSpan.mutationOptions({
      onSuccess: (result) => {
        const prompt = preview.data?.prompt;
        if (prompt)
          setAdded({
            position: result.position,
            promptId: prompt.id,
            promptName: prompt.name,
            warnings: result.warnings,
          });
      },
      onError: (failure) => {
        const info = readAppError(failure);
        if (!info) return;
        setError(placeError(info));
        if (info.code === 'dataset_conflict') void preview.refetch();
      },
    }),
  );

  const data = preview.data;
  const row = data?.row ?? null;
  // The content the server checks cases against (the caller's draft, else the latest version), to
  // warn before adding rather than after.
  const checkable = Boolean(data?.prompt && !data.prompt.archived && row);
  const draft = useQuery({
    ...trpc.prompts.getDraft.queryOptions({ organizationId, promptId: data?.prompt?.id ?? '' }),
    enabled: checkable,
  });
  const warning = checkable && row && draft.data ? spanCaseWarning(draft.data.content, row) : null;
  const expectedOutput = expected ?? row?.expectedOutput ?? '';
  const full = data?.dataset ? data.dataset.count >= data.dataset.capacity : false;
  // A bigger dataset is one upgrade away only on Free, and only where this server sells Pro.
  const checkoutAvailable = useCheckoutAvailable();
  const upgradable = checkoutAvailable && (data?.dataset?.capacity ?? planCapacity.pro) < planCapacity.pro;
  const problem = data?.problem ?? null;
  // The span has an input but no output: the case needs the expected output typed in.
  const needsOutput = problem?.state === 'no_output';
  const blocked =
    !data?.prompt || data.prompt.archived || !row || !data.dataset || (needsOutput && !expectedOutput.trim());
  const duplicate =
    data?.duplicateOf && expected === null
      ? 'The dataset already has this case. Change the expected output to add another.'
      : null;
  const expectedError =
    error?.field === 'expectedOutput'
      ? error.message
      : problem?.field === 'expectedOutput' && !needsOutput
        ? problem.message
        : duplicate;
  const inputError = error?.field === 'input' ? error.message : problem?.field === 'input' ? problem.message : null;

  function submit() {
    if (!data?.prompt || !data.dataset || !row) return;
    setError(null);
    add.mutate({
      organizationId,
      promptId: data.prompt.id,
      revision: data.dataset.revision,
      traceId: span.traceId,
      spanId: span.spanId,
      ...(expectedOutput === row.expectedOutput ? {} : { expectedOutput }),
    });
  }

  // A span refused for lacking content: say which part it lacks.
  const problemMessage =
    problem?.state === 'no_content' ? missingContentMessage(span.contentJson) : (problem?.message ?? null);

  let body;
  if (added) {
    body = (
      <div className="stack-sm">
        <Alert tone="success" title="Case added">
          Case {added.position} of the dataset of {added.promptName} now holds this span’s input, with the span as its
          source.
        </Alert>
        {added.warnings.length ? (
          <Alert tone="warning" title="This case cannot run under the prompt’s input type">
            {added.warnings[0].message} Edit its input on the Dataset page; until then an evaluation records it as an
            error without charging a credit.
          </Alert>
        ) : null}
      </div>
    );
  } else if (preview.isPending) {
    body = <SkeletonRows rows={3} label="Reading the span" />;
  } else if (preview.isError) {
    body = <Alert tone="error">{readAppError(preview.error)?.message ?? 'Could not read the span.'}</Alert>;
  } else if (!data?.prompt) {
    body = (
      <Alert tone="warning">
        This span’s prompt version (<code className="mono-sm">{span.promptVersionId}</code>) is not a version of this
        organization’s prompts, so there is no dataset to add it to.
      </Alert>
    );
  } else {
    body = (
      <div className="stack-sm span-case">
        <p className="muted">
          To the dataset of <strong>{data.prompt.name}</strong> (this span ran v{data.prompt.version})
          {data.dataset
            ? `, which holds ${formatCount(data.dataset.count)} of ${formatCount(data.dataset.capacity)} cases`
            : ''}
          .
        </p>
        {data.prompt.archived ? <Alert tone="warning">This prompt is archived: its dataset is read-only.</Alert> : null}
        {full && !data.prompt.archived ? (
          <Alert tone="warning">
            The dataset is full. Remove a case{upgradable ? ', or upgrade to Pro,' : ''} to add this one.
          </Alert>
        ) : null}
        {error && error.field === null ? <Alert tone="error">{error.message}</Alert> : null}
        {/* Without a case to show, a problem of the input or output has no field to sit beside. */}
        {problem && (problem.field === null || !row) ? <Alert tone="error">{problemMessage}</Alert> : null}
        {row ? (
          <>
            <div className="span-case-field">
              <p className="field-label" id={ids.input}>
                Input
              </p>
              <div role="group" aria-labelledby={ids.input}>
                <CaseText text={row.input} format={row.inputFormat} />
              </div>
              <FieldError message={inputError} />
              {warning && !inputError ? (
                <Alert tone="warning" title="This input cannot run under the prompt’s input type">
                  {warning.message} The case is added with the span’s input as it is; edit its input on the Dataset page
                  afterwards to a JSON object such as <code className="mono-sm">{warning.example}</code>. Until then an
                  evaluation records it as an error without charging a credit.
                </Alert>
              ) : null}
            </div>
            <div className="span-case-field">
              <label className="field-label" htmlFor={ids.expected}>
                Expected output
              </label>
              <textarea
                id={ids.expected}
                className={['input span-case-textarea', row.referenceFormat === 'json' && 'mono']
                  .filter(Boolean)
                  .join(' ')}
                rows={5}
                value={expectedOutput}
                aria-invalid={expectedError ? true : undefined}
                aria-describedby={expectedError ? `${ids.expected}-error` : `${ids.expected}-hint`}
                onChange={(event) => {
                  setExpected(event.target.value);
                  if (error?.field === 'expectedOutput') setError(null);
                }}
              />
              <FieldError id={`${ids.expected}-error`} message={expectedError} />
              <p className="field-hint" id={`${ids.expected}-hint`}>
                {needsOutput
                  ? 'This span has no output (a failed call keeps only its input): type the answer you expect.'
                  : `The span’s output${row.referenceFormat === 'json' ? ' (JSON)' : ''}. Edit it to the answer you expect.`}
              </p>
            </div>
          </>
        ) : null}
      </div>
    );
  }

  return (
    <Dialog
      open
      onClose={onClose}
      title="Add to dataset"
      description="A dataset case from this span: its input, and its output as the expected output."
      footer={
        added ? (
          <>
            <Button onClick={onClose}>Close</Button>
            <ButtonLink variant="primary" href={datasetHref(organizationId, added.promptId)}>
              Open the dataset
            </ButtonLink>
          </>
        ) : (
          <>
            <Button onClick={onClose} disabled={add.isPending}>
              Cancel
            </Button>
            <Button variant="primary" loading={add.isPending} disabled={blocked || full} onClick={submit}>
              Add case
            </Button>
          </>
        )
      }
    >
      {body}
    </Dialog>
  );
}

export function AddToDataset({ organizationId, span }: { organizationId: string; span: Span }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <Button size="sm" onClick={() => setOpen(true)}>
        Add to dataset
      </Button>
      {open ? <AddToDatasetDialog organizationId={organizationId} span={span} onClose={() => setOpen(false)} /> : null}
    </>
  );
}
