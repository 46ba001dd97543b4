import { Badge, type BadgeTone } from '@/components/ui/Badge';
import type { WebhookDelivery } from '@/server/webhooks/schemas';

export function EndpointStatusBadge({ enabled, disabledReason }: { enabled: boolean; disabledReason: string | null }) {
  return enabled ? (
    <Badge tone="success">Enabled</Badge>
  ) : (
    <Badge tone="warning" title={disabledReason ?? undefined}>
      Disabled
    </Badge>
  );
}

const deliveryTone: Record<WebhookDelivery['status'], BadgeTone> = {
  pending: 'accent',
  delivered: 'success',
  failed: 'danger',
};
const deliveryLabel: Record<WebhookDelivery['status'], string> = {
  pending: 'Pending',
  delivered: 'Delivered',
  failed: 'Failed',
};

export function DeliveryStatusBadge({ status }: { status: WebhookDelivery['status'] }) {
  return (
    <Badge tone={deliveryTone[status]}>
      {status === 'pending' ? <span className="live-dot" aria-hidden="true" /> : null}
      {deliveryLabel[status]}
    </Badge>
  );
}
