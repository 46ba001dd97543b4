'use client';

import { useMemo } from 'react';
import type { CreatedIngestionKey } from '@/server/keys/schemas';
import { Button } from '@/components/ui/Button';
import { Card, CardHeader } from '@/components/ui/Card';
import { SecretOnce } from '@/components/ui/SecretOnce';
import { SnippetTabs } from '@/components/ui/SnippetTabs';
import { curlSnippet, typescriptSnippet } from './snippets';

// Shown once, right after creation: the secret is never returned again.
export function NewKeySecret({ created, onDone }: { created: CreatedIngestionKey; onDone: () => void }) {
  const snippets = useMemo(() => {
    const origin = typeof window === 'undefined' ? '' : window.location.origin;
    return [
      {
        id: 'curl',
        tab: 'curl',
        label: 'curl example',
        copyLabel: 'Copy command',
        code: curlSnippet(origin, created.secret, created.key.application),
      },
      {
        id: 'typescript',
        tab: 'TypeScript',
        label: 'TypeScript example',
        copyLabel: 'Copy code',
        code: typescriptSnippet(origin, created.secret, created.key.application),
      },
    ];
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
        <SecretOnce secret={created.secret} testId="ingestion-secret" />
        <SnippetTabs title="Send a first trace" snippets={snippets} />
      </div>
    </Card>
  );
}
