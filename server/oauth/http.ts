import { readBody } from '../http/body';
import { stringProblem } from '../input-hygiene';
import { isAppError, isUnavailableError } from '../errors';
import { log } from '../log';
import { OAuthError, oauthErrorResponse } from './errors';

// Form bodies of the token and revocation endpoints (application/x-www-form-urlencoded, at most
// 16 KiB). A parameter sent twice, or carrying U+0000 or an unpaired surrogate, is invalid_request
// (RFC 6749 section 3.2); nothing is looked up for it.
const maxFormBytes = 16 * 1024;

export async function readText(request: Request, maxBytes: number): Promise<string> {
  // The rest of a body too large is never read: the connection closes with the 413.
  const tooLarge = () =>
    new OAuthError('invalid_request', `The request body is larger than ${maxBytes} bytes.`, 413, {
      connection: 'close',
    });
  const body = await readBody(request, { limit: maxBytes, tooLarge });
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new OAuthError('invalid_request', 'The request body is not valid UTF-8.');
  }
}

export function checkParams(entries: Iterable<[string, string]>): Map<string, string> {
  const params = new Map<string, string>();
  for (const [name, value] of entries) {
    if (stringProblem(name) || stringProblem(value))
      throw new OAuthError(
        'invalid_request',
        `Parameter "${safeName(name)}" contains a character that is not allowed.`,
      );
    if (params.has(name))
      throw new OAuthError('invalid_request', `Parameter "${safeName(name)}" is given more than once.`);
    if (value.length > 4096) throw new OAuthError('invalid_request', `Parameter "${safeName(name)}" is too long.`);
    params.set(name, value);
  }
  return params;
}

function safeName(name: string): string {
  return stringProblem(name) ? '?' : name.slice(0, 64);
}

export async function readForm(request: Request): Promise<Map<string, string>> {
  const type = request.headers.get('content-type')?.split(';')[0].trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    await request.body?.cancel().catch(() => {});
    throw new OAuthError(
      'invalid_request',
      'Send the parameters form-encoded (Content-Type: application/x-www-form-urlencoded).',
    );
  }
  return checkParams(new URLSearchParams(await readText(request, maxFormBytes)));
}

// Required parameter, or invalid_request naming it.
export function required(params: Map<string, string>, name: string): string {
  const value = params.get(name);
  if (!value) throw new OAuthError('invalid_request', `Parameter "${name}" is required.`);
  return value;
}

// The one place OAuth endpoints turn failures into responses: OAuthError as RFC 6749 JSON, a rate
// limit as 429 with Retry-After, a database outage as 503 temporarily_unavailable, anything else 500
// server_error (logged, never described to the caller).
export async function oauthEndpoint(operation: string, run: () => Promise<Response>): Promise<Response> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof OAuthError) return oauthErrorResponse(error);
    if (isAppError(error) && error.code === 'rate_limited') {
      return oauthErrorResponse(
        new OAuthError('temporarily_unavailable', 'Too many requests. Retry after the indicated time.', 429, {
          'retry-after': error.headers['retry-after'] ?? '60',
        }),
      );
    }
    if (isUnavailableError(error)) {
      log.error({ operation, err: error }, 'OAuth endpoint: dependency unavailable');
      return oauthErrorResponse(
        new OAuthError('temporarily_unavailable', 'The service is temporarily unavailable. Retry shortly.', 503, {
          'retry-after': '5',
        }),
      );
    }
    log.error({ operation, err: error }, 'OAuth endpoint failed');
    return oauthErrorResponse(new OAuthError('server_error', 'Something went wrong on our side.', 500));
  }
}
