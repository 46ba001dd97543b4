'use client';

import './warnings.css';
import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { usePathname, useRouter, useSearchParams } from 'next/navigation';
import { formatDateTime, formatRelative } from '@/components/format';
import { OrganizationGate } from '@/components/organizations/OrganizationGate';
import { OrganizationPageHeader } from '@/components/organizations/OrganizationPageHeader';
import { Alert } from '@/components/ui/Alert';
import { Badge } from '@/components/ui/Badge';
import { Button } from '@/components/ui/Button';
import { Card } from '@/components/ui/Card';
import { Select } from '@/components/ui/Field';
import { LoadMore } from '@/components/ui/LoadMore';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { EmptyState, SkeletonRows } from '@/components/ui/States';
import { Table } from '@/components/ui/Table';
import { CheckCircleIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import { warningKindMeta, warningKindOptions, warningSubjectLink } from './kinds';

import type { Warning, WarningKind } from '@/server/warnings/schemas';
import { can } from '@/server/auth/schemas';

type StateFilter = 'open' | 'resolved' | 'all';
const stateFilters: { value: StateFilter; label: string }[] = [
  { value: 'open', label: 'Open' },
  { value: 'resolved', label: 'Resolved' },
  { value: 'all', label: 'All' },
];

const emptyText: Record<StateFilter, { title: string; description: string }> = {
  open: {
    title: 'No open warnings',
    description: 'Archived prompts still in use, unused keys and paused evaluations show up here.',
  },
  resolved: {
    title: 'No resolved warnings',
    description: 'Warnings move here when their cause goes away or someone dismisses them.',
  },
  all: {
    title: 'No warnings yet',
    description: 'Archived prompts still in use, unused keys and paused evaluations show up here.',
  },
};

// The filters live in the address, so a filtered list can be shared and survives a reload.
function useFilters(): {
  state: StateFilter;
  kind: WarningKind | undefined;
  set: (next: { state?: StateFilter; kind?: WarningKind | '' }) => void;
} {
  const params = useSearchParams();
  const router = useRouter();
  const pathname = usePathname();
  const rawState = params.get('state');
  const state: StateFilter = rawState === 'resolved' || rawState === 'all' ? rawState : 'open';
  const rawKind = params.get('kind');
  const kind = warningKindOptions.includes(rawKind as WarningKind) ? (rawKind as WarningKind) : undefined;
  const set = (next: { state?: StateFilter; kind?: WarningKind | '' }) => {
    const query = new URLSearchParams();
    const nextState = next.state ?? state;
    const nextKind = next.kind === undefined ? kind : next.kind || undefined;
    if (nextState !== 'open') query.set('state', nextState);
    if (nextKind) query.set('kind', nextKind);
    const search = query.toString();
    router.replace(search ? `${pathname}?${search}` : pathname, { scroll: false });
  };
  return { state, kind, set };
}

function WarningRow({
  organizationId,
  warning,
  canDismiss,
  onDismiss,
  dismissing,
}: {
  organizationId: string;
  warning: Warning;
  canDismiss: boolean;
  onDismiss: () => void;
  dismissing: boolean;
}) {
  const meta = warningKindMeta[warning.kind] ?? { label: warning.kind, icon: () => null };
  const link = warningSubjectLink(organizationId, warning);
  return (
    <tr
      data-warning={warning.id}
      data-kind={warning.kind}
      className={warning.resolvedAt ? 'warning-resolved' : undefined}
    >
      <td>
        <span className={`warning-kind warning-kind-${warning.kind}`}>
          <span className="warning-kind-icon" aria-hidden="true">
            {meta.icon(14)}
          </span>
          {meta.label}
        </span>
      </td>
      <td className="warning-message-cell">
        <p className="warning-message">{warning.message}</p>
        {link ? (
          <Link className="warning-link" href={link.href}>
            {link.label}
          </Link>
        ) : null}
      </td>
      <td className="warning-count" title={`${warning.count.toLocaleString()} occurrences`}>
        {warning.count.toLocaleString()}
      </td>
      <td className="cell-nowrap muted" title={formatDateTime(warning.firstSeenAt)}>
        {formatRelative(warning.firstSeenAt)}
      </td>
      <td className="cell-nowrap muted" title={formatDateTime(warning.lastSeenAt)}>
        {formatRelative(warning.lastSeenAt)}
      </td>
      <td className="warning-state-cell">
        {warning.resolvedAt ? (
          <Badge tone="success" title={`Resolved ${formatDateTime(warning.resolvedAt)}`}>
            Resolved
          </Badge>
        ) : (
          <Badge tone="warning">Open</Badge>
        )}
        {warning.resolvedAt ? <span className="warning-state-time">{formatRelative(warning.resolvedAt)}</span> : null}
        {canDismiss && !warning.resolvedAt ? (
          <Button
            size="sm"
            variant="ghost"
            loading={dismissing}
            onClick={onDismiss}
            aria-label={`Dismiss: ${meta.label}`}
            title="Mark resolved now; it reopens if it happens again"
          >
            Dismiss
          </Button>
        ) : null}
      </td>
    </tr>
  );
}

function WarningsTable({ organizationId, canDismiss }: { organizationId: string; canDismiss: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { state, kind, set } = useFilters();
  const list = useInfiniteQuery({
    ...trpc.warnings.list.infiniteQueryOptions(
      { organizationId, state, kind, limit: 50 },
      { getNextPageParam: (page) => page.nextCursor },
    ),
    staleTime: 0,
    refetchInterval: 60_000,
  });
  const dismiss = useMutation(
    trpc.warnings.dismiss.mutationOptions({
      onSuccess: async () => {
        await Promise.all([
          queryClient.invalidateQueries(trpc.warnings.list.pathFilter()),
          queryClient.invalidateQueries(trpc.warnings.openCount.pathFilter()),
        ]);
      },
    }),
  );
  const dismissError = readAppError(dismiss.error);

  let body;
  if (list.isPending) body = <SkeletonRows rows={3} label="Loading warnings" />;
  else if (list.isError) body = <QueryErrorState title="Could not load warnings" query={list} />;
  else {
    const items = list.data.pages.flatMap((page) => page.items);
    body = items.length ? (
      <>
        <Table caption="Warnings" className="table-compact warnings-table">
          <thead>
            <tr>
              <th scope="col">Kind</th>
              <th scope="col">Warning</th>
              <th scope="col" className="warning-count">
                Count
              </th>
              <th scope="col">First seen</th>
              <th scope="col">Last seen</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {items.map((warning) => (
              <WarningRow
                key={warning.id}
                organizationId={organizationId}
                warning={warning}
                canDismiss={canDismiss}
                dismissing={dismiss.isPending && dismiss.variables?.warningId === warning.id}
                onDismiss={() => dismiss.mutate({ organizationId, warningId: warning.id })}
              />
            ))}
          </tbody>
        </Table>
        <LoadMore query={list} />
      </>
    ) : (
      <EmptyState
        icon={<CheckCircleIcon size={20} />}
        title={kind ? `${emptyText[state].title} of this kind` : emptyText[state].title}
        description={emptyText[state].description}
      />
    );
  }

  return (
    <>
      <div className="warnings-filters">
        <div className="warnings-state" role="toolbar" aria-label="Show warnings">
          {stateFilters.map((option) => (
            <button
              key={option.value}
              type="button"
              className="warnings-chip"
              aria-pressed={state === option.value}
              onClick={() => set({ state: option.value })}
            >
              {option.label}
            </button>
          ))}
        </div>
        <label className="warnings-kind-filter">
          <span className="visually-hidden">Kind</span>
          <Select
            compact
            name="kind"
            value={kind ?? ''}
            onChange={(e) => set({ kind: e.target.value as WarningKind | '' })}
          >
            <option value="">Every kind</option>
            {warningKindOptions.map((k) => (
              <option key={k} value={k}>
                {warningKindMeta[k].label}
              </option>
            ))}
          </Select>
        </label>
      </div>
      {dismissError ? <Alert tone="error">{dismissError.message}</Alert> : null}
      {body}
    </>
  );
}

export function WarningsPage({ organizationId }: { organizationId: string }) {
  return (
    <OrganizationGate organizationId={organizationId}>
      {(org) => (
        <div className="page">
          <OrganizationPageHeader
            org={org}
            title="Warnings"
            description="Things that need attention, one per cause. A warning resolves itself when the cause goes away and reopens if it comes back."
          />
          <Card flush>
            <WarningsTable organizationId={org.id} canDismiss={can(org.role, 'warnings.dismiss') && !org.readOnly} />
          </Card>
        </div>
      )}
    </OrganizationGate>
  );
}
