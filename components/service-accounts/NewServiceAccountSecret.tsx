'use client';

import { useMemo } from 'react';
import type { CreatedServiceAccount } from '@/server/service-accounts/schemas';
import { Button } from '@/components/ui/Button';
import { Card, CardHeader } from '@/components/ui/Card';
import { CopyButton } from '@/components/ui/CopyButton';
import { SecretOnce, useNewSecretCard } from '@/components/ui/SecretOnce';
import { SnippetTabs } from '@/components/ui/SnippetTabs';
import { cliSnippet, curlSnippet, githubActionsSnippet } from './snippets';

// Shown once, right after creation: the client secret is never returned again.
export function NewServiceAccountSecret({ created, onDone }: { created: CreatedServiceAccount; onDone: () => void }) {
  const { serviceAccount, clientSecret } = created;
  const { cardProps, noticeId } = useNewSecretCard(clientSecret);
  const snippets = useMemo(() => {
    const origin = typeof window === 'undefined' ? '' : window.location.origin;
    return [
      {
        id: 'curl',
        tab: 'curl',
        label: 'Token request with curl',
        copyLabel: 'Copy command',
        code: curlSnippet(origin, serviceAccount.clientId, clientSecret),
      },
      {
        id: 'cli',
        tab: 'CLI',
        label: 'CLI environment',
        copyLabel: 'Copy commands',
        code: cliSnippet(origin, serviceAccount.clientId, clientSecret),
      },
      {
        id: 'github',
        tab: 'GitHub Actions',
        label: 'GitHub Actions step',
        copyLabel: 'Copy step',
        code: githubActionsSnippet(origin),
      },
    ];
  }, [serviceAccount.clientId, clientSecret]);

  return (
    <Card aria-label="New service account" {...cardProps}>
      <CardHeader
        title={`“${serviceAccount.name}” is ready`}
        description={`It acts in this organization as ${/^[aeiou]/.test(serviceAccount.role) ? 'an' : 'a'} ${serviceAccount.role}.`}
        actions={
          <Button variant="primary" onClick={onDone}>
            Done
          </Button>
        }
      />
      <div className="card-body stack">
        <div className="stack-sm">
          <strong>Client ID</strong>
          <div className="secret-box">
            <code data-testid="service-account-client-id">{serviceAccount.clientId}</code>
            <CopyButton value={serviceAccount.clientId} label="Copy client ID" />
          </div>
        </div>
        <div className="stack-sm">
          <strong>Client secret</strong>
          <SecretOnce secret={clientSecret} testId="service-account-secret" noun="client secret" noticeId={noticeId} />
        </div>
        <SnippetTabs title="Use it" snippets={snippets} />
      </div>
    </Card>
  );
}
