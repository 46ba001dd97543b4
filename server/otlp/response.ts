import { otlpSchema } from './schema';
import { isJsonMediaType } from '../http/media-type';

// OTLP/HTTP answers, encoded like the request (API.md "OTLP trace ingestion"): a 200 carries an
// ExportTraceServiceResponse, every failure a google.rpc.Status { code, message }.

export type OtlpEncoding = 'protobuf' | 'json';
export type EncodedAnswer = { contentType: string; body: Buffer };

const contentTypes: Record<OtlpEncoding, string> = {
  protobuf: 'application/x-protobuf',
  json: 'application/json',
};

// The gRPC code (google.rpc.Code) that names each HTTP status we answer with.
const grpcCodes: Record<number, number> = {
  400: 3, // INVALID_ARGUMENT
  401: 16, // UNAUTHENTICATED
  403: 7, // PERMISSION_DENIED
  404: 5, // NOT_FOUND
  405: 12, // UNIMPLEMENTED
  408: 4, // DEADLINE_EXCEEDED
  409: 10, // ABORTED
  413: 8, // RESOURCE_EXHAUSTED
  415: 3, // INVALID_ARGUMENT
  429: 8, // RESOURCE_EXHAUSTED
  500: 13, // INTERNAL
  503: 14, // UNAVAILABLE
};

const asBuffer = (bytes: Uint8Array) => (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes));

/** The encoding of a Content-Type header: protobuf or JSON (with any parameters), else null. */
export function otlpEncodingOf(contentType: string | undefined): OtlpEncoding | null {
  const type = contentType?.split(';', 1)[0].trim().toLowerCase();
  if (type === 'application/x-protobuf') return 'protobuf';
  if (type === 'application/json') return isJsonMediaType(contentType) ? 'json' : null;
  return null;
}

/**
 * The 200 answer: empty (`{}` in JSON) when every span was stored, else a partialSuccess with the
 * count of rejected spans (an int64: a decimal string in JSON, as the proto3 JSON mapping writes it).
 */
export function exportAnswer(
  encoding: OtlpEncoding,
  result: { rejectedSpans: number; errorMessage?: string },
): EncodedAnswer {
  const partialSuccess: { rejectedSpans?: number; errorMessage?: string } = {};
  if (result.rejectedSpans > 0) partialSuccess.rejectedSpans = result.rejectedSpans;
  if (result.errorMessage) partialSuccess.errorMessage = result.errorMessage;
  const empty = Object.keys(partialSuccess).length === 0;
  if (encoding === 'protobuf') {
    const message = empty ? {} : { partialSuccess };
    return { contentType: contentTypes.protobuf, body: asBuffer(otlpSchema().response.encode(message).finish()) };
  }
  const json = empty
    ? {}
    : {
        partialSuccess: {
          ...(partialSuccess.rejectedSpans !== undefined && { rejectedSpans: String(partialSuccess.rejectedSpans) }),
          ...(partialSuccess.errorMessage !== undefined && { errorMessage: partialSuccess.errorMessage }),
        },
      };
  return { contentType: contentTypes.json, body: Buffer.from(JSON.stringify(json)) };
}

/** A failure's body: google.rpc.Status with the gRPC code for `httpStatus` and `message`. */
export function statusAnswer(encoding: OtlpEncoding, httpStatus: number, message: string): EncodedAnswer {
  const status = { code: grpcCodes[httpStatus] ?? 2 /* UNKNOWN */, message };
  if (encoding === 'protobuf')
    return { contentType: contentTypes.protobuf, body: asBuffer(otlpSchema().status.encode(status).finish()) };
  return { contentType: contentTypes.json, body: Buffer.from(JSON.stringify(status)) };
}
