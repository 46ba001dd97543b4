import { CliError, exitCodes, usageError } from './exit';

// The CLI's one retry policy (README "CLI"): network errors, 5xx and 429 are tried again, up to
// PROMPTLOOP_MAX_ATTEMPTS attempts (default 4), after Retry-After when given, else after a backoff
// from PROMPTLOOP_RETRY_BASE_MS (default 500 ms) doubled per attempt. The API client, the Langfuse
// reader and the OAuth requests (discovery, the token endpoint) all follow it.

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A Retry-After header (seconds or an HTTP date) in milliseconds; null when absent or unreadable. */
export function retryAfterMs(headers: Headers): number | null {
  const value = headers.get('retry-after');
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

/**
 * The wait before attempt `attempt + 1`: `baseMs` doubled per attempt with jitter, at least what
 * Retry-After asked for, at most `maxMs`.
 */
export function retryDelayMs(attempt: number, retryAfter: number | null, baseMs: number, maxMs: number): number {
  const backoff = baseMs * 2 ** (attempt - 1) * (0.5 + Math.random() * 0.5);
  return Math.min(maxMs, Math.max(retryAfter ?? 0, backoff));
}

// A whole number ≥ 1 from the environment, else the default; anything else set there is a usage error.
export function positiveEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < 1)
    throw usageError(`${name} must be a whole number of at least 1, not "${raw}".`);
  return value;
}

export const maxAttemptsFromEnv = () => positiveEnv('PROMPTLOOP_MAX_ATTEMPTS', 4);
export const retryBaseMsFromEnv = () => Number(process.env.PROMPTLOOP_RETRY_BASE_MS) || 500;
// The longest wait honoured for a Retry-After.
export const maxRetryDelayMs = 60_000;

/**
 * One request of the OAuth side (metadata, token endpoint) under the retry policy: the answer that
 * is not retried (or the last one), with its text. A network error on the last attempt is exit 1.
 */
export async function fetchRetrying(
  url: string,
  init: RequestInit,
  what: string,
  timeoutMs: number,
): Promise<{ response: Response; text: string }> {
  const maxAttempts = maxAttemptsFromEnv();
  const baseMs = retryBaseMsFromEnv();
  for (let attempt = 1; ; attempt++) {
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
      text = await response.text();
    } catch (error) {
      if (attempt >= maxAttempts)
        throw new CliError(
          `Cannot reach ${url} (${what}): ${(error as Error).message}; gave up after ${attempt} ${attempt === 1 ? 'attempt' : 'attempts'}.`,
          exitCodes.apiError,
        );
      await sleep(retryDelayMs(attempt, null, baseMs, maxRetryDelayMs));
      continue;
    }
    if ((response.status === 429 || response.status >= 500) && attempt < maxAttempts) {
      await sleep(retryDelayMs(attempt, retryAfterMs(response.headers), baseMs, maxRetryDelayMs));
      continue;
    }
    return { response, text };
  }
}
