'use client';

import { usePeople } from '@/components/evals/parts';
import { useInfiniteQuery } from '@tanstack/react-query';
import { formatDateTime } from '@/components/format';
import { OrganizationGate } from '@/components/organizations/OrganizationGate';
import { Badge } from '@/components/ui/Badge';
import { Card } from '@/components/ui/Card';
import { OrganizationPageHeader } from '@/components/organizations/OrganizationPageHeader';
import { EmptyState, SkeletonRows } from '@/components/ui/States';
import { LoadMore } from '@/components/ui/LoadMore';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { Table } from '@/components/ui/Table';
import { ListIcon, LockIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import { can } from '@/server/auth/schemas';

const operationLabels: Record<string, string> = {
  'organization.create': 'Created the organization',
  'organization.rename': 'Renamed the organization',
  'organization.deletionLink': 'Requested a deletion link',
  'organization.delete': 'Deleted the organization',
  'members.add': 'Added a member',
  'members.changeRole': 'Changed a role',
  'members.remove': 'Removed a member',
  'members.invite': 'Invited a member by email',
  'members.revokeInvitation': 'Revoked an invitation',
  'members.acceptInvitation': 'Joined by invitation',
  'profile.setDefaultOrganization': 'Set default organization',
  'ingestionKey.create': 'Created an ingestion key',
  'ingestionKey.revoke': 'Revoked an ingestion key',
  'retrievalKey.create': 'Created a retrieval key',
  'retrievalKey.revoke': 'Revoked a retrieval key',
  'serviceAccount.create': 'Created a service account',
  'serviceAccount.revoke': 'Revoked a service account',
  'prompt.create': 'Created a prompt',
  'prompt.rename': 'Renamed a prompt',
  'prompt.archive': 'Archived a prompt',
  'prompt.import': 'Imported prompts',
  'prompt.release_policy': 'Changed a release policy',
  'scoring.update': 'Changed a scoring policy',
  'version.save': 'Saved a version',
  'version.publish_baseline': 'Published a baseline',
  'label.move': 'Moved a label',
  'label.remove': 'Removed a label',
  'dataset.addCase': 'Added a case',
  'dataset.updateCase': 'Edited a case',
  'dataset.deleteCase': 'Deleted a case',
  'dataset.reorder': 'Reordered cases',
  'dataset.import': 'Imported cases',
  'evaluation.start': 'Started an evaluation',
  'evaluation.initialize': 'Initialized a baseline',
  'evaluation.cancel': 'Cancelled an evaluation',
  'evaluation.resume': 'Resumed an evaluation',
  'evaluation.retry': 'Retried an evaluation side',
  'evaluation.review': 'Reviewed results',
  'online_evaluation.update': 'Changed online evaluation',
  'webhook.create': 'Created a webhook',
  'webhook.update': 'Changed a webhook',
  'webhook.delete': 'Deleted a webhook',
  'webhook.test': 'Sent a test event',
  'webhook.redeliver': 'Redelivered an event',
  'warning.dismiss': 'Dismissed a warning',
  'billing.checkout': 'Started a checkout',
  'billing.portal': 'Opened the billing portal',
  'billing.cancelRenewal': 'Cancelled the renewal',
  'billing.planChanged': 'The plan changed',
};

// An operation without a label yet still reads as words: `webhook.create` → "Webhook: create".
function operationLabel(operation: string): string {
  const label = operationLabels[operation];
  if (label) return label;
  const [area, ...rest] = operation.split('.');
  const words = (text: string) =>
    text
      .replace(/_/g, ' ')
      .replace(/([a-z])([A-Z])/g, '$1 $2')
      .toLowerCase();
  const head = words(area);
  return rest.length ? `${head[0].toUpperCase()}${head.slice(1)}: ${words(rest.join(' '))}` : head;
}

function summarize(details: Record<string, unknown>): string {
  if (typeof details.from === 'string' && typeof details.to === 'string') return `${details.from} → ${details.to}`;
  const entries = Object.entries(details);
  if (entries.length === 0) return '';
  return entries
    .map(([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(', ');
}

function AuditTable({ organizationId }: { organizationId: string }) {
  // Service accounts (and people without an email) by name.
  const personName = usePeople(organizationId);
  const trpc = useTRPC();
  const log = useInfiniteQuery(
    trpc.audit.list.infiniteQueryOptions(
      { organizationId, limit: 50 },
      { getNextPageParam: (page) => page.nextCursor },
    ),
  );
  const entries = log.data?.pages.flatMap((page) => page.items) ?? [];

  if (log.isPending) return <SkeletonRows rows={5} label="Loading audit log" />;
  if (log.isError) {
    return <QueryErrorState title="Could not load the audit log" query={log} />;
  }
  if (entries.length === 0) {
    return (
      <EmptyState
        icon={<ListIcon size={20} />}
        title="No activity yet"
        description="Changes to this organization will appear here."
      />
    );
  }
  return (
    <>
      <Table caption="Audit log">
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Who</th>
            <th scope="col">Action</th>
            <th scope="col">Details</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((entry) => {
            const summary = summarize(entry.details);
            // Whom a member change was about; other targets are named by their id.
            const target =
              entry.targetType === 'user'
                ? (entry.targetEmail ?? personName(entry.targetId))
                : entry.targetType === 'organization'
                  ? null
                  : entry.targetId;
            return (
              <tr key={entry.id}>
                <td className="cell-nowrap muted">{formatDateTime(entry.createdAt)}</td>
                <td>
                  <div className="person-text">
                    <span>{entry.userEmail ?? personName(entry.userId)}</span>
                    <span>
                      <Badge tone={entry.clientId === 'dashboard' ? 'neutral' : 'accent'}>
                        {entry.clientId === 'dashboard' ? 'Dashboard' : entry.clientId}
                      </Badge>
                    </span>
                  </div>
                </td>
                <td>
                  <div className="person-text">
                    <span>{operationLabel(entry.operation)}</span>
                    <code className="subtle">{entry.operation}</code>
                  </div>
                </td>
                <td>
                  <div className="person-text">
                    {target ? (
                      <span data-testid="audit-target" className={entry.targetType === 'user' ? undefined : 'mono-sm'}>
                        {target}
                      </span>
                    ) : null}
                    <div className="details-json">{summary || (target ? '' : '—')}</div>
                  </div>
                </td>
              </tr>
            );
          })}
        </tbody>
      </Table>
      <LoadMore query={log} label="Load older entries" />
    </>
  );
}

export function AuditLogPage({ organizationId }: { organizationId: string }) {
  return (
    <OrganizationGate organizationId={organizationId}>
      {(org) => (
        <div className="page">
          <OrganizationPageHeader
            org={org}
            title="Audit log"
            description="Every change to this organization: who made it, from the dashboard or which API client, and when."
          />
          <Card flush>
            {can(org.role, 'audit.read') ? (
              <AuditTable organizationId={org.id} />
            ) : (
              <EmptyState
                icon={<LockIcon size={20} />}
                title="Admins only"
                description="Ask an admin of this organization if you need to review its activity."
              />
            )}
          </Card>
        </div>
      )}
    </OrganizationGate>
  );
}
