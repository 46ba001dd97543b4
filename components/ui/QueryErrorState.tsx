'use client';

import { readAppError } from '@/lib/trpc/errors';
import { Button } from './Button';
import { ErrorState } from './States';

// What a failed query shows: its title, the service's message, and a retry.
export function QueryErrorState({
  title,
  query,
}: {
  title: string;
  query: { error: unknown; refetch: () => unknown };
}) {
  return (
    <ErrorState
      title={title}
      description={readAppError(query.error)?.message}
      action={<Button onClick={() => query.refetch()}>Try again</Button>}
    />
  );
}
