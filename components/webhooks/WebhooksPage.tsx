'use client';

import Link from 'next/link';
import { useInfiniteQuery } from '@tanstack/react-query';
import { AdminCredentialsPage } from '@/components/organizations/AdminCredentialsPage';
import { Button, ButtonLink } from '@/components/ui/Button';
import { LoadMore } from '@/components/ui/LoadMore';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { EmptyState, SkeletonRows } from '@/components/ui/States';
import { Table } from '@/components/ui/Table';
import { LockIcon, PlusIcon, ZapIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import { CreateWebhookDialog, type CreatedWebhook } from './CreateWebhookDialog';
import { NewWebhookSecret } from './NewWebhookSecret';
import { EndpointStatusBadge } from './StatusBadges';
import './webhooks.css';
import { RelativeTime } from '@/components/ui/RelativeTime';

function EndpointsTable({ organizationId, onCreate }: { organizationId: string; onCreate: () => void }) {
  const trpc = useTRPC();
  // Refetched on every visit: an endpoint may have been disabled by failures meanwhile.
  const list = useInfiniteQuery({
    ...trpc.webhooks.list.infiniteQueryOptions(
      { organizationId, limit: 50 },
      { getNextPageParam: (page) => page.nextCursor },
    ),
    staleTime: 0,
  });

  if (list.isPending) return <SkeletonRows rows={3} label="Loading webhook endpoints" />;
  if (list.isError) return <QueryErrorState title="Could not load the webhook endpoints" query={list} />;
  const endpoints = list.data.pages.flatMap((page) => page.items);
  if (!endpoints.length) {
    return (
      <EmptyState
        icon={<ZapIcon size={20} />}
        title="No webhook endpoints yet"
        description="Add an endpoint to hear about new versions, label moves, finished evaluations and warnings as they happen."
        action={
          <Button variant="primary" icon={<PlusIcon size={14} />} onClick={onCreate}>
            New endpoint
          </Button>
        }
      />
    );
  }

  const base = `/organizations/${organizationId}/webhooks`;
  return (
    <>
      <Table caption="Webhook endpoints" className="table-compact webhooks-table">
        <thead>
          <tr>
            <th scope="col">Endpoint</th>
            <th scope="col">Events</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {endpoints.map((endpoint) => (
            <tr key={endpoint.id} data-webhook={endpoint.id}>
              <td className="webhook-endpoint-cell">
                <Link href={`${base}/${endpoint.id}`} className="webhook-url" title={endpoint.url}>
                  {endpoint.url}
                </Link>
                {endpoint.description ? <span className="subtle">{endpoint.description}</span> : null}
              </td>
              <td>
                <div className="webhook-event-chips">
                  {endpoint.events.map((type) => (
                    <code key={type} className="webhook-chip">
                      {type}
                    </code>
                  ))}
                </div>
              </td>
              <td>
                <div className="stack-sm">
                  <EndpointStatusBadge enabled={endpoint.enabled} disabledReason={endpoint.disabledReason} />
                  {!endpoint.enabled ? (
                    <span className="subtle webhook-reason">
                      {endpoint.disabledReason ?? 'Turned off by an admin.'}
                    </span>
                  ) : null}
                </div>
              </td>
              <td className="cell-nowrap muted">
                <RelativeTime time={endpoint.createdAt} />
              </td>
              <td className="cell-actions">
                <ButtonLink size="sm" href={`${base}/${endpoint.id}`} aria-label={`Deliveries of ${endpoint.url}`}>
                  Deliveries
                </ButtonLink>
              </td>
            </tr>
          ))}
        </tbody>
      </Table>
      <LoadMore query={list} />
    </>
  );
}

export function NotAdminExplanation({ organizationId }: { organizationId: string }) {
  return (
    <EmptyState
      icon={<LockIcon size={20} />}
      title="Only admins manage webhooks"
      description="Webhook endpoints receive signed events about everything in this organization and hold a signing secret, so only its admins can see, add or change them. Ask an admin if you need events sent somewhere."
      action={<ButtonLink href={`/organizations/${organizationId}/members`}>See who the admins are</ButtonLink>}
    />
  );
}

export function WebhooksPage({ organizationId }: { organizationId: string }) {
  return (
    <AdminCredentialsPage<CreatedWebhook>
      organizationId={organizationId}
      permission="webhooks.manage"
      title="Webhooks"
      description="Signed HTTP callbacks for what happens in this organization: new versions, label moves, finished evaluations and warnings. Verified per Standard Webhooks."
      newLabel="New endpoint"
      readOnlyMessage="This organization is scheduled for deletion: endpoints cannot be added or changed."
      listTitle="Endpoints"
      listDescription="Each delivery is retried with backoff for 24 hours; an endpoint that keeps failing, or answers 410 Gone, is disabled."
      list={(org, onCreate) => <EndpointsTable organizationId={org.id} onCreate={onCreate} />}
      forNonAdmins={(org) => <NotAdminExplanation organizationId={org.id} />}
      reveal={(created, onDone) => (
        <NewWebhookSecret organizationId={organizationId} created={created} onDone={onDone} />
      )}
      createDialog={(dialog) => <CreateWebhookDialog {...dialog} />}
    />
  );
}
