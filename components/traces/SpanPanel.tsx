'use client';

import Link from 'next/link';
import { useQuery } from '@tanstack/react-query';
import type { Span } from '@/server/traces/schemas';
import { useTRPC } from '@/lib/trpc/client';
import { Badge } from '@/components/ui/Badge';
import { Card } from '@/components/ui/Card';
import { formatCount, formatDuration, formatPreciseTime, formatTimestamp, formatUsdNanos } from '@/components/format';
import { costSourceLabel, versionHref } from './format';
import { AddToDataset, offersAddToDataset } from './AddToDataset';
import { Fact, mono } from './Fact';
import { OnlineScoreSection, type SpanOnlineScore } from './OnlineScore';
import { SpanAttributesSection, SpanContentSection } from './SpanContent';
import { SpanStatusBadge, kindLabel, statusLabel } from './StatusBadge';
import { KindChip, spanEnd } from './Waterfall';

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

function Cost({ span }: { span: Span }) {
  if (span.costUsdNanos === null) return span.costSource ? <span className="muted">Not available</span> : null;
  return (
    <>
      {formatUsdNanos(span.costUsdNanos)}
      {span.costSource ? <span className="muted"> · {costSourceLabel[span.costSource] ?? span.costSource}</span> : null}
    </>
  );
}

function ParentSpan({ span, orphan }: { span: Span; orphan: boolean }) {
  if (span.parentSpanId) {
    return (
      <>
        {mono(span.parentSpanId)}
        {orphan ? <span className="muted"> (not received yet)</span> : null}
      </>
    );
  }
  // OpenTelemetry lets a trace hold several spans without a parent; the earliest is its root.
  return <span className="muted">{span.spanId === span.rootSpanId ? 'None (root)' : 'None'}</span>;
}

// The span field the trace API adds with online evaluation (absent from older answers).
const onlineScoreOf = (span: Span): SpanOnlineScore | undefined =>
  (span as Span & { onlineScore?: SpanOnlineScore }).onlineScore;

// Everything stored for one span: the fields every span has (native or mapped from OpenTelemetry),
// timing, the content as a transcript, the remaining attributes and the ids.
// The panel's id, for the trace page to scroll it into view when a span is chosen.
export const spanDetailsId = 'span-details';

export function SpanPanel({
  organizationId,
  span,
  orphan,
  now,
  canWrite,
}: {
  organizationId: string;
  span: Span;
  orphan: boolean;
  now: number;
  /** The viewer may write to prompts (editor or admin of a writable organization): offer "Add to dataset". */
  canWrite: boolean;
}) {
  return (
    // A tab stop of its own: the panel scrolls, and a keyboard (Safari's too) must be able to scroll it.
    <Card className="span-panel" id={spanDetailsId} aria-label="Span details" tabIndex={0}>
      <div className="card-body stack-sm">
        <div className="span-panel-head">
          <h2 className="span-panel-title">
            <KindChip kind={span.kind} />
            <span>{span.name}</span>
          </h2>
          {canWrite && offersAddToDataset(span) ? (
            <AddToDataset key={span.spanId} organizationId={organizationId} span={span} />
          ) : null}
        </div>
        <div className="inline">
          <SpanStatusBadge status={span.status} />
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

      <section className="span-panel-section" aria-label="Mapped fields">
        <h3>Mapped fields</h3>
        <dl className="span-facts">
          <Fact label="Kind">{kindLabel[span.kind] ?? span.kind}</Fact>
          <Fact label="Status">{statusLabel[span.status] ?? span.status}</Fact>
          <Fact label="Service">{span.service}</Fact>
          <Fact label="Provider">{span.provider}</Fact>
          <Fact label="Model">{mono(span.model)}</Fact>
          <Fact label="Prompt version">
            {span.promptVersionId ? (
              <PromptVersion organizationId={organizationId} versionId={span.promptVersionId} />
            ) : null}
          </Fact>
          <Fact label="Input tokens">{span.inputTokens === null ? null : formatCount(span.inputTokens)}</Fact>
          <Fact label="Output tokens">{span.outputTokens === null ? null : formatCount(span.outputTokens)}</Fact>
          <Fact label="Cost">{span.costUsdNanos === null && !span.costSource ? null : <Cost span={span} />}</Fact>
          <Fact label="Pricing version">{span.pricingVersion}</Fact>
          <Fact label="Session">{mono(span.sessionId)}</Fact>
          <Fact label="End user">{mono(span.endUserId)}</Fact>
          <Fact label="Application">{span.application}</Fact>
          <Fact label="Environment">{span.environment}</Fact>
        </dl>
      </section>

      <OnlineScoreSection score={onlineScoreOf(span)} />

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

      <SpanContentSection span={span} />
      <SpanAttributesSection span={span} />

      <section className="span-panel-section" aria-label="Identifiers">
        <h3>Identifiers</h3>
        <dl className="span-facts">
          <Fact label="Span ID">{mono(span.spanId)}</Fact>
          <Fact label="Parent span">
            <ParentSpan span={span} orphan={orphan} />
          </Fact>
          <Fact label="Trace ID">{mono(span.traceId)}</Fact>
        </dl>
      </section>
    </Card>
  );
}
