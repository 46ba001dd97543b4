import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Long from 'long';
import protobuf from 'protobufjs';

// The official OTLP schema (server/otlp/proto, vendored from opentelemetry-proto) and google.rpc.Status,
// parsed with protobufjs once per process, on first use. The files are read with node:fs and handed to
// protobuf.parse, not Root.load: protobufjs finds `fs` by itself only where a CommonJS `require` exists.

const files = [
  'opentelemetry/proto/common/v1/common.proto',
  'opentelemetry/proto/resource/v1/resource.proto',
  'opentelemetry/proto/trace/v1/trace.proto',
  'opentelemetry/proto/collector/trace/v1/trace_service.proto',
  'google/rpc/status.proto',
];

export type OtlpSchema = {
  request: protobuf.Type;
  response: protobuf.Type;
  status: protobuf.Type;
  /** Field numbers of the three levels above a span, for counting spans before decoding them. */
  fieldIds: { resourceSpans: number; scopeSpans: number; spans: number };
};

// Next of `next dev` may bundle this module, where import.meta.url need not point at the source:
// then the repository root (the working directory of every entry) is asked.
function protoDir(): string {
  const beside = path.join(path.dirname(fileURLToPath(import.meta.url)), 'proto');
  return existsSync(beside) ? beside : path.join(process.cwd(), 'server', 'otlp', 'proto');
}

function loadSchema(): OtlpSchema {
  // fixed64 times and int64 values must arrive as Long (exact), never as a rounded double.
  if (!protobuf.util.Long) {
    protobuf.util.Long = Long;
    protobuf.configure();
  }
  const dir = protoDir();
  const root = new protobuf.Root();
  for (const file of files) protobuf.parse(readFileSync(path.join(dir, file), 'utf8'), root, { keepCase: false });
  // status.proto imports google/protobuf/any.proto, which protobufjs carries itself.
  root.addJSON(protobuf.common.get('google/protobuf/any.proto')!.nested!);
  root.resolveAll();
  const request = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
  const resourceSpans = root.lookupType('opentelemetry.proto.trace.v1.ResourceSpans');
  const scopeSpans = root.lookupType('opentelemetry.proto.trace.v1.ScopeSpans');
  return {
    request,
    response: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse'),
    status: root.lookupType('google.rpc.Status'),
    fieldIds: {
      resourceSpans: request.fields.resourceSpans.id,
      scopeSpans: resourceSpans.fields.scopeSpans.id,
      spans: scopeSpans.fields.spans.id,
    },
  };
}

let schema: OtlpSchema | undefined;

export function otlpSchema(): OtlpSchema {
  schema ??= loadSchema();
  return schema;
}
