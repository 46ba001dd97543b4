import { randomBytes } from 'node:crypto';
import { AppError, isAppError, isDataException, isUnavailableError } from '../errors';

export function newRequestId(): string {
  return `req_${randomBytes(12).toString('base64url')}`;
}

export type ErrorBody = { error: { code: string; message: string; details: Record<string, unknown>; requestId: string } };

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  if (status === 204 || status === 304) return new Response(null, { status, headers });
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers } });
}

// Unknown failures become a generic 500; a database that cannot be reached is a 503 to retry.
export function toAppError(error: unknown): AppError {
  if (isAppError(error)) return error;
  if (isUnavailableError(error)) return new AppError('unavailable', 'A dependency is unavailable. Retry shortly.', {}, { 'retry-after': '5' });
  if (isDataException(error)) return new AppError('invalid_request', 'A value in the request cannot be stored.');
  return new AppError('internal', 'Something went wrong on our side.');
}

export function errorBody(error: AppError, requestId: string): ErrorBody {
  return { error: { code: error.code, message: error.message, details: error.details, requestId } };
}

// The error's own headers, plus Retry-After on every 429 and 503.
export function errorHeaders(error: AppError): Record<string, string> {
  const extra = { ...error.headers };
  if ((error.status === 429 || error.status === 503) && !extra['retry-after']) extra['retry-after'] = '5';
  return extra;
}

export function errorResponse(error: AppError, requestId: string, headers: Record<string, string> = {}): Response {
  return json(error.status, errorBody(error, requestId), { ...headers, ...errorHeaders(error), 'x-request-id': requestId });
}

// Failures on our side are logged with their stack; the caller only ever sees the generic message.
export function reportServerError(requestId: string, operation: string, error: unknown, appError: AppError): void {
  if (appError.code === 'internal' || appError.code === 'unavailable') {
    console.error(JSON.stringify({ level: 'error', requestId, operation, error: String((error as Error)?.stack ?? error) }));
  }
}
