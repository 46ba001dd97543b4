import type { z } from 'zod';

// One error type for every rule of the spec; the edges map it to HTTP and tRPC.
export const errorCodes = {
  invalid_request: { http: 400, trpc: 'BAD_REQUEST' },
  unauthorized: { http: 401, trpc: 'UNAUTHORIZED' },
  insufficient_scope: { http: 403, trpc: 'FORBIDDEN' },
  forbidden: { http: 403, trpc: 'FORBIDDEN' },
  admin_required: { http: 403, trpc: 'FORBIDDEN' },
  read_only: { http: 403, trpc: 'FORBIDDEN' },
  plan_required: { http: 403, trpc: 'FORBIDDEN' },
  usage_exhausted: { http: 403, trpc: 'FORBIDDEN' },
  not_found: { http: 404, trpc: 'NOT_FOUND' },
  label_not_assigned: { http: 404, trpc: 'NOT_FOUND' },
  version_not_found: { http: 404, trpc: 'NOT_FOUND' },
  draft_conflict: { http: 409, trpc: 'CONFLICT' },
  dataset_conflict: { http: 409, trpc: 'CONFLICT' },
  invalid_state: { http: 409, trpc: 'CONFLICT' },
  choose_organization: { http: 409, trpc: 'CONFLICT' },
  promotion_blocked: { http: 409, trpc: 'CONFLICT' },
  secret_unavailable: { http: 409, trpc: 'CONFLICT' },
  idempotency_in_progress: { http: 409, trpc: 'CONFLICT' },
  email_taken: { http: 409, trpc: 'CONFLICT' },
  idempotency_conflict: { http: 422, trpc: 'UNPROCESSABLE_CONTENT' },
  import_rejected: { http: 422, trpc: 'UNPROCESSABLE_CONTENT' },
  invalid_order: { http: 422, trpc: 'UNPROCESSABLE_CONTENT' },
  confirmation_mismatch: { http: 422, trpc: 'UNPROCESSABLE_CONTENT' },
  method_not_allowed: { http: 405, trpc: 'METHOD_NOT_SUPPORTED' },
  request_timeout: { http: 408, trpc: 'TIMEOUT' },
  payload_too_large: { http: 413, trpc: 'PAYLOAD_TOO_LARGE' },
  unsupported_media_type: { http: 415, trpc: 'UNSUPPORTED_MEDIA_TYPE' },
  headers_too_large: { http: 431, trpc: 'BAD_REQUEST' },
  rate_limited: { http: 429, trpc: 'TOO_MANY_REQUESTS' },
  internal: { http: 500, trpc: 'INTERNAL_SERVER_ERROR' },
  unavailable: { http: 503, trpc: 'SERVICE_UNAVAILABLE' },
} as const;

export type ErrorCode = keyof typeof errorCodes;

export type Issue = { path: string; message: string };

// The wait a 429 or 503 suggests when its cause gives none (a provider that failed, a route not configured).
export const defaultRetryAfterSeconds = 5;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    details: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = Array.isArray(details.issues) ? { ...details, issues: boundedIssues(details.issues) } : details;
    // API.md: every 429 and 503 carries Retry-After, on every surface. A cause that names no wait of
    // its own gets a short one.
    const status = errorCodes[code].http;
    this.headers =
      (status === 429 || status === 503) && headers['retry-after'] === undefined
        ? { ...headers, 'retry-after': String(defaultRetryAfterSeconds) }
        : headers;
  }

  get status(): number {
    return errorCodes[this.code].http;
  }
}

// A class check: server/ is loaded once per process (next.config.mjs), so every AppError is this class.
export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

// A request that fails as a whole (not JSON, the wrong media type, a body where none is taken) has
// one issue at the path '' saying so, so a client that reads details.issues always finds one.
export function invalidRequest(message: string, issues: Issue[] = []): AppError {
  return new AppError('invalid_request', message, { issues: issues.length ? issues : [{ path: '', message }] });
}

// An answer is bounded like everything else the service returns: a body of 80,000 unknown fields
// is told about its first 99 and how many more there are, not answered with megabytes.
const maxIssues = 100;
function boundedIssues(issues: unknown[]): unknown[] {
  if (issues.length <= maxIssues) return issues;
  const more = issues.length - (maxIssues - 1);
  return [...issues.slice(0, maxIssues - 1), { path: '', message: `${more} more issues are not listed.` }];
}

// zod issues as API issues: dotted paths, one 'Unknown field.' per unrecognised key.
// One issue per path and message: a value can fail several checks that say the same thing
// (a 17-digit number is neither a safe integer nor under the maximum). A value of the wrong type
// is told only that: zod still runs the length checks on it (a string given for a list would also
// be "Too big: expected string to have <=10 characters").
export function zodIssues(error: z.ZodError): Issue[] {
  const wrongType = new Set(
    error.issues.filter((issue) => issue.code === 'invalid_type').map((issue) => issue.path.map(String).join('.')),
  );
  const relevant = error.issues.filter(
    (issue) => issue.code === 'invalid_type' || !wrongType.has(issue.path.map(String).join('.')),
  );
  const issues = relevant.flatMap((issue) => {
    const base = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: base ? `${base}.${key}` : key, message: 'Unknown field.' }));
    }
    return [{ path: base, message: issue.message }];
  });
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = `${issue.path}\u0000${issue.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export function notFound(what: string): AppError {
  return new AppError('not_found', `${what} not found.`);
}

// Connection-level failures mean the database is unavailable, not that the request was wrong.
const unavailableCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08001',
  '08003',
  '08006',
  // Refused at connect: the database does not exist (3D000), was dropped (57P04), or the role may not
  // log in (28000, 28P01): the server is there but this database is not, for now.
  '3D000',
  '57P04',
  '28000',
  '28P01',
]);

export function isUnavailableError(error: unknown): boolean {
  const { code, message } = (error as { code?: unknown; message?: unknown } | null) ?? {};
  if (typeof code === 'string' && unavailableCodes.has(code)) return true;
  // 55000 is a general "object not in prerequisite state"; only at connect is it an outage
  // ("database … is not currently accepting connections", ALTER DATABASE … ALLOW_CONNECTIONS false).
  if (code === '55000' && typeof message === 'string' && message.includes('not currently accepting connections'))
    return true;
  const cause = (error as { cause?: unknown } | null)?.cause;
  return cause !== undefined && cause !== error && isUnavailableError(cause);
}

// The SQLSTATE of a database error (postgres-js, PGlite, or drizzle's wrapper of either).
export function sqlState(error: unknown): string | undefined {
  for (let current = error as { code?: unknown; cause?: unknown } | null, depth = 0; current && depth < 4; depth++) {
    if (typeof current.code === 'string' && /^[0-9A-Z]{5}$/.test(current.code)) return current.code;
    current = current.cause as typeof current;
  }
  return undefined;
}

// SQLSTATE class 22 (data exception: a value the column cannot hold). Input checks run first, so
// reaching this is a gap in them; it is still the client's value, never a reason to answer 5xx.
export function isDataException(error: unknown): boolean {
  return sqlState(error)?.startsWith('22') ?? false;
}
