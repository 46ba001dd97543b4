'use client';

import { useInfiniteQuery, type InfiniteData } from '@tanstack/react-query';
import { useState } from 'react';
import { Button } from '@/components/ui/Button';
import { Card, CardHeader } from '@/components/ui/Card';
import { LoadMore } from '@/components/ui/LoadMore';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { EmptyState, SkeletonRows } from '@/components/ui/States';
import { Table } from '@/components/ui/Table';
import { ActivityIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import type { WebhookDelivery } from '@/server/webhooks/schemas';
import { DeliveryDialog } from './DeliveryDialog';
import { DeliveryStatusBadge } from './StatusBadges';
import { RelativeTime } from '@/components/ui/RelativeTime';

const pageSize = 20;
// While a delivery is pending the log refreshes itself, so a test event is seen arriving.
const pollMs = 2_000;

const hasPending = (data: InfiniteData<{ items: WebhookDelivery[] }> | undefined) =>
  (data?.pages ?? []).some((page) => page.items.some((delivery) => delivery.status === 'pending'));

function When({ iso, empty = '—' }: { iso: string | null; empty?: string }) {
  if (!iso) return <span className="subtle">{empty}</span>;
  return <RelativeTime time={iso} />;
}

// The endpoint's deliveries, newest first, paged; each opens to its payload and the response.
export function DeliveryLog({
  organizationId,
  webhookId,
  endpointEnabled,
  canWrite,
  onRedelivered,
}: {
  organizationId: string;
  webhookId: string;
  endpointEnabled: boolean;
  canWrite: boolean;
  onRedelivered: () => void;
}) {
  const trpc = useTRPC();
  const [open, setOpen] = useState<string | null>(null);
  const list = useInfiniteQuery({
    ...trpc.webhooks.deliveries.infiniteQueryOptions(
      { organizationId, webhookId, limit: pageSize },
      { getNextPageParam: (page) => page.nextCursor },
    ),
    staleTime: 0,
    refetchInterval: (query) => (hasPending(query.state.data) ? pollMs : false),
  });
  const deliveries = list.data?.pages.flatMap((page) => page.items) ?? [];
  const pending = hasPending(list.data);

  return (
    <Card flush aria-labelledby="delivery-log-title">
      <CardHeader
        titleId="delivery-log-title"
        title="Delivery log"
        description={
          pending
            ? 'Sending… this log refreshes until every pending delivery is delivered or has failed.'
            : 'Newest first. A failed attempt is retried with backoff for 24 hours (about 5 s, 1 min, 5 min, 30 min, 2 h, 6 h, 12 h).'
        }
        actions={
          <Button size="sm" variant="ghost" loading={list.isRefetching} onClick={() => void list.refetch()}>
            Refresh
          </Button>
        }
      />
      {list.isPending ? (
        <SkeletonRows rows={3} label="Loading deliveries" />
      ) : list.isError ? (
        <QueryErrorState title="Could not load the delivery log" query={list} />
      ) : deliveries.length === 0 ? (
        <EmptyState
          icon={<ActivityIcon size={20} />}
          title="No deliveries yet"
          description="Deliveries appear here when a subscribed event happens. Send a test event to check the endpoint now."
        />
      ) : (
        <>
          <Table caption="Deliveries" className="table-compact deliveries-table" aria-busy={pending || undefined}>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Response</th>
                <th scope="col">Last error</th>
                <th scope="col">Next attempt</th>
                <th scope="col">Delivered</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((delivery) => (
                <tr key={delivery.id} data-delivery={delivery.id} data-status={delivery.status}>
                  <td>
                    <div className="delivery-event">
                      <code className="mono-sm">{delivery.type}</code>
                      <span className="subtle">
                        <When iso={delivery.createdAt} />
                      </span>
                    </div>
                  </td>
                  <td>
                    <DeliveryStatusBadge status={delivery.status} />
                  </td>
                  <td className="cell-numeric">{delivery.attempts}</td>
                  <td>
                    {delivery.lastStatusCode === null ? (
                      <span className="subtle">—</span>
                    ) : (
                      <code
                        className={[
                          'mono-sm',
                          delivery.lastStatusCode >= 200 && delivery.lastStatusCode < 300
                            ? 'delivery-code-ok'
                            : 'delivery-code-bad',
                        ].join(' ')}
                      >
                        {delivery.lastStatusCode}
                      </code>
                    )}
                  </td>
                  <td className="delivery-error">
                    {delivery.lastError ? (
                      <span title={delivery.lastError}>{delivery.lastError}</span>
                    ) : (
                      <span className="subtle">—</span>
                    )}
                  </td>
                  <td className="cell-nowrap">
                    <When iso={delivery.nextAttemptAt} />
                  </td>
                  <td className="cell-nowrap">
                    <When iso={delivery.deliveredAt} />
                  </td>
                  <td className="cell-actions">
                    <Button
                      size="sm"
                      onClick={() => setOpen(delivery.id)}
                      aria-label={`View delivery of ${delivery.type} ${delivery.id}`}
                    >
                      View
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
          <LoadMore query={list} label="Older deliveries" />
        </>
      )}
      {open ? (
        <DeliveryDialog
          organizationId={organizationId}
          webhookId={webhookId}
          deliveryId={open}
          endpointEnabled={endpointEnabled}
          canWrite={canWrite}
          onClose={() => setOpen(null)}
          onRedelivered={() => {
            setOpen(null);
            onRedelivered();
          }}
        />
      ) : null}
    </Card>
  );
}
