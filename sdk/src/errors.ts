// Typed errors: one base class carrying the API's error envelope, a subclass per HTTP status family,
// and a `code` union with every code the API documents plus the few the SDK raises itself.

/** Codes the Promptloop API answers with (API.md, "Error codes"). */
export type ApiErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'insufficient_scope'
  | 'forbidden'
  | 'admin_required'
  | 'read_only'
  | 'plan_required'
  | 'usage_exhausted'
  | 'not_found'
  | 'label_not_assigned'
  | 'version_not_found'
  | 'draft_conflict'
  | 'dataset_conflict'
  | 'invalid_state'
  | 'choose_organization'
  | 'secret_unavailable'
  | 'idempotency_in_progress'
  | 'idempotency_conflict'
  | 'import_rejected'
  | 'invalid_order'
  | 'confirmation_mismatch'
  | 'method_not_allowed'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'internal'
  | 'unavailable';

/**
 * Codes raised by the SDK without an HTTP answer (`status` is 0): the server could not be reached
 * or took too long, answered something that is not the API, variables did not fit the prompt, a
 * span could not be queued.
 */
export type ClientErrorCode =
  'network_error' | 'timeout' | 'invalid_response' | 'invalid_variables' | 'invalid_span' | 'queue_full' | 'shutdown';

export type PromptloopErrorCode = ApiErrorCode | ClientErrorCode;

export type ErrorInit = {
  status: number;
  code: PromptloopErrorCode;
  message: string;
  details?: Record<string, unknown>;
  requestId?: string | null;
  retryAfterMs?: number | null;
  cause?: unknown;
};

export class PromptloopError extends Error {
  /** HTTP status of the answer, or 0 when there was none (network error, timeout, local check). */
  readonly status: number;
  readonly code: PromptloopErrorCode;
  /** The envelope's `details` (`{}` when empty), e.g. `details.issues` for validation errors. */
  readonly details: Record<string, unknown>;
  /** The server's request id (`req_…`), to quote when asking for support; null without an answer. */
  readonly requestId: string | null;
  /** From `Retry-After` on 429 and 503 answers, in milliseconds. */
  readonly retryAfterMs: number | null;

  constructor(init: ErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'PromptloopError';
    this.status = init.status;
    this.code = init.code;
    this.details = init.details ?? {};
    this.requestId = init.requestId ?? null;
    this.retryAfterMs = init.retryAfterMs ?? null;
  }

  /**
   * True when a later identical request may succeed: no answer, 429 or 5xx, or an answer that is not
   * the API's (a proxy's or captive portal's page answering 200).
   */
  get retryable(): boolean {
    if (this.code === 'invalid_response') return true;
    return this.status === 0
      ? this.code === 'network_error' || this.code === 'timeout'
      : this.status === 429 || this.status >= 500;
  }
}

/** 400: the request was malformed (e.g. both `label` and `version`, a label outside the pattern). */
export class InvalidRequestError extends PromptloopError {
  override name = 'InvalidRequestError';
}
/** 401: missing, malformed, unknown or revoked key. */
export class AuthenticationError extends PromptloopError {
  override name = 'AuthenticationError';
}
/** 403: e.g. `forbidden` (a retrieval key used for another prompt), `read_only`, `insufficient_scope`. */
export class PermissionDeniedError extends PromptloopError {
  override name = 'PermissionDeniedError';
}
/** 404: `not_found`, `label_not_assigned` or `version_not_found` (retrieval never falls back). */
export class NotFoundError extends PromptloopError {
  override name = 'NotFoundError';
}
/** 409 and 422: the request was understood but conflicts with the current state. */
export class ConflictError extends PromptloopError {
  override name = 'ConflictError';
}
/** 429: slow down; `retryAfterMs` says for how long. */
export class RateLimitedError extends PromptloopError {
  override name = 'RateLimitedError';
}
/** 5xx: the service or one of its dependencies is down; `retryAfterMs` when the server said. */
export class UnavailableError extends PromptloopError {
  override name = 'UnavailableError';
}
/** No answer: connection refused or reset, DNS failure, or the timeout elapsed (`code` tells which). */
export class NetworkError extends PromptloopError {
  override name = 'NetworkError';
}
/** `compile()` was given variables that do not fit the prompt; `details.missing` and `details.extra` list them. */
export class CompileError extends PromptloopError {
  override name = 'CompileError';
}

const defaultCodes: Record<number, ApiErrorCode> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'invalid_state',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
};

function classFor(status: number): typeof PromptloopError {
  if (status === 400) return InvalidRequestError;
  if (status === 401) return AuthenticationError;
  if (status === 403) return PermissionDeniedError;
  if (status === 404) return NotFoundError;
  if (status === 409 || status === 422) return ConflictError;
  if (status === 429) return RateLimitedError;
  if (status >= 500) return UnavailableError;
  return PromptloopError;
}

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date; null when absent or unreadable. */
function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The typed error for a non-2xx answer, read from the API envelope `{ error: { code, message, details, requestId } }`. */
export function errorFromResponse(response: Response, bodyText: string): PromptloopError {
  let envelope: Record<string, unknown> | null = null;
  try {
    const parsed: unknown = JSON.parse(bodyText);
    if (isRecord(parsed) && isRecord(parsed.error)) envelope = parsed.error;
  } catch {
    envelope = null;
  }
  const status = response.status;
  const fallbackCode: ApiErrorCode =
    defaultCodes[status] ?? (status >= 500 ? (status === 503 ? 'unavailable' : 'internal') : 'invalid_request');
  const code = typeof envelope?.code === 'string' ? (envelope.code as PromptloopErrorCode) : fallbackCode;
  const message = typeof envelope?.message === 'string' ? envelope.message : `Promptloop answered HTTP ${status}.`;
  const requestId = typeof envelope?.requestId === 'string' ? envelope.requestId : response.headers.get('x-request-id');
  const Class = classFor(status);
  return new Class({
    status,
    code,
    message,
    details: isRecord(envelope?.details) ? envelope.details : {},
    requestId,
    retryAfterMs: parseRetryAfter(response.headers.get('retry-after')),
  });
}

/** A NetworkError for a fetch that threw (or was aborted by our timeout). */
export function networkError(cause: unknown, timedOut: boolean, what: string): NetworkError {
  if (timedOut) return new NetworkError({ status: 0, code: 'timeout', message: `${what} timed out.`, cause });
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new NetworkError({ status: 0, code: 'network_error', message: `${what} failed: ${reason}`, cause });
}

export function isPromptloopError(error: unknown, code?: PromptloopErrorCode): error is PromptloopError {
  return error instanceof PromptloopError && (code === undefined || error.code === code);
}
