'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Button } from '@/components/ui/Button';
import { ConfirmDialog } from '@/components/ui/ConfirmDialog';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import type { PromptScope } from './types';

export function ArchivePromptButton({ scope }: { scope: PromptScope }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const archive = useMutation(
    trpc.prompts.archive.mutationOptions({
      onSuccess: async () => {
        setOpen(false);
        await queryClient.invalidateQueries(trpc.prompts.pathFilter());
        await queryClient.invalidateQueries(trpc.datasets.pathFilter());
      },
    }),
  );
  const error = readAppError(archive.error);
  return (
    <>
      <Button variant="danger-outline" onClick={() => (archive.reset(), setOpen(true))}>
        Archive
      </Button>
      <ConfirmDialog
        open={open}
        onClose={() => setOpen(false)}
        title="Archive this prompt?"
        description={
          <>
            <strong>{scope.prompt.name}</strong> becomes read-only. Saved versions, labels, keys and retrieval keep
            working; retrieving it raises an archived-use warning.
          </>
        }
        confirmLabel="Archive prompt"
        pending={archive.isPending}
        error={error?.message}
        onConfirm={() => archive.mutate({ organizationId: scope.organizationId, promptId: scope.promptId })}
      />
    </>
  );
}
