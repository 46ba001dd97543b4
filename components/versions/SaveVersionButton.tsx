'use client';

import Link from 'next/link';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Button } from '@/components/ui/Button';
import { FieldError } from '@/components/ui/FieldError';
import { CheckIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import type { PromptScope } from '@/components/prompts/PromptShell';

type Props = {
  scope: PromptScope;
  // The exact draft revision to freeze; null while the draft is loading or has unsaved edits.
  revision: number | null;
  // Why the draft cannot be saved right now (unsaved edits, invalid fields), shown instead of saving.
  pendingReason?: string | null;
  variant?: 'primary' | 'secondary';
  // The draft changed elsewhere since this page read it (409 draft_conflict): the editor opens its
  // conflict dialog; without it the draft is read again and the button says to save again.
  onStale?: () => void;
};

// Freezes the caller's current draft revision as the next immutable version (no label moves).
export function SaveVersionButton({ scope, revision, pendingReason, variant = 'primary', onStale }: Props) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [saved, setSaved] = useState<{ number: number; revision: number } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const save = useMutation(
    trpc.versions.save.mutationOptions({
      onSuccess: (version, input) => {
        setSaved({ number: version.number, revision: input.draftRevision });
        setError(null);
      },
      onError: (e) => {
        const info = readAppError(e);
        if (info?.code === 'draft_conflict' && onStale) {
          setError(null);
          onStale();
        } else if (info?.code === 'draft_conflict') {
          setError(
            'Your draft changed in another window or tool since this page read it. It is loaded again: save again to save it.',
          );
        } else setError(info?.message ?? 'The version was not saved.');
      },
      onSettled: () => {
        void queryClient.invalidateQueries(trpc.versions.pathFilter());
        // The draft is based on the new version now (the editor keeps what is being typed).
        void queryClient.invalidateQueries(
          trpc.prompts.getDraft.queryFilter({ organizationId: scope.organizationId, promptId: scope.promptId }),
        );
        void queryClient.invalidateQueries(
          trpc.prompts.get.queryFilter({ organizationId: scope.organizationId, promptId: scope.promptId }),
        );
      },
    }),
  );
  if (!scope.canWrite) return null;
  const setup = scope.prompt.state === 'setup';
  const disabledReason = setup ? 'Available once the baseline publishes v1' : (pendingReason ?? null);
  const alreadySaved = saved !== null && saved.revision === revision;
  const versionsHref = `/organizations/${scope.organizationId}/prompts/${scope.promptId}/versions`;

  return (
    <div className="save-version">
      <Button
        size="sm"
        variant={variant}
        disabled={setup || revision === null || Boolean(pendingReason) || alreadySaved}
        loading={save.isPending}
        aria-describedby={disabledReason ? 'save-version-why' : undefined}
        title={setup ? 'Version 1 is published by initializing the baseline; save versions after that.' : undefined}
        onClick={() => {
          if (revision === null) return;
          setError(null);
          save.mutate({ organizationId: scope.organizationId, promptId: scope.promptId, draftRevision: revision });
        }}
      >
        Save version
      </Button>
      {alreadySaved ? (
        <span className="save-version-done" role="status">
          <CheckIcon size={14} /> Saved as <Link href={versionsHref}>v{saved.number}</Link>
        </span>
      ) : disabledReason ? (
        <span className="subtle save-version-why" id="save-version-why">
          {disabledReason}
        </span>
      ) : null}
      {error ? <FieldError message={error} /> : null}
    </div>
  );
}
