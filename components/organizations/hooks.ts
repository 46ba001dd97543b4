'use client';

import { useQuery } from '@tanstack/react-query';
import { useTRPC } from '@/lib/trpc/client';

export function useOrganization(organizationId: string | undefined) {
  const trpc = useTRPC();
  return useQuery({
    ...trpc.organizations.get.queryOptions({ organizationId: organizationId ?? '' }),
    enabled: Boolean(organizationId),
  });
}

// The switcher and selectors show up to 100 organizations; the list page pages through all.
export function useOrganizationChoices() {
  const trpc = useTRPC();
  return useQuery(trpc.organizations.list.queryOptions({ limit: 100 }));
}

export function useProfile() {
  const trpc = useTRPC();
  return useQuery(trpc.account.profile.queryOptions());
}
