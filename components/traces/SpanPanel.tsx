'use client';

import Link from 'next/link';
import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import type { Span } from '@/server/traces/schemas';
import { useTRPC } from '@/lib/trpc/client';
import { Badge } from '@/components/ui/Badge';
import { Card } from '@/components/ui/Card';
import { formatCount, formatDuration, formatPreciseTime, formatTimestamp, formatUsdNanos } from '@/components/format';
import { costSourceLabel, versionHref } from './format';
import { JsonBlock } from './JsonBlock';
import { SpanStatusBadge, kindLabel } from './StatusBadge';
import { KindChip, spanEnd } from './Waterfall';

function Fact({ label, children }: { label: string; children: ReactNode }) {
  if (children === null || children === undefined || children === '') return null;
  return (
    <>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </>
  );
}

const mono = (value: string | null) => (value ? <code className="mono-sm">{value}</code> : null);

// The version a span names, linked when it is one of this organization's prompt versions; the id as
// sent stays visible either way.
function PromptVersion({ organizationId, versionId }: { organizationId: string; versionId: string }) {
  const trpc = useTRPC();
  const found = useQuery(
    trpc.traces.promptVersion.queryOptions({ organizationId, versionId }, { staleTime: Infinity }),
  );
  if (!found.data) return mono(versionId);
  const { promptId, promptName, version } = found.data;
  return (
    <>
      <Link href={versionHref(organizationId, promptId, version)}>
        {promptName} v{version}
      </Link>{' '}
      {mono(versionId)}
    </>
  );
}

// Everything stored for one span: timing, usage, model, ids, content and metadata.
export function SpanPanel({
  organizationId,
  span,
  orphan,
  now,
}: {
  organizationId: string;
  span: Span;
  orphan: boolean;
  now: number;
}) {
  const omitted = new Set(span.omitted);
  const hasUsage =
    span.inputTokens !== null || span.outputTokens !== null || span.costUsdNanos !== null || span.costSource !== null;
  return (
    <Card className="span-panel" aria-label="Span details">
      <div className="card-body stack-sm">
        <h2 className="span-panel-title">
          <KindChip kind={span.kind} />
          <span>{span.name}</span>
        </h2>
        <div className="inline">
          <SpanStatusBadge status={span.status} />
          <Badge>{kindLabel[span.kind] ?? span.kind}</Badge>
          {orphan ? (
            <Badge tone="warning" title="The parent span has not arrived yet">
              Parent not received
            </Badge>
          ) : null}
          {span.omitted.map((part) => (
            <Badge key={part} tone="warning">
              {part} omitted
            </Badge>
          ))}
        </div>
      </div>

      <section className="span-panel-section" aria-label="Timing">
        <h3>Timing</h3>
        <dl className="span-facts">
          <Fact label="Started">
            {formatTimestamp(span.startedAt)} <span className="muted">({formatPreciseTime(span.startedAt)})</span>
          </Fact>
          <Fact label="Ended">
            {span.endedAt === null ? <span className="muted">Still running</span> : formatPreciseTime(span.endedAt)}
          </Fact>
          <Fact label="Duration">
            {formatDuration(spanEnd(span, now) - span.startedAt)}
            {span.endedAt === null ? <span className="muted"> so far</span> : null}
          </Fact>
          <Fact label="Revision">{span.revision}</Fact>
        </dl>
      </section>

      {span.provider || span.model || span.promptVersionId || hasUsage ? (
        <section className="span-panel-section" aria-label="Model and usage">
          <h3>Model and usage</h3>
          <dl className="span-facts">
            <Fact label="Provider">{span.provider}</Fact>
            <Fact label="Model">{mono(span.model)}</Fact>
            <Fact label="Prompt version">
              {span.promptVersionId ? (
                <PromptVersion organizationId={organizationId} versionId={span.promptVersionId} />
              ) : null}
            </Fact>
            <Fact label="Input tokens">{span.inputTokens === null ? null : formatCount(span.inputTokens)}</Fact>
            <Fact label="Output tokens">{span.outputTokens === null ? null : formatCount(span.outputTokens)}</Fact>
            <Fact label="Cost">
              {span.costUsdNanos === null ? (
                span.costSource ? (
                  <span className="muted">Not available</span>
                ) : null
              ) : (
                formatUsdNanos(span.costUsdNanos)
              )}
              {span.costSource && span.costUsdNanos !== null ? (
                <span className="muted"> · {costSourceLabel[span.costSource] ?? span.costSource}</span>
              ) : null}
            </Fact>
            <Fact label="Pricing version">{span.pricingVersion}</Fact>
          </dl>
        </section>
      ) : null}

      <section className="span-panel-section" aria-label="Content">
        <h3>Content</h3>
        {span.contentJson ? (
          <JsonBlock value={span.contentJson} label="Content JSON" />
        ) : (
          <p className="muted">
            {omitted.has('input') || omitted.has('output')
              ? 'Content was omitted by the application.'
              : 'No content recorded.'}
          </p>
        )}
        {(['input', 'output', 'error'] as const).filter((part) => omitted.has(part)).length ? (
          <p className="muted" style={{ marginTop: 8 }}>
            {(['input', 'output', 'error'] as const)
              .filter((part) => omitted.has(part))
              .map((part) => `${part[0].toUpperCase()}${part.slice(1)} omitted`)
              .join(' · ')}
          </p>
        ) : null}
      </section>

      <section className="span-panel-section" aria-label="Metadata">
        <h3>Metadata</h3>
        {span.metadataJson ? (
          <JsonBlock value={span.metadataJson} label="Metadata JSON" />
        ) : (
          <p className="muted">{omitted.has('metadata') ? 'Metadata omitted.' : 'No metadata recorded.'}</p>
        )}
      </section>

      <section className="span-panel-section" aria-label="Identifiers">
        <h3>Identifiers</h3>
        <dl className="span-facts">
          <Fact label="Span ID">{mono(span.spanId)}</Fact>
          <Fact label="Parent span">
            {span.parentSpanId ? mono(span.parentSpanId) : <span className="muted">None (root)</span>}
          </Fact>
          <Fact label="Trace ID">{mono(span.traceId)}</Fact>
          <Fact label="Service">{span.service}</Fact>
          <Fact label="Application">{span.application}</Fact>
          <Fact label="Environment">{span.environment}</Fact>
          <Fact label="Session">{mono(span.sessionId)}</Fact>
          <Fact label="End user">{mono(span.endUserId)}</Fact>
        </dl>
      </section>
    </Card>
  );
}
