'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Alert } from '@/components/ui/Alert';
import { Button } from '@/components/ui/Button';
import { Card, CardBody, CardFooter, CardHeader } from '@/components/ui/Card';
import { Field, Input } from '@/components/ui/Field';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError, type AppErrorInfo } from '@/lib/trpc/errors';
import type { BillingState } from '@/server/billing/schemas';
import { isNotConfigured } from './hooks';
import { formatBillingDate, utcDay } from './links';

type Fields = { organizationName?: string; periodEnd?: string };

// confirmation_mismatch names the fields that did not match; each gets its message next to it.
function mismatchFields(error: AppErrorInfo | null, organizationName: string): Fields {
  if (error?.code !== 'confirmation_mismatch') return {};
  const mismatched = Array.isArray(error.details.mismatched) ? (error.details.mismatched as string[]) : [];
  const periodEnd = typeof error.details.periodEnd === 'string' ? error.details.periodEnd : null;
  return {
    ...(mismatched.includes('organizationName')
      ? { organizationName: `This is not the organization's name: type “${organizationName}”.` }
      : {}),
    ...(mismatched.includes('periodEnd')
      ? {
          periodEnd: `This is not the end of the current period: type ${periodEnd ? utcDay(periodEnd) : 'the date shown below'}.`,
        }
      : {}),
  };
}

/**
 * Editors and admins stop the Pro subscription from renewing. Like deleting an organization, it
 * asks for the organization's name, and for the period end so nobody confirms a date they have not
 * read. Pro stays until that date.
 */
export function CancelRenewalCard({
  organization,
  state,
  freeCredits,
  onCancelled,
  onNotConfigured,
}: {
  organization: { id: string; name: string };
  state: BillingState;
  freeCredits: number;
  onCancelled: (next: BillingState) => void;
  onNotConfigured: () => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [organizationName, setOrganizationName] = useState('');
  const [periodEnd, setPeriodEnd] = useState('');
  const [missing, setMissing] = useState<Fields>({});
  const cancel = useMutation(
    trpc.billing.cancelRenewal.mutationOptions({
      onSuccess: (next) => {
        queryClient.setQueryData(trpc.billing.state.queryKey({ organizationId: organization.id }), next);
        onCancelled(next);
      },
      onError: (error) => {
        const info = readAppError(error);
        if (isNotConfigured(info)) onNotConfigured();
        // No subscription any more (it ended or was cancelled elsewhere): show what is true now.
        if (info?.code === 'invalid_state')
          void queryClient.invalidateQueries(trpc.billing.state.queryFilter({ organizationId: organization.id }));
      },
    }),
  );
  const error = readAppError(cancel.error);
  const fields: Fields = {
    ...missing,
    ...(error?.fields as Fields | undefined),
    ...mismatchFields(error, organization.name),
  };
  const expected = utcDay(state.periodEnd);
  const formError =
    error && !fields.organizationName && !fields.periodEnd && !isNotConfigured(error) ? error.message : null;

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    const empty: Fields = {
      ...(organizationName.trim() ? {} : { organizationName: 'Type the organization name.' }),
      ...(periodEnd.trim() ? {} : { periodEnd: 'Type the date the current period ends.' }),
    };
    setMissing(empty);
    if (empty.organizationName || empty.periodEnd) return cancel.reset();
    cancel.mutate({ organizationId: organization.id, organizationName, periodEnd: periodEnd.trim() });
  }

  return (
    <Card aria-labelledby="cancel-renewal-title">
      <form onSubmit={onSubmit} noValidate aria-label="Cancel renewal">
        <CardHeader
          titleId="cancel-renewal-title"
          title="Cancel renewal"
          description={`Pro stays active until ${formatBillingDate(state.periodEnd)} and is not charged again. After that the organization moves to Free: datasets keep their cases but cannot grow past 10, evaluations run quick only, and credits drop to ${freeCredits.toLocaleString()} a month.`}
        />
        <CardBody className="form">
          {formError ? <Alert tone="error">{formError}</Alert> : null}
          <div className="billing-confirm-fields">
            <Field
              label="Organization name"
              error={fields.organizationName}
              hint={
                <>
                  Type <span className="confirm-name">{organization.name}</span> to confirm.
                </>
              }
            >
              <Input
                name="organizationName"
                autoComplete="off"
                spellCheck={false}
                value={organizationName}
                onChange={(e) => {
                  setOrganizationName(e.target.value);
                  setMissing((m) => ({ ...m, organizationName: undefined }));
                }}
              />
            </Field>
            <Field
              label="Period end"
              error={fields.periodEnd}
              hint={
                <>
                  The current period ends on <span className="confirm-name">{expected}</span> (UTC).
                </>
              }
            >
              <Input
                name="periodEnd"
                autoComplete="off"
                spellCheck={false}
                inputMode="numeric"
                placeholder="YYYY-MM-DD"
                value={periodEnd}
                onChange={(e) => {
                  setPeriodEnd(e.target.value);
                  setMissing((m) => ({ ...m, periodEnd: undefined }));
                }}
              />
            </Field>
          </div>
        </CardBody>
        <CardFooter>
          <span className="muted">Nothing changes before {formatBillingDate(state.periodEnd)}.</span>
          <Button type="submit" variant="danger-outline" loading={cancel.isPending}>
            Cancel renewal
          </Button>
        </CardFooter>
      </form>
    </Card>
  );
}
