'use client';

import '@/components/traces/traces.css';
import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useOrganization } from '@/components/organizations/hooks';
import { PromptShell, type PromptScope } from '@/components/prompts/PromptShell';
import { Alert } from '@/components/ui/Alert';
import { Button } from '@/components/ui/Button';
import { Card, CardHeader } from '@/components/ui/Card';
import { ConfirmDialog } from '@/components/ui/ConfirmDialog';
import { LoadMore } from '@/components/ui/LoadMore';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { SecretOnce, useNewSecretCard } from '@/components/ui/SecretOnce';
import { EmptyState, SkeletonRows } from '@/components/ui/States';
import { KeyTable } from '@/components/ui/KeyTable';
import { KeyIcon, PlusIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import type { CreatedRetrievalKey, RetrievalKey } from '@/server/keys/schemas';
import { CreateRetrievalKeyDialog } from './CreateRetrievalKeyDialog';
import { RetrievalSnippets } from './RetrievalSnippets';

function KeysTable({
  scope,
  canCreate,
  canRevoke,
  onCreate,
}: {
  scope: PromptScope;
  canCreate: boolean;
  canRevoke: boolean;
  onCreate: () => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { organizationId, promptId } = scope;
  const [revoking, setRevoking] = useState<RetrievalKey | null>(null);
  // Always refetched on visit: "last used" moves while the page is closed.
  const list = useInfiniteQuery({
    ...trpc.retrievalKeys.list.infiniteQueryOptions(
      { organizationId, promptId, limit: 50 },
      { getNextPageParam: (page) => page.nextCursor },
    ),
    staleTime: 0,
  });
  const revoke = useMutation(
    trpc.retrievalKeys.revoke.mutationOptions({
      onSuccess: async () => {
        setRevoking(null);
        await queryClient.invalidateQueries(trpc.retrievalKeys.pathFilter());
      },
    }),
  );
  const revokeError = readAppError(revoke.error);

  if (list.isPending) return <SkeletonRows rows={3} label="Loading retrieval keys" />;
  if (list.isError) return <QueryErrorState title="Could not load retrieval keys" query={list} />;
  const keys = list.data.pages.flatMap((page) => page.items);
  if (!keys.length) {
    return (
      <EmptyState
        icon={<KeyIcon size={20} />}
        title="No retrieval keys yet"
        description="Applications fetch this prompt with a retrieval key. Create one for each application or environment."
        action={
          canCreate ? (
            <Button variant="primary" icon={<PlusIcon size={14} />} onClick={onCreate}>
              New retrieval key
            </Button>
          ) : undefined
        }
      />
    );
  }

  return (
    <>
      <KeyTable
        caption="Retrieval keys"
        keys={keys}
        onRevoke={canRevoke ? (key) => (revoke.reset(), setRevoking(key)) : undefined}
      />
      <LoadMore query={list} />
      <ConfirmDialog
        open={revoking !== null}
        onClose={() => setRevoking(null)}
        title="Revoke retrieval key?"
        description={
          <>
            Applications using <strong>{revoking?.name}</strong> (<code className="mono-sm">{revoking?.prefix}…</code>)
            get 401 from their very next request, conditional ones too. Copies they already fetched cannot be recalled.
            This cannot be undone.
          </>
        }
        confirmLabel="Revoke key"
        pending={revoke.isPending}
        error={revokeError?.message}
        onConfirm={() => revoking && revoke.mutate({ organizationId, promptId, keyId: revoking.id })}
      />
    </>
  );
}

function NewRetrievalKeySecret({
  scope,
  created,
  onDone,
}: {
  scope: PromptScope;
  created: CreatedRetrievalKey;
  onDone: () => void;
}) {
  const { cardProps, noticeId } = useNewSecretCard(created.secret);
  return (
    <Card aria-label="New retrieval key" {...cardProps}>
      <CardHeader
        title={`“${created.key.name}” is ready`}
        description={`Fetches ${scope.prompt.name} only, read-only.`}
        actions={
          <Button variant="primary" onClick={onDone}>
            Done
          </Button>
        }
      />
      <div className="card-body stack">
        <SecretOnce secret={created.secret} testId="retrieval-secret" noticeId={noticeId} />
        <RetrievalSnippets organizationId={scope.organizationId} prompt={scope.prompt} secret={created.secret} />
      </div>
    </Card>
  );
}

function RetrievalKeysView({ scope }: { scope: PromptScope }) {
  const organization = useOrganization(scope.organizationId);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedRetrievalKey | null>(null);
  const readOnlyOrganization = organization.data?.readOnly ?? false;
  // Editors and admins create keys on a writable organization and a prompt that is not archived;
  // revoking is a safety action and stays available on archived prompts and read-only organizations.
  const canCreate = scope.canWrite && !readOnlyOrganization;
  const canRevoke = scope.isWriter;
  return (
    <div className="stack">
      {scope.prompt.state === 'archived' ? (
        <Alert tone="info">Existing keys keep working on an archived prompt; new keys cannot be created.</Alert>
      ) : null}
      {readOnlyOrganization && scope.isWriter ? (
        <Alert tone="warning">This organization is scheduled for deletion: new keys cannot be created.</Alert>
      ) : null}
      {created ? <NewRetrievalKeySecret scope={scope} created={created} onDone={() => setCreated(null)} /> : null}
      <Card flush>
        <CardHeader
          title="Retrieval keys"
          description="Read-only keys for this prompt. Only a digest of each key is stored; a revoked key is refused from the next request."
          actions={
            canCreate ? (
              <Button variant="primary" icon={<PlusIcon size={14} />} onClick={() => setCreating(true)}>
                New retrieval key
              </Button>
            ) : undefined
          }
        />
        <div style={{ marginTop: 16 }}>
          <KeysTable scope={scope} canCreate={canCreate} canRevoke={canRevoke} onCreate={() => setCreating(true)} />
        </div>
      </Card>
      {created ? null : (
        <Card>
          <CardHeader title="Retrieve this prompt" description="Put a key in PROMPTLOOP_RETRIEVAL_KEY, then:" />
          <div className="card-body">
            <RetrievalSnippets organizationId={scope.organizationId} prompt={scope.prompt} secret={null} />
          </div>
        </Card>
      )}
      {canCreate ? (
        <CreateRetrievalKeyDialog
          organizationId={scope.organizationId}
          promptId={scope.promptId}
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
}

export function RetrievalKeysPage({ organizationId, promptId }: { organizationId: string; promptId: string }) {
  return (
    <PromptShell organizationId={organizationId} promptId={promptId}>
      {(scope) => <RetrievalKeysView scope={scope} />}
    </PromptShell>
  );
}
