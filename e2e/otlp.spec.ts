import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { createOrganization, expect, test, uniqueName } from './fixtures';

// The whole OpenTelemetry path on the started app: the official protobuf exporter with gzip, as an
// instrumented application configures it (endpoint + Authorization header), sends a GenAI trace
// to POST /api/v1/otel/v1/traces of the main process; the trace explorer shows it like a native one.

test('an OpenTelemetry exporter sends a trace to the app and the explorer shows its chat', async ({
  adminPage: page,
  baseURL,
}) => {
  const organizationId = await createOrganization(page, uniqueName('Otlp'));
  const created = await page.request.post('/api/trpc/ingestionKeys.create', {
    data: { organizationId, name: 'Otel SDK', application: 'assistant', environment: 'production' },
  });
  expect(created.ok(), await created.text()).toBeTruthy();
  const { secret } = (await created.json()).result.data as { secret: string };

  // Real spans from the SDK: an agent root, a chat span with GenAI messages, usage and an error.
  const memory = new InMemorySpanExporter();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'weather-agent' }),
    spanProcessors: [new SimpleSpanProcessor({ exporter: memory })],
  });
  const tracer = provider.getTracer('e2e-otlp', '1.0.0');
  const root = tracer.startSpan('invoke_agent weather', { attributes: { 'gen_ai.operation.name': 'invoke_agent' } });
  const chat = tracer.startSpan(
    'chat gpt-4o-mini',
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.usage.input_tokens': 31,
        'gen_ai.usage.output_tokens': 9,
        'gen_ai.input.messages': JSON.stringify([
          { role: 'user', parts: [{ type: 'text', content: 'Is it raining in Lyon?' }] },
        ]),
        'gen_ai.output.messages': JSON.stringify([
          { role: 'assistant', parts: [{ type: 'text', content: 'Light rain until noon.' }], finish_reason: 'stop' },
        ]),
        'app.feature': 'forecast',
      },
    },
    trace.setSpan(context.active(), root),
  );
  chat.setStatus({ code: SpanStatusCode.OK });
  chat.end();
  root.end();
  const spans = memory.getFinishedSpans();
  const traceId = root.spanContext().traceId;

  const exporter = new OTLPTraceExporter({
    url: `${baseURL}/api/v1/otel/v1/traces`,
    headers: { Authorization: `Bearer ${secret}` },
    compression: 'gzip' as NonNullable<ConstructorParameters<typeof OTLPTraceExporter>[0]>['compression'],
  });
  const result = await new Promise<ExportResult>((resolve) => exporter.export(spans, resolve));
  await exporter.shutdown();
  expect(result.code, String(result.error)).toBe(ExportResultCode.SUCCESS);

  // In the list like a native trace, named after its root, with its tokens.
  await page.goto(`/organizations/${organizationId}/traces`);
  const row = page.getByRole('row').filter({ hasText: 'invoke_agent weather' });
  await expect(row).toBeVisible();
  await expect(row).toContainText('weather-agent');

  // The chat span: mapped fields, the messages as a chat, the leftover attribute.
  const chatSpanId = chat.spanContext().spanId;
  await page.goto(`/organizations/${organizationId}/traces/${traceId}?span=${chatSpanId}`);
  const panel = page.getByRole('region', { name: 'Span details' });
  await expect(panel.getByRole('heading', { name: /chat gpt-4o-mini/ })).toBeVisible();
  const fields = panel.getByRole('region', { name: 'Mapped fields' });
  await expect(fields).toContainText('gpt-4o-mini');
  await expect(fields).toContainText('openai');
  await expect(panel).toContainText('Is it raining in Lyon?');
  await expect(panel).toContainText('Light rain until noon.');
  await expect(panel).toContainText('app.feature');
  await expect(panel).toContainText('forecast');
});
