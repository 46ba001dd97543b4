'use client';

import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { roleOptions } from '@/components/format';
import { AdminCredentialsPage } from '@/components/organizations/AdminCredentialsPage';
import { Button, ButtonLink } from '@/components/ui/Button';
import { ConfirmDialog } from '@/components/ui/ConfirmDialog';
import { LoadMore } from '@/components/ui/LoadMore';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { EmptyState, SkeletonRows } from '@/components/ui/States';
import { KeyTable } from '@/components/ui/KeyTable';
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
    ...trpc.serviceAccounts.list.infiniteQueryOptions(
      { organizationId, limit: 50 },
      { getNextPageParam: (page) => page.nextCursor },
    ),
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
      <KeyTable
        caption="Service accounts"
        keys={accounts}
        columns={[{ header: 'Role', cell: (account) => roleLabel(account.role) }]}
        identifier={{ header: 'Client ID', cell: (account) => <code className="mono-sm">{account.clientId}</code> }}
        onRevoke={(account) => (revoke.reset(), setRevoking(account))}
      />
      <LoadMore query={list} />
      <ConfirmDialog
        open={revoking !== null}
        onClose={() => setRevoking(null)}
        title="Revoke service account?"
        description={
          <>
            <strong>{revoking?.name}</strong> (<code className="mono-sm">{revoking?.clientId}</code>) gets no new
            tokens, and the tokens it holds are refused from their next request. This cannot be undone.
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
  return (
    <AdminCredentialsPage<CreatedServiceAccount>
      organizationId={organizationId}
      permission="serviceAccounts.manage"
      title="Service accounts"
      description="Machine credentials for CI: each account acts in this organization with its role, with tokens from the OAuth client_credentials grant."
      newLabel="New service account"
      readOnlyMessage="This organization is scheduled for deletion: new service accounts cannot be created."
      listTitle="Accounts"
      listDescription="Only a digest of each secret is stored. Revoked accounts stay listed and stop working at once."
      list={(org, onCreate) => <AccountsTable organizationId={org.id} onCreate={onCreate} />}
      forNonAdmins={(org) => (
        <EmptyState
          icon={<LockIcon size={20} />}
          title="Only admins manage service accounts"
          description="Service accounts are credentials that act in this organization, so only its admins can see, create or revoke them."
          action={<ButtonLink href={`/organizations/${org.id}/settings`}>Back to settings</ButtonLink>}
        />
      )}
      reveal={(created, onDone) => <NewServiceAccountSecret created={created} onDone={onDone} />}
      createDialog={(dialog) => <CreateServiceAccountDialog {...dialog} />}
    />
  );
}
