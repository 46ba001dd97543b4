import { randomFillSync } from 'node:crypto';
import { AppError, isAppError, isDataException, isUnavailableError } from '../errors';
import { log } from '../log';

// The one edge policy (DESIGN.md "One edge policy"): REST, tRPC, ingestion, MCP and webhooks turn
// every thrown value into an AppError here, and log the 5xx here, so a failure reads the same everywhere.

// 12 random bytes per id, drawn from a pool filled 256 ids at a time: one randomBytes call per
// request cost about a tenth of the retrieval hot path's CPU.
const idBytes = 12;
const idPool = Buffer.alloc(idBytes * 256);
let idOffset = idPool.length;

export function newRequestId(): string {
  if (idOffset === idPool.length) {
    randomFillSync(idPool);
    idOffset = 0;
  }
  const id = idPool.toString('base64url', idOffset, idOffset + idBytes);
  idOffset += idBytes;
  return `req_${id}`;
}

export type ErrorBody = {
  error: { code: string; message: string; details: Record<string, unknown>; requestId: string };
};

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  if (status === 204 || status === 304) return new Response(null, { status, headers });
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}

// Unknown failures become a generic 500; a database that cannot be reached is a 503 to retry;
// a value Postgres cannot hold (SQLSTATE class 22) is the caller's 400, never a 5xx.
export function toAppError(error: unknown): AppError {
  if (isAppError(error)) return error;
  if (isUnavailableError(error)) return new AppError('unavailable', 'A dependency is unavailable. Retry shortly.');
  if (isDataException(error)) return new AppError('invalid_request', 'A value in the request cannot be stored.');
  return new AppError('internal', 'Something went wrong on our side.');
}

export function errorBody(error: AppError, requestId: string): ErrorBody {
  return { error: { code: error.code, message: error.message, details: error.details, requestId } };
}

// The error's own headers (every 429 and 503 has its Retry-After: AppError), plus Connection: close
// on every 413: the rest of a body that was too large is never read, so the connection cannot carry
// another request.
export function errorHeaders(error: AppError): Record<string, string> {
  const extra = { ...error.headers };
  if (error.status === 413) extra.connection = 'close';
  return extra;
}

export function errorResponse(error: AppError, requestId: string, headers: Record<string, string> = {}): Response {
  return json(error.status, errorBody(error, requestId), {
    ...headers,
    ...errorHeaders(error),
    'x-request-id': requestId,
  });
}

// Failures on our side (every 5xx) are logged once, with the request id, the operation and the
// original error (pino's err serializer keeps its stack); the caller only sees the generic message.
export function reportServerError(
  requestId: string | undefined,
  operation: string | undefined,
  error: unknown,
  appError: AppError = toAppError(error),
): void {
  if (appError.status < 500) return;
  log.error(
    { requestId, operation, code: appError.code, err: error },
    appError.code === 'unavailable' ? 'dependency unavailable' : 'request failed',
  );
}
