'use client';

import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
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
import { CreateIngestionKeyDialog } from './CreateIngestionKeyDialog';
import { NewKeySecret } from './NewKeySecret';

import type { CreatedIngestionKey as Created, IngestionKey } from '@/server/keys/schemas';

function KeysTable({
  organizationId,
  onCreate,
  canManage,
}: {
  organizationId: string;
  onCreate: () => void;
  canManage: boolean;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [revoking, setRevoking] = useState<IngestionKey | null>(null);
  // Always refetched on visit: "last used" moves while the page is closed.
  const list = useInfiniteQuery({
    ...trpc.ingestionKeys.list.infiniteQueryOptions(
      { organizationId, limit: 50 },
      { getNextPageParam: (page) => page.nextCursor },
    ),
    staleTime: 0,
  });
  const revoke = useMutation(
    trpc.ingestionKeys.revoke.mutationOptions({
      onSuccess: async () => {
        setRevoking(null);
        await queryClient.invalidateQueries(trpc.ingestionKeys.pathFilter());
      },
    }),
  );
  const revokeError = readAppError(revoke.error);

  if (list.isPending) return <SkeletonRows rows={3} label="Loading ingestion keys" />;
  if (list.isError) return <QueryErrorState title="Could not load ingestion keys" query={list} />;
  const keys = list.data.pages.flatMap((page) => page.items);
  if (!keys.length) {
    return (
      <EmptyState
        icon={<KeyIcon size={20} />}
        title="No ingestion keys yet"
        description={
          canManage
            ? 'Create a key for each application and environment that sends traces.'
            : 'An editor or an admin creates a key for each application and environment that sends traces.'
        }
        action={
          canManage ? (
            <Button variant="primary" icon={<PlusIcon size={14} />} onClick={onCreate}>
              New ingestion key
            </Button>
          ) : undefined
        }
      />
    );
  }

  return (
    <>
      <KeyTable
        caption="Ingestion keys"
        keys={keys}
        columns={[
          { header: 'Application', cell: (key) => key.application },
          { header: 'Environment', cell: (key) => key.environment },
        ]}
        onRevoke={canManage ? (key) => (revoke.reset(), setRevoking(key)) : undefined}
      />
      <LoadMore query={list} />
      <ConfirmDialog
        open={revoking !== null}
        onClose={() => setRevoking(null)}
        title="Revoke ingestion key?"
        description={
          <>
            Applications using <strong>{revoking?.name}</strong> (<code className="mono-sm">{revoking?.prefix}…</code>)
            will get 401 on their next batch. This cannot be undone.
          </>
        }
        confirmLabel="Revoke key"
        pending={revoke.isPending}
        error={revokeError?.message}
        onConfirm={() => revoking && revoke.mutate({ organizationId, keyId: revoking.id })}
      />
    </>
  );
}

export function IngestionKeysPage({ organizationId }: { organizationId: string }) {
  return (
    <AdminCredentialsPage<Created>
      organizationId={organizationId}
      permission="ingestionKeys.manage"
      readPermission="ingestionKeys.read"
      title="Ingestion keys"
      description="Applications send traces with these keys. Each key belongs to one application and environment."
      newLabel="New ingestion key"
      readOnlyMessage="This organization is scheduled for deletion: new keys cannot be created."
      listTitle="Keys"
      listDescription="Only a digest of each key is stored. Revoked keys stop working at once."
      list={(org, onCreate, canManage) => (
        <KeysTable organizationId={org.id} onCreate={onCreate} canManage={canManage} />
      )}
      forNonAdmins={(org) => (
        <EmptyState
          icon={<LockIcon size={20} />}
          title="Ingestion keys are not available to you"
          description="Ask an editor or an admin of this organization for a key; you can still explore the traces it sends."
          action={<ButtonLink href={`/organizations/${org.id}/traces`}>Open traces</ButtonLink>}
        />
      )}
      reveal={(created, onDone) => <NewKeySecret created={created} onDone={onDone} />}
      createDialog={(dialog) => <CreateIngestionKeyDialog {...dialog} />}
    />
  );
}
