import { AppError } from '../errors';

// The limits of one OTLP export request (API.md "OTLP trace ingestion") and the refusals the
// decoders throw: 413 for too many spans or decoded values, 400 for a body that is not an
// ExportTraceServiceRequest.

const mib = 1024 * 1024;
export const maxWireBytes = 4 * mib;
export const maxInflatedBytes = 32 * mib;
export const maxSpansPerRequest = 10_000;
// Values one request may decode into, counted before anything is decoded: every protobuf field
// (each read makes at most one object; a string attribute is four: the KeyValue, its key, its
// AnyValue and the value inside) or every JSON value and member (each `{`, `[` and `,` outside
// strings: four per attribute too). 32 MiB of empty KeyValues (or `{},`) would be 16 (11) million
// objects: seconds of blocked event loop and GBs of heap. Decoding and mapping cost about a
// microsecond per value in the worst shapes, so the cap keeps the worst accepted body near a second
// and 200 MB (docs/decisions.md "OTLP decoded size bound").
export const maxDecodedValues = 1_000_000;

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

export function tooManyValues(limit: number = maxDecodedValues): AppError {
  return new AppError(
    'payload_too_large',
    `The request decodes into more than ${limit.toLocaleString('en-US')} values (protobuf fields, or JSON ` +
      `values and members; a resource's count again, at a quarter, for every further span it describes): ` +
      `send smaller batches or fewer attributes.`,
    { limitValues: limit },
  );
}

export function undecodable(what: string): AppError {
  return new AppError('invalid_request', `The body cannot be decoded as an OTLP ExportTraceServiceRequest: ${what}.`);
}
