// Copy-paste examples that send one finished root span to POST /api/v1/traces.
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
    `  -d '${JSON.stringify(batch)}'`,
  ].join('\n');
}

// The SDK's TraceExporter (sdk/README.md "Export traces"): batched, retried with backoff, never throws.
export function typescriptSnippet(origin: string, secret: string, service: string): string {
  return `import { TraceExporter, newSpanId, newTraceId } from '@promptloop/sdk';

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
