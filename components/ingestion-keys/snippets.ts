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
    events: [{ traceId, spanId, rootSpanId: spanId, revision: 0, name: 'hello from curl', service, kind: 'execution', status: 'success', startedAt: endedAt - 250, endedAt }],
  };
  return [
    `curl -X POST '${origin}/api/v1/traces' \\`,
    `  -H 'Authorization: Bearer ${secret}' \\`,
    `  -H 'Content-Type: application/json' \\`,
    `  -d '${JSON.stringify(batch)}'`,
  ].join('\n');
}

export function typescriptSnippet(origin: string, secret: string, service: string): string {
  return `// Keep the key in your secret store, e.g. PROMPTLOOP_INGESTION_KEY.
const ingestionKey = process.env.PROMPTLOOP_INGESTION_KEY ?? '${secret}';

const hex = (bytes: number) =>
  Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, '0')).join('');
const traceId = hex(16);
const spanId = hex(8);
const startedAt = Date.now();
// … the work you want to trace …
const endedAt = Date.now();

const response = await fetch('${origin}/api/v1/traces', {
  method: 'POST',
  headers: { Authorization: \`Bearer \${ingestionKey}\`, 'Content-Type': 'application/json' },
  body: JSON.stringify({
    version: 1,
    events: [
      { traceId, spanId, rootSpanId: spanId, revision: 0, name: 'handle request', service: ${JSON.stringify(service)}, kind: 'execution', status: 'success', startedAt, endedAt },
    ],
  }),
});
// 429 and 5xx: resend the identical batch with backoff, honouring Retry-After.
if (!response.ok) throw new Error(\`Trace ingestion failed: \${response.status}\`);`;
}
