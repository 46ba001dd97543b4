import type { IncomingMessage, ServerResponse } from 'node:http';
import { getDb } from '@/db/client';
import { AppError } from '../errors';
import { errorHeaders, newRequestId, reportServerError, toAppError } from './http';
import { limitIngestion } from './ingest';
import { assertStrictQuery } from './strict-input';
import { serveNode, serveWeb, type EdgeInput, type EdgeOutput } from '../http/edge';
import { gunzipBounded } from '../http/inflate';
import { authenticateIngestionKey, forgetIngestionKey, type IngestionKeyActor } from '../auth/ingestion-key';
import { readOnlyOrganization } from '../traces/ingest';
import { decodeJsonRequest } from '../otlp/decode-json';
import { decodeProtobufRequest } from '../otlp/decode-protobuf';
import { maxInflatedBytes, maxWireBytes } from '../otlp/limits';
import { mapOtlpSpan, type MappedSpan } from '../otlp/mapping';
import { exportAnswer, otlpEncodingOf, statusAnswer, type OtlpEncoding } from '../otlp/response';
import { commitOtlpSpans, type OtlpRejection, type OtlpStoreResult } from '../otlp/store';
import type { OtlpId, OtlpSpanInput } from '../otlp/types';

// POST /api/v1/otel/v1/traces (API.md "OTLP trace ingestion"). One function serves both the
// production entry's node:http hot path (serveOtlp) and Next's catch-all (otlpFromRequest). Checks
// run in this order, each refusing before the next reads more: method 405 → key 401 → media type
// and encoding 415 → size on the wire, decompressed and span count 413 → decoding 400 → read-only
// 403 → rate 429 → map each span (rejections are partial success) → store, committed → 200.
// Every answer is encoded like the request; failures carry a google.rpc.Status (JSON when the
// request's encoding is unknown).

export const otlpTracesPath = '/api/v1/otel/v1/traces';
/** The OTLP path, with or without a trailing slash (as Next's catch-all serves it). */
export const isOtlpTracesPath = (pathname: string): boolean => pathname.replace(/\/$/, '') === otlpTracesPath;

type OtlpInput = EdgeInput;

function contentEncoding(input: OtlpInput): 'gzip' | 'identity' {
  const encoding = input.header('content-encoding')?.trim().toLowerCase() || 'identity';
  if (encoding === 'gzip' || encoding === 'identity') return encoding;
  throw new AppError('unsupported_media_type', 'Send the body uncompressed or with Content-Encoding: gzip.');
}

// A rejected span's ids, when they are ids at all (the warning names the span with them).
function idHex(id: OtlpId | undefined, bytes: number): string | undefined {
  const text = id instanceof Uint8Array ? Buffer.from(id).toString('hex') : id;
  return text?.length === bytes * 2 && /^[0-9a-f]+$/i.test(text) ? text.toLowerCase() : undefined;
}

function mapSpans(inputs: OtlpSpanInput[], now: number) {
  const accepted: { index: number; span: MappedSpan }[] = [];
  const rejected: OtlpRejection[] = [];
  inputs.forEach((input, index) => {
    const result = mapOtlpSpan(input, now);
    if (result.ok) {
      accepted.push({ index, span: result.span });
      return;
    }
    const rejection: OtlpRejection = { index, reason: result.reason };
    const traceId = idHex(input.span.traceId, 16);
    const spanId = idHex(input.span.spanId, 8);
    if (traceId) rejection.traceId = traceId;
    if (spanId) rejection.spanId = spanId;
    rejected.push(rejection);
  });
  return { accepted, rejected };
}

// From the body to mapped spans. The decoded request (up to 32 MiB of objects) lives only in here:
// decoding, the read-only and rate checks and the mapping run without an await in between, so it is
// garbage before the store is awaited and concurrent requests never hold theirs at once.
async function readExport(input: OtlpInput, encoding: OtlpEncoding, actor: IngestionKeyActor) {
  const compression = contentEncoding(input);
  const wire = await input.readBody(maxWireBytes);
  const body = compression === 'gzip' ? await gunzipBounded(wire, maxInflatedBytes) : wire;
  const inputs = encoding === 'protobuf' ? decodeProtobufRequest(body) : decodeJsonRequest(body);
  if (actor.readOnly) throw readOnlyOrganization();
  limitIngestion(actor.keyId);
  return inputs.length === 0 ? null : mapSpans(inputs, Date.now());
}

async function exportTraces(input: OtlpInput, encoding: OtlpEncoding | null): Promise<OtlpStoreResult> {
  if (input.method !== 'POST')
    throw new AppError('method_not_allowed', 'Use POST on this path.', {}, { allow: 'POST' });
  const db = await getDb();
  const actor = await authenticateIngestionKey(db, input.header('authorization'));
  if (input.query) assertStrictQuery(input.query);
  if (!encoding)
    throw new AppError(
      'unsupported_media_type',
      'Send an OTLP ExportTraceServiceRequest with Content-Type: application/x-protobuf or application/json.',
    );
  const spans = await readExport(input, encoding, actor);
  // A request without spans is answered like a stored one, with nothing stored.
  if (!spans) return { rejectedSpans: 0 };
  try {
    return await commitOtlpSpans(db, actor, spans.accepted, spans.rejected);
  } catch (error) {
    if ((error as AppError).code === 'unauthorized') forgetIngestionKey(actor.keyId);
    throw error;
  }
}

async function handleExport(input: OtlpInput): Promise<EdgeOutput> {
  const requestId = newRequestId();
  const encoding = otlpEncodingOf(input.header('content-type'));
  const headers: Record<string, string> = { 'cache-control': 'no-store', 'x-request-id': requestId };
  try {
    const answer = exportAnswer(encoding ?? 'json', await exportTraces(input, encoding));
    headers['content-type'] = answer.contentType;
    return { status: 200, headers, body: answer.body, closeConnection: false };
  } catch (error) {
    const appError = toAppError(error);
    reportServerError(requestId, 'export_otlp_traces', error, appError);
    const answer = statusAnswer(encoding ?? 'json', appError.status, appError.message);
    return {
      status: appError.status,
      headers: { ...headers, ...errorHeaders(appError), 'content-type': answer.contentType },
      body: answer.body,
      // After 413 the rest of the body is never read: errorHeaders says Connection: close, and the socket goes.
      closeConnection: appError.status === 413,
    };
  }
}

// The production entry's hot path (node:http) and Next's catch-all (`next dev`, in-process tests).
export const serveOtlp = (req: IncomingMessage, res: ServerResponse) => serveNode(req, res, handleExport);
export const otlpFromRequest = (request: Request) => serveWeb(request, handleExport);
