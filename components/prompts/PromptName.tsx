'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Button } from '@/components/ui/Button';
import { Input } from '@/components/ui/Field';
import { FieldError } from '@/components/ui/FieldError';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import type { PromptScope } from './types';

// The page title; writers click it to rename in place (Enter saves, Escape cancels).
export function PromptName({ scope }: { scope: PromptScope }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState(scope.prompt.name);
  const rename = useMutation(
    trpc.prompts.rename.mutationOptions({
      onSuccess: async () => {
        setEditing(false);
        await queryClient.invalidateQueries(trpc.prompts.pathFilter());
      },
    }),
  );
  const error = readAppError(rename.error);

  if (!editing) {
    if (!scope.canWrite) return <span>{scope.prompt.name}</span>;
    return (
      <button
        type="button"
        className="title-button"
        title="Rename"
        aria-label={`Rename prompt ${scope.prompt.name}`}
        onClick={() => (setName(scope.prompt.name), rename.reset(), setEditing(true))}
      >
        {scope.prompt.name}
      </button>
    );
  }

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (name === scope.prompt.name) return setEditing(false);
    rename.mutate({ organizationId: scope.organizationId, promptId: scope.promptId, name });
  }

  return (
    <form className="rename-form" onSubmit={onSubmit} noValidate>
      <Input
        aria-label="Prompt name"
        value={name}
        autoFocus
        onChange={(e) => setName(e.target.value)}
        onKeyDown={(e) => e.key === 'Escape' && setEditing(false)}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? 'rename-error' : undefined}
        maxLength={300}
      />
      <Button type="submit" size="sm" variant="primary" loading={rename.isPending}>
        Save
      </Button>
      <Button size="sm" variant="ghost" onClick={() => setEditing(false)} disabled={rename.isPending}>
        Cancel
      </Button>
      {error ? (
        <FieldError className="rename-error" id="rename-error" message={error.fields.name ?? error.message} />
      ) : null}
    </form>
  );
}
