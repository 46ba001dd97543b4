import { Badge, type BadgeTone } from '@/components/ui/Badge';

const tone: Record<string, BadgeTone> = {
  running: 'accent',
  success: 'success',
  error: 'danger',
  cancelled: 'warning',
};
export const statusLabel: Record<string, string> = {
  running: 'Running',
  success: 'Success',
  error: 'Error',
  cancelled: 'Cancelled',
};

export function SpanStatusBadge({ status }: { status: string }) {
  return (
    <Badge tone={tone[status] ?? 'neutral'}>
      {status === 'running' ? <span className="live-dot" aria-hidden="true" /> : null}
      {statusLabel[status] ?? status}
    </Badge>
  );
}

export const kindLabel: Record<string, string> = {
  execution: 'Execution',
  model: 'Model',
  attempt: 'Attempt',
  tool: 'Tool',
  retrieval: 'Retrieval',
  custom: 'Custom',
};
