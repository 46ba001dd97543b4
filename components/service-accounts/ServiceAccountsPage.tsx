'use client';

import '@/components/traces/traces.css';
import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { formatDate, formatRelative, roleOptions } from '@/components/format';
import { OrganizationGate } from '@/components/organizations/OrganizationGate';
import { OrganizationPageHeader } from '@/components/organizations/OrganizationPageHeader';
import { Alert } from '@/components/ui/Alert';
import { Badge } from '@/components/ui/Badge';
import { Button, ButtonLink } from '@/components/ui/Button';
import { Card, CardHeader } from '@/components/ui/Card';
import { ConfirmDialog } from '@/components/ui/ConfirmDialog';
import { LoadMore } from '@/components/ui/LoadMore';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { EmptyState, SkeletonRows } from '@/components/ui/States';
import { Table } from '@/components/ui/Table';
import { KeyIcon, LockIcon, PlusIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import type { CreatedServiceAccount, ServiceAccount } from '@/server/service-accounts/schemas';
import { CreateServiceAccountDialog } from './CreateServiceAccountDialog';
import { NewServiceAccountSecret } from './NewServiceAccountSecret';

const roleLabel = (role: string) => roleOptions.find((option) => option.value === role)?.label ?? role;

function AccountsTable({ organizationId, onCreate }: { organizationId: string; onCreate: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [revoking, setRevoking] = useState<ServiceAccount | null>(null);
  // Always refetched on visit: "last used" moves while the page is closed.
  const list = useInfiniteQuery({
    ...trpc.serviceAccounts.list.infiniteQueryOptions({ organizationId, limit: 50 }, { getNextPageParam: (page) => page.nextCursor }),
    staleTime: 0,
  });
  const revoke = useMutation(
    trpc.serviceAccounts.revoke.mutationOptions({
      onSuccess: async () => {
        setRevoking(null);
        await queryClient.invalidateQueries(trpc.serviceAccounts.pathFilter());
      },
    }),
  );

  if (list.isPending) return <SkeletonRows rows={3} label="Loading service accounts" />;
  if (list.isError) return <QueryErrorState title="Could not load service accounts" query={list} />;
  const accounts = list.data.pages.flatMap((page) => page.items);
  if (!accounts.length) {
    return (
      <EmptyState
        icon={<KeyIcon size={20} />}
        title="No service accounts yet"
        description="Create one for each CI pipeline or automation that calls the API or runs the CLI."
        action={
          <Button variant="primary" icon={<PlusIcon size={14} />} onClick={onCreate}>
            New service account
          </Button>
        }
      />
    );
  }

  return (
    <>
      <Table caption="Service accounts" className="table-compact">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Role</th>
            <th scope="col">Client ID</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">Status</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {accounts.map((account) => (
            <tr key={account.id} data-service-account={account.id} className={account.revokedAt ? 'key-status-revoked' : undefined}>
              <td>
                <strong>{account.name}</strong>
              </td>
              <td>{roleLabel(account.role)}</td>
              <td className="cell-nowrap">
                <code className="mono-sm">{account.clientId}</code>
              </td>
              <td className="cell-nowrap muted">{formatDate(account.createdAt)}</td>
              <td className="cell-nowrap muted" title={account.lastUsedAt ?? undefined}>
                {account.lastUsedAt ? formatRelative(account.lastUsedAt) : 'Never'}
              </td>
              <td>{account.revokedAt ? <Badge title={`Revoked ${formatDate(account.revokedAt)}`}>Revoked</Badge> : <Badge tone="success">Active</Badge>}</td>
              <td className="cell-actions">
                {account.revokedAt ? null : (
                  <Button size="sm" variant="danger-outline" onClick={() => (revoke.reset(), setRevoking(account))} aria-label={`Revoke ${account.name}`}>
                    Revoke
                  </Button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </Table>
      <LoadMore query={list} />
      <ConfirmDialog
        open={revoking !== null}
        onClose={() => setRevoking(null)}
        title="Revoke service account?"
        description={
          <>
            <strong>{revoking?.name}</strong> (<code className="mono-sm">{revoking?.clientId}</code>) gets no new tokens, and the tokens it holds are refused from their next
            request. This cannot be undone.
          </>
        }
        confirmLabel="Revoke service account"
        pending={revoke.isPending}
        error={readAppError(revoke.error)?.message}
        onConfirm={() => revoking && revoke.mutate({ organizationId, serviceAccountId: revoking.id })}
      />
    </>
  );
}

export function ServiceAccountsPage({ organizationId }: { organizationId: string }) {
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedServiceAccount | null>(null);
  return (
    <OrganizationGate organizationId={organizationId}>
      {(org) => {
        const isAdmin = org.role === 'admin';
        return (
          <div className="page">
            <OrganizationPageHeader
              org={org}
              title="Service accounts"
              description="Machine credentials for CI: each account acts in this organization with its role, with tokens from the OAuth client_credentials grant."
              actions={
                isAdmin ? (
                  <Button variant="primary" icon={<PlusIcon size={14} />} onClick={() => setCreating(true)} disabled={org.readOnly}>
                    New service account
                  </Button>
                ) : null
              }
            />
            {org.readOnly && isAdmin ? <Alert tone="warning">This organization is scheduled for deletion: new service accounts cannot be created.</Alert> : null}
            {created ? <NewServiceAccountSecret created={created} onDone={() => setCreated(null)} /> : null}
            {isAdmin ? (
              <Card flush>
                <CardHeader title="Accounts" description="Only a digest of each secret is stored. Revoked accounts stay listed and stop working at once." />
                <div style={{ marginTop: 16 }}>
                  <AccountsTable organizationId={org.id} onCreate={() => setCreating(true)} />
                </div>
              </Card>
            ) : (
              <Card>
                <EmptyState
                  icon={<LockIcon size={20} />}
                  title="Only admins manage service accounts"
                  description="Service accounts are credentials that act in this organization, so only its admins can see, create or revoke them."
                  action={<ButtonLink href={`/organizations/${org.id}/settings`}>Back to settings</ButtonLink>}
                />
              </Card>
            )}
            {isAdmin ? (
              <CreateServiceAccountDialog
                organizationId={org.id}
                open={creating}
                onClose={() => setCreating(false)}
                onCreated={(result) => {
                  setCreating(false);
                  setCreated(result);
                }}
              />
            ) : null}
          </div>
        );
      }}
    </OrganizationGate>
  );
}
