'use client';

import { useMemo, useState } from 'react';
import type { CreatedIngestionKey } from '@/server/keys/schemas';
import { Alert } from '@/components/ui/Alert';
import { Button } from '@/components/ui/Button';
import { Card, CardHeader } from '@/components/ui/Card';
import { CopyButton } from './CopyButton';
import { curlSnippet, typescriptSnippet } from './snippets';

// Shown once, right after creation: the secret is never returned again.
export function NewKeySecret({ created, onDone }: { created: CreatedIngestionKey; onDone: () => void }) {
  const [tab, setTab] = useState<'curl' | 'typescript'>('curl');
  const snippets = useMemo(() => {
    const origin = typeof window === 'undefined' ? '' : window.location.origin;
    return { curl: curlSnippet(origin, created.secret, created.key.application), typescript: typescriptSnippet(origin, created.secret, created.key.application) };
  }, [created]);

  return (
    <Card aria-label="New ingestion key">
      <CardHeader
        title={`“${created.key.name}” is ready`}
        description={`For ${created.key.application} in ${created.key.environment}.`}
        actions={
          <Button variant="primary" onClick={onDone}>
            Done
          </Button>
        }
      />
      <div className="card-body stack">
        <Alert tone="warning" title="Copy this key now">
          You will not be able to see it again. If you lose it, revoke it and create a new one.
        </Alert>
        <div className="secret-box">
          <code data-testid="ingestion-secret">{created.secret}</code>
          <CopyButton value={created.secret} label="Copy key" />
        </div>
        <div>
          <div className="snippet-bar">
            <div className="snippet-tabs" role="tablist" aria-label="Send a first trace">
              <button type="button" role="tab" className="snippet-tab" aria-selected={tab === 'curl'} onClick={() => setTab('curl')}>
                curl
              </button>
              <button type="button" role="tab" className="snippet-tab" aria-selected={tab === 'typescript'} onClick={() => setTab('typescript')}>
                TypeScript
              </button>
            </div>
            <CopyButton value={snippets[tab]} label={tab === 'curl' ? 'Copy command' : 'Copy code'} />
          </div>
          <div className="snippet" role="tabpanel" aria-label={tab === 'curl' ? 'curl example' : 'TypeScript example'}>
            <pre>
              <code>{snippets[tab]}</code>
            </pre>
          </div>
        </div>
      </div>
    </Card>
  );
}
