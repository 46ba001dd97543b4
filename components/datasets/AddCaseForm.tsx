'use client';

import { useMutation } from '@tanstack/react-query';
import Link from 'next/link';
import { useState, type FormEvent } from 'react';
import { billingPath } from '@/components/billing/links';
import { useCheckoutAvailable } from '@/components/billing/checkout-availability';
import { Alert } from '@/components/ui/Alert';
import { Button } from '@/components/ui/Button';
import { PlusIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import { CaseFields, caseErrors, emptyCase, toCaseRow, type CaseDraft } from './CaseFields';
import { retryAfterConflict, type DatasetScope, type useDataset } from './useDataset';
import type { Dataset } from './types';
import { planCapacity } from '@/server/datasets/schemas';
import { useFocusFirstInvalid } from '@/components/ui/useFocusFirstInvalid';

export function AddCaseForm({
  scope,
  dataset,
  data,
}: {
  scope: DatasetScope;
  dataset: Dataset;
  data: ReturnType<typeof useDataset>;
}) {
  const trpc = useTRPC();
  const [value, setValue] = useState<CaseDraft>(emptyCase);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [message, setMessage] = useState<string | null>(null);
  const [atCapacity, setAtCapacity] = useState(false);
  // Why the case just added cannot run under the prompt's input type (it is added all the same).
  const [warning, setWarning] = useState<string | null>(null);
  // Focus goes back to the emptied Input, so nothing else tells a screen-reader user the case was added.
  const [added, setAdded] = useState('');
  const add = useMutation(
    trpc.datasets.addCase.mutationOptions({
      onSuccess: (added) => {
        setValue(emptyCase);
        setErrors({});
        setWarning(added.warnings[0]?.message ?? null);
        setAdded(`Case added: ${dataset.count + 1} of ${dataset.capacity} cases.`);
        // Ready for the next case: the cursor goes back to the first field.
        document.getElementById('new-case-input')?.focus();
      },
      onError: (error) => {
        const info = data.handleError(error);
        if (!info) return setMessage(retryAfterConflict);
        setAtCapacity(info.code === 'invalid_state' && info.details.state === 'at_capacity');
        setErrors(info.fields);
        setMessage(Object.keys(info.fields).length ? null : info.message);
      },
      onSettled: data.refresh,
    }),
  );
  const full = dataset.count >= dataset.capacity;
  const checkoutAvailable = useCheckoutAvailable();
  // Below Pro's capacity the organization is on Free: a bigger dataset is one upgrade away.
  const upgrade =
    dataset.capacity < planCapacity.pro && checkoutAvailable ? (
      <Link href={billingPath(scope.organizationId)}>Upgrade to Pro for {planCapacity.pro} cases</Link>
    ) : null;

  const { formRef, submitted } = useFocusFirstInvalid();
  function onSubmit(event: FormEvent) {
    event.preventDefault();
    submitted();
    setMessage(null);
    setWarning(null);
    setAdded('');
    setAtCapacity(false);
    const local = caseErrors(value);
    setErrors(local);
    if (Object.keys(local).length > 0) return;
    add.mutate({ ...scope, revision: dataset.revision, row: toCaseRow(value) });
  }

  return (
    <form ref={formRef} className="add-case" onSubmit={onSubmit} noValidate aria-label="Add a case">
      <div className="add-case-title">
        <strong>Add a case</strong>
        {full ? (
          <span className="muted">
            The dataset is full ({dataset.capacity} cases). Remove a case to add another.
            {upgrade ? <> {upgrade}</> : null}
          </span>
        ) : null}
      </div>
      <p className="visually-hidden" role="status">
        {added}
      </p>
      {message ? (
        <Alert tone={message === retryAfterConflict ? 'warning' : 'error'}>
          {message}
          {atCapacity && upgrade ? <> {upgrade}</> : null}
        </Alert>
      ) : null}
      {warning ? (
        <Alert tone="warning" title="Added, but this case cannot run under the prompt’s input type">
          {warning} An evaluation records it as an error without charging a credit.
        </Alert>
      ) : null}
      {!full ? (
        <>
          <CaseFields idPrefix="new-case" value={value} errors={errors} onChange={setValue} />
          <div className="inline">
            <Button type="submit" variant="primary" size="sm" icon={<PlusIcon size={14} />} loading={add.isPending}>
              Add case
            </Button>
          </div>
        </>
      ) : null}
    </form>
  );
}
