'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { formatDateTime } from '@/components/format';
import { JsonBlock } from '@/components/traces/JsonBlock';
import { Alert } from '@/components/ui/Alert';
import { Button } from '@/components/ui/Button';
import { Dialog } from '@/components/ui/Dialog';
import { CopyButton } from '@/components/ui/CopyButton';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { SkeletonRows } from '@/components/ui/States';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import { DeliveryStatusBadge } from './StatusBadges';

function Row({ term, children }: { term: string; children: ReactNode }) {
  return (
    <>
      <dt>{term}</dt>
      <dd>{children}</dd>
    </>
  );
}

const when = (iso: string | null) => (iso ? formatDateTime(iso) : '—');

// One delivery: what was sent (the exact JSON body), what came back, and "Redeliver", which sends
// the same event again as a new delivery with the same webhook-id.
export function DeliveryDialog({
  organizationId,
  webhookId,
  deliveryId,
  endpointEnabled,
  canWrite,
  onClose,
  onRedelivered,
}: {
  organizationId: string;
  webhookId: string;
  deliveryId: string;
  endpointEnabled: boolean;
  canWrite: boolean;
  onClose: () => void;
  onRedelivered: () => void;
}) {
  const trpc = useTRPC();
  const detail = useQuery({
    ...trpc.webhooks.delivery.queryOptions({ organizationId, webhookId, deliveryId }),
    refetchInterval: (query) => (query.state.data?.status === 'pending' ? 2_000 : false),
  });
  const queryClient = useQueryClient();
  const redeliver = useMutation(
    trpc.webhooks.redeliver.mutationOptions({
      onSuccess: async () => {
        onRedelivered();
        await queryClient.invalidateQueries(trpc.webhooks.deliveries.pathFilter());
      },
    }),
  );
  const error = readAppError(redeliver.error);
  const delivery = detail.data;

  return (
    <Dialog
      open
      onClose={() => !redeliver.isPending && onClose()}
      title={delivery ? `Delivery of ${delivery.type}` : 'Delivery'}
      description={
        delivery ? (
          <span className="inline">
            <DeliveryStatusBadge status={delivery.status} />
            <code className="mono-sm">{delivery.id}</code>
          </span>
        ) : undefined
      }
      footer={
        <>
          {!endpointEnabled && canWrite ? (
            <span className="subtle delivery-footer-note">Enable the endpoint to redeliver.</span>
          ) : null}
          <Button onClick={onClose} disabled={redeliver.isPending}>
            Close
          </Button>
          {canWrite ? (
            <Button
              variant="primary"
              loading={redeliver.isPending}
              disabled={!delivery || !endpointEnabled}
              onClick={() => redeliver.mutate({ organizationId, webhookId, deliveryId })}
            >
              Redeliver
            </Button>
          ) : null}
        </>
      }
    >
      <div className="delivery-detail">
        {error ? <Alert tone="error">{error.message}</Alert> : null}
        {detail.isPending ? (
          <SkeletonRows rows={4} label="Loading the delivery" />
        ) : detail.isError ? (
          <QueryErrorState title="Could not load this delivery" query={detail} />
        ) : delivery ? (
          <>
            <dl className="description-list delivery-facts">
              <Row term="Event id (webhook-id)">
                <span className="inline">
                  <code className="mono-sm">{delivery.eventId}</code>
                  <CopyButton value={delivery.eventId} label="Copy" />
                </span>
              </Row>
              <Row term="Attempts">{delivery.attempts}</Row>
              <Row term="Last response">
                {delivery.lastStatusCode === null ? '—' : <code className="mono-sm">{delivery.lastStatusCode}</code>}
              </Row>
              {delivery.lastError ? <Row term="Last error">{delivery.lastError}</Row> : null}
              <Row term="Created">{when(delivery.createdAt)}</Row>
              <Row term="Last attempt">{when(delivery.lastAttemptAt)}</Row>
              {delivery.status === 'pending' ? <Row term="Next attempt">{when(delivery.nextAttemptAt)}</Row> : null}
              {delivery.deliveredAt ? <Row term="Delivered">{when(delivery.deliveredAt)}</Row> : null}
            </dl>
            <section className="stack-sm" aria-label="Payload">
              <div className="spread">
                <strong>Payload</strong>
                <CopyButton value={delivery.payload} label="Copy payload" />
              </div>
              <JsonBlock value={delivery.payload} label="Payload JSON" />
            </section>
            <section className="stack-sm" aria-label="Response">
              <strong>Response body</strong>
              {delivery.responseExcerpt ? (
                <>
                  <JsonBlock value={delivery.responseExcerpt} label="Response excerpt" />
                  <span className="field-hint">The first 4 KiB of the last response.</span>
                </>
              ) : (
                <p className="subtle">
                  {delivery.attempts === 0
                    ? 'No attempt yet.'
                    : delivery.lastStatusCode === null
                      ? 'No response: the request did not complete.'
                      : 'The response had no body.'}
                </p>
              )}
            </section>
          </>
        ) : null}
      </div>
    </Dialog>
  );
}
