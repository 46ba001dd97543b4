'use client';

import { useId, useMemo } from 'react';
import type { CreatedIngestionKey } from '@/server/keys/schemas';
import { Button } from '@/components/ui/Button';
import { Card, CardHeader } from '@/components/ui/Card';
import { SecretOnce, useNewSecretCard } from '@/components/ui/SecretOnce';
import { SnippetTabs } from '@/components/ui/SnippetTabs';
import { curlSnippet, otlpEnvSnippet, otlpNodeSnippet, otlpPythonSnippet, typescriptSnippet } from './snippets';

// Shown once, right after creation: the secret is never returned again.
export function NewKeySecret({ created, onDone }: { created: CreatedIngestionKey; onDone: () => void }) {
  const { cardProps, noticeId } = useNewSecretCard(created.secret);
  const nativeTitleId = useId();
  const otlpTitleId = useId();
  const { native, otlp } = useMemo(() => {
    const origin = typeof window === 'undefined' ? '' : window.location.origin;
    const { secret } = created;
    const service = created.key.application;
    return {
      native: [
        {
          id: 'curl',
          tab: 'curl',
          label: 'curl example',
          copyLabel: 'Copy command',
          code: curlSnippet(origin, secret, service),
        },
        {
          id: 'typescript',
          tab: 'TypeScript',
          label: 'TypeScript example',
          copyLabel: 'Copy code',
          code: typescriptSnippet(origin, secret, service),
        },
      ],
      otlp: [
        {
          id: 'otlp-env',
          tab: 'Environment',
          label: 'OpenTelemetry environment variables',
          copyLabel: 'Copy variables',
          code: otlpEnvSnippet(origin, secret, service),
        },
        {
          id: 'otlp-node',
          tab: 'Node.js',
          label: 'OpenTelemetry Node.js example',
          copyLabel: 'Copy code',
          code: otlpNodeSnippet(origin, secret, service),
        },
        {
          id: 'otlp-python',
          tab: 'Python',
          label: 'OpenTelemetry Python example',
          copyLabel: 'Copy code',
          code: otlpPythonSnippet(origin, secret, service),
        },
      ],
    };
  }, [created]);

  return (
    <Card aria-label="New ingestion key" {...cardProps}>
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
        <SecretOnce secret={created.secret} testId="ingestion-secret" noticeId={noticeId} />
        <div className="stack-sm" role="group" aria-labelledby={nativeTitleId}>
          <strong id={nativeTitleId}>Send a first trace</strong>
          <SnippetTabs title="Send a first trace" snippets={native} />
        </div>
        <div className="stack-sm" role="group" aria-labelledby={otlpTitleId}>
          <strong id={otlpTitleId}>Or send OpenTelemetry traces</strong>
          <p className="muted">
            Any OpenTelemetry SDK or Collector exports here over OTLP/HTTP (protobuf or JSON, gzip accepted) with this
            key: set these variables, or configure the exporter in code.
          </p>
          <SnippetTabs title="Send OpenTelemetry traces" snippets={otlp} />
        </div>
      </div>
    </Card>
  );
}
