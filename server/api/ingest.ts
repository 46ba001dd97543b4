import type { IncomingMessage, ServerResponse } from 'node:http';
import { getDb } from '@/db/client';
import { AppError } from '../errors';
import { errorBody, errorHeaders, newRequestId, reportServerError, toAppError } from './http';
import { assertStrictQuery, findDuplicateKey, maxBodyBytes } from './strict-input';
import { serveNode, serveWeb, type EdgeInput, type EdgeOutput } from '../http/edge';
import { utf8Text } from '../http/body';
import { isJsonMediaType } from '../http/media-type';
import { parseCleanJson } from '../input-hygiene';
import { authenticateIngestionKey, forgetIngestionKey } from '../auth/ingestion-key';
import { RateLimiter } from '../rate-limit';
import { config } from '../config';
import { assertClockLead, parseTraceBatch } from '../traces/ingest-schema';
import { commitBatch, readOnlyOrganization } from '../traces/ingest';

// POST /api/v1/traces. One function serves both the production entry's node:http hot path
// (serveIngest) and Next's catch-all (ingestFromRequest). Checks run in this order, each refusing
// before the next reads more: method 405 → key 401 → media type 415 → size 413 → JSON and
// fields 400 → read-only 403 → rate 429 → clock 409 → span state 409 → 200 { accepted }.

export const ingestPath = '/api/v1/traces';

type IngestInput = EdgeInput;

// One bucket per ingestion key for both ingestion paths (native batches and OTLP exports).
let limiter: RateLimiter | undefined;
export function limitIngestion(keyId: string): void {
  const perSecond = config().ingestRatePerSecond;
  limiter ??= new RateLimiter(perSecond * 60, Math.max(1, perSecond));
  limiter.take(keyId);
}

function parseJson(body: Buffer): unknown {
  const text = utf8Text(body);
  // Nesting, JSON syntax, U+0000 and lone surrogates: 400 before the schema reads anything.
  const value = parseCleanJson(text, 'request body');
  const duplicate = findDuplicateKey(text);
  if (duplicate !== null)
    throw new AppError('invalid_request', 'The request body repeats a field.', {
      issues: [{ path: duplicate, message: 'Field given more than once.' }],
    });
  return value;
}

async function ingest(input: IngestInput): Promise<number> {
  if (input.method !== 'POST')
    throw new AppError('method_not_allowed', 'Use POST on this path.', {}, { allow: 'POST' });
  const db = await getDb();
  const actor = await authenticateIngestionKey(db, input.header('authorization'));
  if (input.query) assertStrictQuery(input.query);
  const type = input.header('content-type') ?? '';
  if (!isJsonMediaType(type))
    throw new AppError(
      'unsupported_media_type',
      'Send the batch as uncompressed JSON with Content-Type: application/json.',
    );
  const encoding = input.header('content-encoding')?.trim().toLowerCase();
  if (encoding && encoding !== 'identity')
    throw new AppError('unsupported_media_type', 'Send the batch uncompressed (no Content-Encoding).');
  const body = await input.readBody(maxBodyBytes);
  const batch = parseTraceBatch(parseJson(body));
  if (actor.readOnly) throw readOnlyOrganization();
  limitIngestion(actor.keyId);
  assertClockLead(batch);
  try {
    return await commitBatch(db, actor, batch);
  } catch (error) {
    if ((error as AppError).code === 'unauthorized') forgetIngestionKey(actor.keyId);
    throw error;
  }
}

async function handleIngest(input: IngestInput): Promise<EdgeOutput> {
  const requestId = newRequestId();
  const headers: Record<string, string> = {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'x-request-id': requestId,
  };
  try {
    const accepted = await ingest(input);
    return { status: 200, headers, body: Buffer.from(JSON.stringify({ accepted })), closeConnection: false };
  } catch (error) {
    const appError = toAppError(error);
    reportServerError(requestId, 'ingest_traces', error, appError);
    // After 413 the rest of the body is never read: errorHeaders says Connection: close, and the socket goes.
    const closeConnection = appError.status === 413;
    return {
      status: appError.status,
      headers: { ...headers, ...errorHeaders(appError) },
      body: Buffer.from(JSON.stringify(errorBody(appError, requestId))),
      closeConnection,
    };
  }
}

// The production entry's hot path (node:http) and Next's catch-all (`next dev`, in-process tests).
export const serveIngest = (req: IncomingMessage, res: ServerResponse) => serveNode(req, res, handleIngest);
export const ingestFromRequest = (request: Request) => serveWeb(request, handleIngest);
