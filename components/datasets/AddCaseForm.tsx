'use client';

import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Alert } from '@/components/ui/Alert';
import { Button } from '@/components/ui/Button';
import { PlusIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import { CaseFields, caseErrors, emptyCase, toCaseRow, type CaseDraft } from './CaseFields';
import { retryAfterConflict, type DatasetScope, type useDataset } from './useDataset';
import type { Dataset } from './types';

export function AddCaseForm({ scope, dataset, data }: { scope: DatasetScope; dataset: Dataset; data: ReturnType<typeof useDataset> }) {
  const trpc = useTRPC();
  const [value, setValue] = useState<CaseDraft>(emptyCase);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [message, setMessage] = useState<string | null>(null);
  const add = useMutation(
    trpc.datasets.addCase.mutationOptions({
      onSuccess: () => {
        setValue(emptyCase);
        setErrors({});
      },
      onError: (error) => {
        const info = data.handleError(error);
        if (!info) return setMessage(retryAfterConflict);
        setErrors(info.fields);
        setMessage(Object.keys(info.fields).length ? null : info.message);
      },
      onSettled: data.refresh,
    }),
  );
  const full = dataset.count >= dataset.capacity;

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    setMessage(null);
    const local = caseErrors(value);
    setErrors(local);
    if (Object.keys(local).length > 0) return;
    add.mutate({ ...scope, revision: dataset.revision, row: toCaseRow(value) });
  }

  return (
    <form className="add-case" onSubmit={onSubmit} noValidate aria-label="Add a case">
      <div className="add-case-title">
        <strong>Add a case</strong>
        {full ? <span className="muted">The dataset is full ({dataset.capacity} cases). Remove a case or upgrade to Pro for 500.</span> : null}
      </div>
      {message ? <Alert tone={message === retryAfterConflict ? 'warning' : 'error'}>{message}</Alert> : null}
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
