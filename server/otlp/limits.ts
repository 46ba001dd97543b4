import { AppError } from '../errors';

// The limits of one OTLP export request (API.md "OTLP trace ingestion") and the two refusals the
// decoders throw: 413 for too many spans, 400 for a body that is not an ExportTraceServiceRequest.

const mib = 1024 * 1024;
export const maxWireBytes = 4 * mib;
export const maxInflatedBytes = 32 * mib;
export const maxSpansPerRequest = 10_000;
// AnyValue nesting the JSON decoder follows (arrays and kvlists in attribute values): about what
// protobufjs's limit of 100 message levels leaves a span attribute in the protobuf encoding.
export const maxValueDepth = 48;

export function tooManySpans(): AppError {
  return new AppError(
    'payload_too_large',
    `The request holds more than ${maxSpansPerRequest.toLocaleString('en-US')} spans; send them in smaller batches.`,
    { limitSpans: maxSpansPerRequest },
  );
}

export function undecodable(what: string): AppError {
  return new AppError('invalid_request', `The body cannot be decoded as an OTLP ExportTraceServiceRequest: ${what}.`);
}
