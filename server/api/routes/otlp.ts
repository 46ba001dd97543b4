import type { Route } from '../define';
import { otlpFromRequest } from '../otlp';

// POST /api/v1/otel/v1/traces in Next's catch-all. Production serves the same handler from node:http
// before Next (server/main.ts hot-path table); this entry keeps `next dev` working and feeds the
// OpenAPI document, whose bodies are written here: OTLP speaks protobuf or JSON and answers failures
// with google.rpc.Status, not our error envelope.

const protobufBody = (message: string) => ({
  schema: { type: 'string', format: 'binary', description: `A protobuf-encoded ${message}.` },
});

const statusBody = {
  'application/x-protobuf': protobufBody('google.rpc.Status (google/rpc/status.proto), for protobuf requests'),
  'application/json': {
    schema: {
      type: 'object',
      description: 'google.rpc.Status, for JSON requests and when the request encoding is unknown',
      required: ['message'],
      properties: {
        code: { type: 'integer', description: 'A gRPC status code (google.rpc.Code)' },
        message: { type: 'string' },
      },
    },
  },
};

const failure = (description: string, retry = false) => ({
  description,
  content: statusBody,
  ...(retry && {
    headers: { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } } },
  }),
});

export const otlpRoutes: Route[] = [
  {
    method: 'POST',
    path: '/otel/v1/traces',
    operationId: 'export_otlp_traces',
    summary: 'Export spans with OTLP/HTTP (OpenTelemetry)',
    description:
      'Point any OpenTelemetry SDK or Collector here: `OTEL_EXPORTER_OTLP_ENDPOINT=<APP_URL>/api/v1/otel` and ' +
      '`OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer plt_…` (ingestion key). Body: an ExportTraceServiceRequest ' +
      '(opentelemetry-proto v1.x) as `application/x-protobuf` or OTLP/JSON `application/json`, optionally ' +
      '`Content-Encoding: gzip`; at most 4 MiB on the wire, 32 MiB decompressed and 10,000 spans. Answers are encoded ' +
      'like the request. A span that cannot be stored is rejected alone: the 200 then carries `partialSuccess` ' +
      '(`rejectedSpans`, `errorMessage` naming the first problem). Failures carry a google.rpc.Status; checks in order: ' +
      '401 key, 415 type or encoding, 413 size or span count, 400 undecodable body, 403 read-only, 429 rate; ' +
      '429 and 503 carry Retry-After. Nothing is stored unless the answer is 200.',
    tag: 'Ingestion',
    auth: 'ingestion',
    status: 200,
    errors: [
      'invalid_request',
      'unauthorized',
      'read_only',
      'payload_too_large',
      'unsupported_media_type',
      'rate_limited',
      'unavailable',
    ],
    openapi: {
      requestBody: {
        required: true,
        content: {
          'application/x-protobuf': protobufBody(
            'ExportTraceServiceRequest (opentelemetry/proto/collector/trace/v1/trace_service.proto)',
          ),
          'application/json': {
            schema: {
              type: 'object',
              description:
                'OTLP/JSON ExportTraceServiceRequest: lowerCamelCase fields, trace and span ids as hex, enums as integers, ' +
                '64-bit integers as decimal strings or numbers; unknown fields are ignored.',
              properties: { resourceSpans: { type: 'array', items: { type: 'object' } } },
            },
          },
        },
      },
      responses: {
        '200': {
          description: 'Stored (committed); partialSuccess when some spans were rejected',
          content: {
            'application/x-protobuf': protobufBody('ExportTraceServiceResponse, empty when every span was stored'),
            'application/json': {
              schema: {
                type: 'object',
                description: '`{}` when every span was stored',
                properties: {
                  partialSuccess: {
                    type: 'object',
                    properties: {
                      rejectedSpans: { type: 'string', pattern: '^[0-9]+$', description: 'int64, as a decimal string' },
                      errorMessage: { type: 'string' },
                    },
                  },
                },
              },
            },
          },
        },
        '400': failure('The body cannot be decoded (protobuf, JSON or gzip)'),
        '401': failure('Ingestion key missing, invalid or revoked (retrieval keys and OAuth tokens are refused)'),
        '403': failure('The organization is read-only'),
        '413': failure('Over 4 MiB on the wire, 32 MiB decompressed or 10,000 spans; the connection is closed'),
        '415': failure('Content-Type is not application/x-protobuf or application/json, or Content-Encoding not gzip'),
        '429': failure('Too many requests for this key', true),
        '503': failure('A dependency is unavailable', true),
      },
    },
    handle: (request) => otlpFromRequest(request),
  },
];
