'use client';

import '@/components/traces/traces.css';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { formatDateTime, formatRelative } from '@/components/format';
import { OrganizationGate } from '@/components/organizations/OrganizationGate';
import { Alert } from '@/components/ui/Alert';
import { Button, ButtonLink } from '@/components/ui/Button';
import { Card, CardBody, CardHeader } from '@/components/ui/Card';
import { ConfirmDialog } from '@/components/ui/ConfirmDialog';
import { CopyButton } from '@/components/ui/CopyButton';
import { Dialog } from '@/components/ui/Dialog';
import { PageHeader, TitleBreak } from '@/components/ui/PageHeader';
import { ErrorState, SkeletonRows } from '@/components/ui/States';
import { TrashIcon, ZapIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import { can } from '@/server/auth/schemas';
import type { Webhook } from '@/server/webhooks/schemas';
import { DeliveryLog } from './DeliveryLog';
import { EditWebhookDialog } from './EditWebhookDialog';
import { eventDescriptions } from './events';
import { EndpointStatusBadge } from './StatusBadges';
import { NotAdminExplanation } from './WebhooksPage';
import './webhooks.css';

type Org = { id: string; name: string; readOnly: boolean };
type Target = { organizationId: string; webhookId: string };

function Breadcrumbs({ org }: { org: Org }) {
  return (
    <>
      <Link href="/organizations">Organizations</Link>/<Link href={`/organizations/${org.id}`}>{org.name}</Link>/
      <Link href={`/organizations/${org.id}/webhooks`}>Webhooks</Link>
    </>
  );
}

// Enabling again is not a danger, but it has one consequence people assume otherwise: what
// happened while the endpoint was disabled is not sent.
function EnableDialog({
  pending,
  error,
  onClose,
  onConfirm,
}: {
  pending: boolean;
  error: string | null;
  onClose: () => void;
  onConfirm: () => void;
}) {
  return (
    <Dialog
      open
      onClose={() => !pending && onClose()}
      title="Enable this endpoint?"
      description="Events from now on are delivered again. What happened while it was disabled is not sent, and deliveries that were waiting when it was disabled stay failed: redeliver any of those from the log if you need them."
      footer={
        <>
          <Button onClick={onClose} disabled={pending}>
            Cancel
          </Button>
          <Button variant="primary" loading={pending} onClick={onConfirm}>
            Enable endpoint
          </Button>
        </>
      }
    >
      {error ? <Alert tone="error">{error}</Alert> : null}
    </Dialog>
  );
}

function EndpointSummary({ webhook }: { webhook: Webhook }) {
  return (
    <Card aria-labelledby="endpoint-settings-title">
      <CardHeader titleId="endpoint-settings-title" title="Endpoint" />
      <CardBody>
        <dl className="description-list webhook-facts">
          <dt>URL</dt>
          <dd>
            <div className="webhook-url-row">
              <code className="mono-sm webhook-url-text">{webhook.url}</code>
              <CopyButton value={webhook.url} label="Copy URL" />
            </div>
          </dd>
          <dt>Events</dt>
          <dd>
            <ul className="webhook-event-list">
              {webhook.events.map((type) => (
                <li key={type}>
                  <code className="webhook-chip">{type}</code>{' '}
                  <span className="subtle">{eventDescriptions[type as keyof typeof eventDescriptions] ?? ''}</span>
                </li>
              ))}
            </ul>
          </dd>
          <dt>Description</dt>
          <dd>{webhook.description ? webhook.description : <span className="subtle">None</span>}</dd>
          <dt>Status</dt>
          <dd className="inline">
            <EndpointStatusBadge enabled={webhook.enabled} disabledReason={webhook.disabledReason} />
            {!webhook.enabled ? (
              <span className="muted">{webhook.disabledReason ?? 'Turned off by an admin.'}</span>
            ) : null}
          </dd>
          <dt>Created</dt>
          <dd title={formatDateTime(webhook.createdAt)}>{formatRelative(webhook.createdAt)}</dd>
          <dt>Signing secret</dt>
          <dd className="muted">
            Shown once when the endpoint was added. Delete and add the endpoint again for a new one.
          </dd>
        </dl>
      </CardBody>
    </Card>
  );
}

function EndpointView({ org, webhookId }: { org: Org; webhookId: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const target: Target = { organizationId: org.id, webhookId };
  const endpoint = useQuery({ ...trpc.webhooks.get.queryOptions(target), staleTime: 0 });
  const [notice, setNotice] = useState<string | null>(null);
  const [editing, setEditing] = useState(false);
  const [confirm, setConfirm] = useState<'disable' | 'enable' | 'delete' | null>(null);
  const refresh = () => queryClient.invalidateQueries(trpc.webhooks.pathFilter());

  const sendTest = useMutation(
    trpc.webhooks.test.mutationOptions({
      onSuccess: async () => {
        setNotice('Test event queued. Watch it arrive in the delivery log below.');
        await refresh();
      },
    }),
  );
  const update = useMutation(
    trpc.webhooks.update.mutationOptions({
      onSuccess: async (updated) => {
        setConfirm(null);
        setNotice(
          updated.enabled
            ? 'Endpoint enabled. New events are delivered from now on; nothing missed while it was disabled is sent.'
            : 'Endpoint disabled. No events are sent to it until it is enabled again.',
        );
        await refresh();
      },
    }),
  );
  const remove = useMutation(
    trpc.webhooks.remove.mutationOptions({
      onSuccess: async () => {
        router.push(`/organizations/${org.id}/webhooks`);
        // Marked stale, not refetched here: this page's endpoint is gone and must not flash "not found".
        await queryClient.invalidateQueries({ ...trpc.webhooks.pathFilter(), refetchType: 'none' });
      },
    }),
  );

  if (endpoint.isPending) {
    return (
      <div className="page" aria-busy="true">
        <PageHeader breadcrumbs={<Breadcrumbs org={org} />} title="Webhook endpoint" />
        <Card>
          <SkeletonRows rows={4} label="Loading the endpoint" />
        </Card>
      </div>
    );
  }
  if (endpoint.isError) {
    const missing = readAppError(endpoint.error)?.code === 'not_found';
    return (
      <div className="page">
        <PageHeader breadcrumbs={<Breadcrumbs org={org} />} title="Webhook endpoint" />
        <Card>
          <ErrorState
            title={missing ? 'Endpoint not found' : 'Could not load this endpoint'}
            description={missing ? 'It may have been deleted.' : readAppError(endpoint.error)?.message}
            action={<ButtonLink href={`/organizations/${org.id}/webhooks`}>All endpoints</ButtonLink>}
          />
        </Card>
      </div>
    );
  }

  const webhook = endpoint.data;
  const writable = !org.readOnly;
  const testError = readAppError(sendTest.error);
  return (
    <div className="page">
      <PageHeader
        breadcrumbs={<Breadcrumbs org={org} />}
        title={
          <span className="webhook-title">
            <span className="webhook-title-url" title={webhook.description ? undefined : webhook.url}>
              {webhook.description || webhook.url}
            </span>
            <TitleBreak />
            <EndpointStatusBadge enabled={webhook.enabled} disabledReason={webhook.disabledReason} />
          </span>
        }
        description={webhook.description ? <code className="mono-sm">{webhook.url}</code> : undefined}
        actions={
          writable ? (
            <>
              <span
                className="button-reason"
                title={webhook.enabled ? undefined : 'Enable the endpoint to send a test event.'}
              >
                <Button
                  variant="primary"
                  icon={<ZapIcon size={14} />}
                  loading={sendTest.isPending}
                  disabled={!webhook.enabled}
                  onClick={() => (setNotice(null), sendTest.mutate(target))}
                >
                  Send test event
                </Button>
              </span>
              <Button onClick={() => (setNotice(null), setEditing(true))}>Edit</Button>
              {webhook.enabled ? (
                <Button onClick={() => (update.reset(), setConfirm('disable'))}>Disable</Button>
              ) : (
                <Button onClick={() => (update.reset(), setConfirm('enable'))}>Enable</Button>
              )}
              <Button
                variant="danger-outline"
                icon={<TrashIcon size={14} />}
                onClick={() => (remove.reset(), setConfirm('delete'))}
              >
                Delete
              </Button>
            </>
          ) : null
        }
      />
      {org.readOnly ? (
        <Alert tone="warning">This organization is scheduled for deletion: endpoints cannot be changed.</Alert>
      ) : null}
      {!webhook.enabled ? (
        <Alert
          tone="warning"
          title="This endpoint is disabled"
          action={
            writable ? (
              <Button size="sm" onClick={() => (update.reset(), setConfirm('enable'))}>
                Enable
              </Button>
            ) : undefined
          }
        >
          {webhook.disabledReason
            ? `Reason: ${webhook.disabledReason}${/[.!?]$/.test(webhook.disabledReason) ? '' : '.'} `
            : 'An admin turned it off. '}
          Nothing is sent to it while it is disabled, and enabling it does not send what was missed.
        </Alert>
      ) : null}
      {notice ? <Alert tone="success">{notice}</Alert> : null}
      {testError ? <Alert tone="error">{testError.message}</Alert> : null}
      <DeliveryLog
        organizationId={org.id}
        webhookId={webhookId}
        endpointEnabled={webhook.enabled}
        canWrite={writable}
        onRedelivered={() =>
          setNotice('Redelivery queued: a new delivery of the same event, with the same webhook-id.')
        }
      />
      <EndpointSummary webhook={webhook} />
      {editing ? (
        <EditWebhookDialog
          organizationId={org.id}
          webhook={webhook}
          onClose={() => setEditing(false)}
          onSaved={() => setNotice('Endpoint saved.')}
        />
      ) : null}
      {confirm === 'enable' ? (
        <EnableDialog
          pending={update.isPending}
          error={readAppError(update.error)?.message ?? null}
          onClose={() => setConfirm(null)}
          onConfirm={() => update.mutate({ ...target, enabled: true })}
        />
      ) : null}
      <ConfirmDialog
        open={confirm === 'disable'}
        onClose={() => setConfirm(null)}
        title="Disable this endpoint?"
        description="No events are sent to it while it is disabled, and deliveries still waiting are marked failed. Enabling it later does not send what was missed."
        confirmLabel="Disable endpoint"
        pending={update.isPending}
        error={readAppError(update.error)?.message}
        onConfirm={() => update.mutate({ ...target, enabled: false })}
      />
      <ConfirmDialog
        open={confirm === 'delete'}
        onClose={() => setConfirm(null)}
        title="Delete this endpoint?"
        description={
          <>
            <code className="mono-sm">{webhook.url}</code> stops receiving events at once, and its delivery log is
            deleted. This cannot be undone.
          </>
        }
        confirmLabel="Delete endpoint"
        pending={remove.isPending}
        error={readAppError(remove.error)?.message}
        onConfirm={() => remove.mutate(target)}
      />
    </div>
  );
}

export function WebhookDetailPage({ organizationId, webhookId }: { organizationId: string; webhookId: string }) {
  return (
    <OrganizationGate organizationId={organizationId}>
      {(org) =>
        can(org.role, 'webhooks.manage') ? (
          <EndpointView org={org} webhookId={webhookId} />
        ) : (
          <div className="page">
            <PageHeader breadcrumbs={<Breadcrumbs org={org} />} title="Webhook endpoint" />
            <Card>
              <NotAdminExplanation organizationId={org.id} />
            </Card>
          </div>
        )
      }
    </OrganizationGate>
  );
}
