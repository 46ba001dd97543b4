import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { diag, DiagLogLevel, type DiagLogger } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { getDb } from '@/db/client';
import { serveOtlp } from '@/server/api/otlp';
import { newOrganization, newUser, type TestUser } from '../helpers/api';
import { newIngestionKey } from '../helpers/ingestion';
import { sdkSpans } from '../helpers/otlp';

// The real OpenTelemetry JS exporters (protobuf and JSON, with and without gzip) against the OTLP
// handler behind a node:http listener, as the production entry mounts it; spans made by the SDK,
// read back through the management API.

beforeAll(() => getDb().then(() => undefined), 120_000);

let server: Server;
let endpoint: string;

beforeAll(async () => {
  server = createServer((req, res) => void serveOtlp(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/otel`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

// The exporters report partial success through the OpenTelemetry diag logger (a warning).
const warnings: string[] = [];
const collector: DiagLogger = {
  error: (...args) => warnings.push(args.map(String).join(' ')),
  warn: (...args) => warnings.push(args.map(String).join(' ')),
  info: () => {},
  debug: () => {},
  verbose: () => {},
};
beforeAll(() => {
  diag.setLogger(collector, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
});
afterAll(() => diag.disable());
afterEach(() => {
  warnings.length = 0;
});

type ExporterConfig = NonNullable<ConstructorParameters<typeof ProtobufExporter>[0]>;
type Variant = [title: string, Exporter: typeof ProtobufExporter | typeof JsonExporter, gzip: boolean];
const variants: Variant[] = [
  ['protobuf', ProtobufExporter, false],
  ['protobuf + gzip', ProtobufExporter, true],
  ['JSON', JsonExporter, false],
  ['JSON + gzip', JsonExporter, true],
];

async function exportSpans(
  Exporter: Variant[1],
  gzip: boolean,
  secret: string,
  spans: ReadableSpan[],
): Promise<ExportResult> {
  const config: ExporterConfig = {
    url: `${endpoint}/v1/traces`,
    headers: { Authorization: `Bearer ${secret}` },
    compression: (gzip ? 'gzip' : 'none') as ExporterConfig['compression'],
  };
  const exporter = new Exporter(config);
  const result = await new Promise<ExportResult>((resolve) => exporter.export(spans, resolve));
  await exporter.shutdown();
  return result;
}

async function newTenant(): Promise<{ owner: TestUser; organizationId: string; secret: string }> {
  const owner = await newUser();
  const organization = await newOrganization(owner);
  const { secret } = await newIngestionKey(organization.id);
  return { owner, organizationId: organization.id, secret };
}

describe.each(variants)('the official OpenTelemetry JS exporter, %s', (title, Exporter, gzip) => {
  it('exports real SDK spans: SUCCESS, and the trace reads back mapped', async () => {
    const { owner, organizationId, secret } = await newTenant();
    const spans = sdkSpans(`service-${title}`);
    const result = await exportSpans(Exporter, gzip, secret, spans);
    expect(result.error).toBeUndefined();
    expect(result.code).toBe(ExportResultCode.SUCCESS);
    expect(warnings).toEqual([]);

    const root = spans.find((span) => span.name === 'invoke_agent support')!;
    const traceId = root.spanContext().traceId;
    const trace = await owner.call('GET', `/organizations/${organizationId}/traces/${traceId}`);
    expect(trace.status).toBe(200);
    expect(trace.body.spanCount).toBe(3);
    const byName = Object.fromEntries(trace.body.spans.map((span: { name: string }) => [span.name, span]));
    const rootId = root.spanContext().spanId;
    expect(byName['invoke_agent support']).toMatchObject({
      spanId: rootId,
      rootSpanId: rootId,
      parentSpanId: null,
      kind: 'execution',
      status: 'success',
      service: `service-${title}`,
      sessionId: 'session-1',
      endUserId: 'user-7',
    });
    const chat = spans.find((span) => span.name === 'chat gpt-4o')!;
    expect(byName['chat gpt-4o']).toMatchObject({
      spanId: chat.spanContext().spanId,
      rootSpanId: rootId,
      parentSpanId: rootId,
      kind: 'model',
      status: 'error',
      provider: 'openai',
      model: 'gpt-4o-2024-08-06',
      inputTokens: 120,
      outputTokens: 42,
      startedAt: chat.startTime[0] * 1000 + Math.floor(chat.startTime[1] / 1_000_000),
      endedAt: chat.endTime[0] * 1000 + Math.floor(chat.endTime[1] / 1_000_000),
    });
    const content = JSON.parse(byName['chat gpt-4o'].contentJson);
    expect(content.error).toMatchObject({ type: 'TimeoutError', message: 'upstream timed out' });
    expect(JSON.stringify(content.input)).toContain('Where is my order?');
    expect(JSON.parse(byName['chat gpt-4o'].metadataJson)).toMatchObject({
      'otel.scope.name': 'promptloop-tests',
      'otel.span.kind': 'CLIENT',
      'gen_ai.request.temperature': 0.2,
      'resource.deployment.environment.name': 'test',
    });
    expect(byName['execute_tool lookup_order']).toMatchObject({ kind: 'tool', parentSpanId: rootId });
  });

  it('a span the server cannot store: SUCCESS for the rest, and the exporter logs the partial success', async () => {
    const { owner, organizationId, secret } = await newTenant();
    // Starting an hour from now: more than five minutes ahead of the server clock.
    const future = Date.now() + 3_600_000;
    const spans = sdkSpans(`partial-${title}`, { startTime: future, endTime: future + 1000 });
    const result = await exportSpans(Exporter, gzip, secret, spans);
    expect(result.code).toBe(ExportResultCode.SUCCESS);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^Received Partial Success response: /);
    const partial = JSON.parse(warnings[0].slice('Received Partial Success response: '.length));
    expect(Number(partial.rejectedSpans)).toBe(1);
    expect(partial.errorMessage).toMatch(/five minutes ahead/);
    const traceId = spans[0].spanContext().traceId;
    const trace = await owner.call('GET', `/organizations/${organizationId}/traces/${traceId}`);
    expect(trace.body.spans.map((span: { name: string }) => span.name).sort()).toEqual(
      spans
        .map((span) => span.name)
        .filter((name) => name !== 'late span')
        .sort(),
    );
  });

  it('a wrong key: the export FAILED with the 401', async () => {
    const result = await exportSpans(Exporter, gzip, `plt_${'x'.repeat(43)}`, sdkSpans());
    expect(result.code).toBe(ExportResultCode.FAILED);
    expect(result.error).toMatchObject({ code: 401 });
  });
});

describe('configured as API.md says, through the environment', () => {
  it('OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_HEADERS reach /api/v1/otel/v1/traces', async () => {
    const { owner, organizationId, secret } = await newTenant();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
    process.env.OTEL_EXPORTER_OTLP_HEADERS = `Authorization=Bearer ${secret}`;
    try {
      const exporter = new ProtobufExporter();
      const spans = sdkSpans('from-env');
      const result = await new Promise<ExportResult>((resolve) => exporter.export(spans, resolve));
      await exporter.shutdown();
      expect(result.code).toBe(ExportResultCode.SUCCESS);
      const list = await owner.call('GET', `/organizations/${organizationId}/traces`);
      expect(list.status).toBe(200);
      expect(list.body.items).toHaveLength(1);
      const root = spans.find((span) => span.name === 'invoke_agent support')!;
      expect(list.body.items[0]).toMatchObject({
        traceId: root.spanContext().traceId,
        rootSpanId: root.spanContext().spanId,
        name: 'invoke_agent support',
        service: 'from-env',
        status: 'success', // the root's
        spanCount: 3,
      });
    } finally {
      delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
      delete process.env.OTEL_EXPORTER_OTLP_HEADERS;
    }
  });
});
