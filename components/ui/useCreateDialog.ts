'use client';

import { useMutation, useQueryClient, type QueryFilters, type UseMutationOptions } from '@tanstack/react-query';
import { useState } from 'react';
import { readAppError } from '@/lib/trpc/errors';

/** The props every "New …" dialog of an organization's admin pages takes. */
export type CreateDialogProps<Created> = {
  organizationId: string;
  open: boolean;
  onClose: () => void;
  onCreated: (created: Created) => void;
};

/**
 * The state of a "New …" dialog that creates something and reveals it once: the field values
 * (cleared after a create and on close), the create mutation (which refreshes the list it adds to),
 * its error for the form, and a close that waits while the create is in flight.
 */
export function useCreateDialog<V, TData, TError, TVariables>(
  empty: V,
  mutation: UseMutationOptions<TData, TError, TVariables>,
  refresh: QueryFilters,
  callbacks: { onCreated: (created: TData) => void; onClose: () => void },
) {
  const queryClient = useQueryClient();
  const [values, setValues] = useState(empty);
  const create = useMutation({
    ...mutation,
    onSuccess: async (created: TData) => {
      setValues(empty);
      callbacks.onCreated(created);
      await queryClient.invalidateQueries(refresh);
    },
  });

  function close() {
    if (create.isPending) return;
    setValues(empty);
    create.reset();
    callbacks.onClose();
  }

  return { values, setValues, create, error: readAppError(create.error), close };
}
