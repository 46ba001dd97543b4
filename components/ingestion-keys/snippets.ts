// Copy-paste examples that send one finished root span to POST /api/v1/traces.
import { shellQuote } from '@/lib/shell-quote';
import { sdkInstallHint } from '@/lib/install-hints';

function randomHex(bytes: number): string {
  const values = crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(values, (b) => b.toString(16).padStart(2, '0')).join('');
}

export function curlSnippet(origin: string, secret: string, service: string): string {
  const traceId = randomHex(16);
  const spanId = randomHex(8);
  const endedAt = Date.now();
  const batch = {
    version: 1,
    events: [
      {
        traceId,
        spanId,
        rootSpanId: spanId,
        revision: 0,
        name: 'hello from curl',
        service,
        kind: 'execution',
        status: 'success',
        startedAt: endedAt - 250,
        endedAt,
      },
    ],
  };
  return [
    `curl -X POST '${origin}/api/v1/traces' \\`,
    `  -H 'Authorization: Bearer ${secret}' \\`,
    `  -H 'Content-Type: application/json' \\`,
    `  -d ${shellQuote(JSON.stringify(batch))}`,
  ].join('\n');
}

// The SDK's TraceExporter (sdk/README.md "Export traces"): batched, retried with backoff, never throws.
export function typescriptSnippet(origin: string, secret: string, service: string): string {
  return `${sdkInstallHint(origin)}
import { TraceExporter, newSpanId, newTraceId } from '@promptloop/sdk';

// Keep the key in your secret store, e.g. PROMPTLOOP_INGESTION_KEY.
const exporter = new TraceExporter({
  url: '${origin}',
  ingestionKey: process.env.PROMPTLOOP_INGESTION_KEY ?? '${secret}',
  onError: (error) => console.warn('Trace export failed:', error.message),
});

const traceId = newTraceId();
const spanId = newSpanId();
const startedAt = Date.now();
// … the work you want to trace …
exporter.export({
  traceId, spanId, rootSpanId: spanId, revision: 0, name: 'handle request', service: ${JSON.stringify(service)},
  kind: 'execution', status: 'success', startedAt, endedAt: Date.now(),
});

// export() queues and returns at once; batches are sent in the background and retried on 429 and 5xx.
// Before a serverless handler returns or the process exits:
await exporter.shutdown();`;
}

// OpenTelemetry (API.md "OTLP trace ingestion"): the same key, sent by any OTLP/HTTP exporter to
// {origin}/api/v1/otel/v1/traces. Exporters configured by environment append /v1/traces themselves.
function otlpEndpoint(origin: string): string {
  return `${origin}/api/v1/otel`;
}

export function otlpTracesUrl(origin: string): string {
  return `${otlpEndpoint(origin)}/v1/traces`;
}

// Single quotes keep the space of "Bearer plt_…" in a shell; the key and URL hold no quote.
export function otlpEnvSnippet(origin: string, secret: string, service: string): string {
  return [
    `export OTEL_EXPORTER_OTLP_ENDPOINT='${otlpEndpoint(origin)}'`,
    `export OTEL_EXPORTER_OTLP_HEADERS='Authorization=Bearer ${secret}'`,
    `export OTEL_SERVICE_NAME=${shellQuote(service)}`,
  ].join('\n');
}

// The OpenTelemetry Node SDK with the OTLP/HTTP protobuf exporter (README "Send OpenTelemetry traces").
export function otlpNodeSnippet(origin: string, secret: string, service: string): string {
  return `// npm install @opentelemetry/api @opentelemetry/sdk-node @opentelemetry/exporter-trace-otlp-proto
// hello-otel.mjs sends one span. In an application, start the SDK before anything else loads and add
// instrumentations (e.g. @opentelemetry/instrumentation-openai): README, "Send OpenTelemetry traces".
import { trace } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';

const sdk = new NodeSDK({
  serviceName: ${JSON.stringify(service)},
  traceExporter: new OTLPTraceExporter({
    url: '${otlpTracesUrl(origin)}',
    // Keep the key in your secret store, e.g. PROMPTLOOP_INGESTION_KEY.
    headers: { Authorization: \`Bearer \${process.env.PROMPTLOOP_INGESTION_KEY ?? '${secret}'}\` },
  }),
});
sdk.start();

trace.getTracer('hello').startActiveSpan('hello from node', (span) => {
  // … the work you want to trace …
  span.end();
});

// Spans are sent in batches: shutdown() flushes them. Call it before the process exits.
await sdk.shutdown();`;
}

// Python's OpenTelemetry SDK with the OTLP/HTTP protobuf exporter.
export function otlpPythonSnippet(origin: string, secret: string, service: string): string {
  return `# pip install opentelemetry-sdk opentelemetry-exporter-otlp-proto-http
import os

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

# Keep the key in your secret store, e.g. PROMPTLOOP_INGESTION_KEY.
key = os.environ.get("PROMPTLOOP_INGESTION_KEY", "${secret}")
provider = TracerProvider(resource=Resource.create({"service.name": ${JSON.stringify(service)}}))
provider.add_span_processor(
    BatchSpanProcessor(
        OTLPSpanExporter(
            endpoint="${otlpTracesUrl(origin)}",
            headers={"Authorization": f"Bearer {key}"},
        )
    )
)
trace.set_tracer_provider(provider)

with trace.get_tracer(__name__).start_as_current_span("hello from python"):
    pass  # … the work you want to trace …
# The provider flushes its batch when the interpreter exits.`;
}
