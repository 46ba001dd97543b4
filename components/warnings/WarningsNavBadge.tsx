'use client';

import './warnings.css';
import { useQuery } from '@tanstack/react-query';
import { usePathname } from 'next/navigation';
import { useEffect } from 'react';
import { useTRPC } from '@/lib/trpc/client';

// The open-warning count next to "Warnings": one cheap count query, refreshed every minute and on
// every navigation (a resolved or new warning shows up when the user moves on).
export function WarningsNavBadge({ organizationId }: { organizationId: string }) {
  const trpc = useTRPC();
  const pathname = usePathname();
  const openCount = useQuery({
    ...trpc.warnings.openCount.queryOptions({ organizationId }),
    refetchInterval: 60_000,
    staleTime: 10_000,
    retry: false,
  });
  const { refetch } = openCount;
  useEffect(() => {
    void refetch();
  }, [pathname, refetch]);
  const open = openCount.data?.open ?? 0;
  if (open === 0) return null;
  return (
    <span
      className="nav-count"
      aria-label={`${open} open ${open === 1 ? 'warning' : 'warnings'}`}
      title={`${open} open`}
    >
      {open > 99 ? '99+' : open}
    </span>
  );
}
