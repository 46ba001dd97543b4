'use client';

import { useMemo } from 'react';
import { Button, ButtonLink } from '@/components/ui/Button';
import { Card, CardHeader } from '@/components/ui/Card';
import { SecretOnce, useNewSecretCard } from '@/components/ui/SecretOnce';
import { SnippetTabs } from '@/components/ui/SnippetTabs';
import type { CreatedWebhook } from './CreateWebhookDialog';
import { DeliveryHeaders } from './DeliveryHeaders';
import { envSnippet, expressSnippet, verifySnippet } from './snippets';

// Shown once, right after creation: the signing secret is never returned again.
export function NewWebhookSecret({
  organizationId,
  created,
  onDone,
}: {
  organizationId: string;
  created: CreatedWebhook;
  onDone: () => void;
}) {
  const { webhook, secret } = created;
  const { cardProps, noticeId } = useNewSecretCard(secret);
  const snippets = useMemo(
    () => [
      {
        id: 'verify',
        tab: 'TypeScript',
        label: 'Verify a delivery with standardwebhooks',
        copyLabel: 'Copy code',
        code: verifySnippet(),
      },
      { id: 'express', tab: 'Express', label: 'An Express route', copyLabel: 'Copy code', code: expressSnippet() },
      { id: 'env', tab: '.env', label: 'Environment', copyLabel: 'Copy line', code: envSnippet(secret) },
    ],
    [secret],
  );

  return (
    <Card aria-label="New webhook endpoint" {...cardProps}>
      <CardHeader
        title="Endpoint added"
        description={
          <>
            <code className="mono-sm">{webhook.url}</code> receives {webhook.events.length}{' '}
            {webhook.events.length === 1 ? 'event type' : 'event types'}. Verify every delivery with this secret.
          </>
        }
        actions={
          <div className="inline">
            <ButtonLink href={`/organizations/${organizationId}/webhooks/${webhook.id}`}>Open the endpoint</ButtonLink>
            <Button variant="primary" onClick={onDone}>
              Done
            </Button>
          </div>
        }
      />
      <div className="card-body stack">
        <div className="stack-sm">
          <strong>Signing secret</strong>
          <SecretOnce
            secret={secret}
            testId="webhook-secret"
            noticeId={noticeId}
            noun="signing secret"
            ifLost="If you lose it, delete this endpoint and add it again to get a new secret."
          />
        </div>
        <DeliveryHeaders />
        <SnippetTabs title="Verify deliveries" snippets={snippets} />
      </div>
    </Card>
  );
}
