'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { formatDateTime, formatRelative } from '@/components/format';
import { Alert } from '@/components/ui/Alert';
import { Button, ButtonLink } from '@/components/ui/Button';
import { Card, CardBody, CardFooter, CardHeader } from '@/components/ui/Card';
import { Field, Input } from '@/components/ui/Field';
import { PageHeader } from '@/components/ui/PageHeader';
import { ErrorState, SkeletonRows } from '@/components/ui/States';
import { ClockIcon, TrashIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';

export function DeleteOrganizationPage({ organizationId, token }: { organizationId: string; token: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const router = useRouter();
  const [confirmName, setConfirmName] = useState('');
  const link = useQuery({
    ...trpc.organizations.checkDeletionLink.queryOptions({ organizationId, token }),
    enabled: token.length > 0,
    staleTime: 0,
  });
  // The deleted organization's cached details go once this page has been left: removed earlier,
  // the sidebar (still on this page's path until the navigation lands) would ask for them again
  // and get a 404.
  const deleted = useRef(false);
  useEffect(
    () => () => {
      if (deleted.current) queryClient.removeQueries(trpc.organizations.get.queryFilter({ organizationId }));
    },
    [queryClient, trpc, organizationId],
  );
  const remove = useMutation(
    trpc.organizations.delete.mutationOptions({
      onSuccess: async () => {
        const name = link.data?.name ?? '';
        deleted.current = true;
        router.replace(`/organizations?deleted=${encodeURIComponent(name)}`);
        await Promise.all([
          queryClient.invalidateQueries(trpc.organizations.list.pathFilter()),
          queryClient.invalidateQueries(trpc.account.pathFilter()),
        ]);
      },
    }),
  );
  const removeError = readAppError(remove.error);
  const settingsHref = `/organizations/${organizationId}/settings`;

  const header = <PageHeader title="Delete organization" description="This cannot be undone." />;

  if (!token || link.isError) {
    const error = readAppError(link.error);
    const expired = !token || error?.code === 'invalid_state';
    return (
      <div className="page page-narrow">
        {header}
        <Card>
          <ErrorState
            title={
              expired
                ? 'This deletion link has expired or is not valid'
                : error?.code === 'admin_required'
                  ? 'Only admins can delete this organization'
                  : error?.code === 'not_found'
                    ? 'Organization not found'
                    : 'Could not check this link'
            }
            description={
              expired
                ? 'Deletion links work for one hour. Open the organization settings and choose “Delete organization…” to get a new one.'
                : error?.code === 'not_found'
                  ? 'It may have been deleted already, or you are not a member of it.'
                  : error?.message
            }
            action={
              error?.code === 'not_found' ? (
                <ButtonLink href="/organizations">View your organizations</ButtonLink>
              ) : (
                <ButtonLink href={settingsHref}>Back to settings</ButtonLink>
              )
            }
          />
        </Card>
      </div>
    );
  }

  if (link.isPending) {
    return (
      <div className="page page-narrow">
        {header}
        <Card>
          <SkeletonRows rows={4} label="Checking the deletion link" />
        </Card>
      </div>
    );
  }

  const { name, expiresAt } = link.data;
  const matches = confirmName === name;

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (!matches) return;
    remove.mutate({ organizationId, token, confirmName });
  }

  return (
    <div className="page page-narrow">
      {header}
      <Card tone="danger">
        <form onSubmit={onSubmit} noValidate aria-label="Confirm deletion">
          <CardHeader title={<>Delete “{name}”</>} />
          <CardBody className="stack">
            <Alert tone="error" title="Everything in this organization will be permanently deleted">
              Prompts, versions, datasets, evaluations, retrieval and ingestion keys, and members&apos; access.
              Applications using its keys will stop working.
            </Alert>
            <p className="inline muted">
              <ClockIcon size={14} /> This link expires {formatRelative(expiresAt)} ({formatDateTime(expiresAt)}).
            </p>
            {removeError && !removeError.fields.confirmName ? <Alert tone="error">{removeError.message}</Alert> : null}
            <Field
              label={
                <>
                  Type <span className="confirm-name">{name}</span> to confirm
                </>
              }
              error={removeError?.fields.confirmName}
            >
              <Input
                name="confirmName"
                autoComplete="off"
                spellCheck={false}
                value={confirmName}
                onChange={(e) => setConfirmName(e.target.value)}
                autoFocus
              />
            </Field>
          </CardBody>
          <CardFooter>
            <ButtonLink href={settingsHref}>Cancel</ButtonLink>
            <Button
              type="submit"
              variant="danger"
              icon={<TrashIcon size={14} />}
              disabled={!matches}
              loading={remove.isPending}
            >
              Delete organization
            </Button>
          </CardFooter>
        </form>
      </Card>
    </div>
  );
}
