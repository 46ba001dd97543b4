import type { ReactNode } from 'react';
import { ActivityIcon, AlertCircleIcon, ClockIcon, FileTextIcon, InfoIcon, KeyIcon } from '@/components/ui/icons';
import type { Warning, WarningKind } from '@/server/warnings/schemas';

export const warningKindMeta: Record<WarningKind, { label: string; icon: (size: number) => ReactNode }> = {
  archived_prompt_used: { label: 'Archived prompt used', icon: (size) => <FileTextIcon size={size} /> },
  key_unused: { label: 'Unused key', icon: (size) => <KeyIcon size={size} /> },
  evaluation_paused: { label: 'Evaluation paused', icon: (size) => <ClockIcon size={size} /> },
  payment_failed: { label: 'Payment failed', icon: (size) => <AlertCircleIcon size={size} /> },
  dataset_near_capacity: { label: 'Dataset near capacity', icon: (size) => <InfoIcon size={size} /> },
  otlp_spans_rejected: { label: 'OTLP spans rejected', icon: (size) => <ActivityIcon size={size} /> },
  webhook_failing: { label: 'Webhook failing', icon: (size) => <AlertCircleIcon size={size} /> },
  online_evaluation_paused: { label: 'Online evaluation paused', icon: (size) => <ClockIcon size={size} /> },
  online_evaluation_failing: { label: 'Online evaluation failing', icon: (size) => <AlertCircleIcon size={size} /> },
};

export const warningKindOptions = Object.keys(warningKindMeta) as WarningKind[];

// Where the thing a warning is about can be looked at (and fixed), when the dashboard has a page for it.
export function warningSubjectLink(organizationId: string, warning: Warning): { href: string; label: string } | null {
  const org = `/organizations/${organizationId}`;
  const keyName = typeof warning.details.keyName === 'string' ? warning.details.keyName : null;
  switch (warning.kind) {
    case 'archived_prompt_used':
      return warning.promptId ? { href: `${org}/prompts/${warning.promptId}`, label: 'Open prompt' } : null;
    case 'key_unused':
      if (warning.details.keyType === 'ingestion')
        return { href: `${org}/ingestion-keys`, label: keyName ? `Ingestion key “${keyName}”` : 'Ingestion keys' };
      return warning.promptId
        ? {
            href: `${org}/prompts/${warning.promptId}/keys`,
            label: keyName ? `Retrieval key “${keyName}”` : 'Retrieval keys',
          }
        : null;
    case 'evaluation_paused':
      return warning.promptId
        ? { href: `${org}/prompts/${warning.promptId}/evals/${warning.subjectId}`, label: 'Open evaluation' }
        : null;
    case 'dataset_near_capacity':
      return warning.promptId ? { href: `${org}/prompts/${warning.promptId}/dataset`, label: 'Open dataset' } : null;
    case 'otlp_spans_rejected':
      return { href: `${org}/ingestion-keys`, label: keyName ? `Ingestion key “${keyName}”` : 'Ingestion keys' };
    case 'payment_failed':
      return { href: `${org}/billing`, label: 'Billing' };
    case 'online_evaluation_paused':
    case 'online_evaluation_failing':
      // The online evaluation settings are on the prompt's Versions page.
      return warning.promptId
        ? { href: `${org}/prompts/${warning.promptId}/versions`, label: 'Online evaluation settings' }
        : null;
    default:
      return null;
  }
}
