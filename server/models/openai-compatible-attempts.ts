import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../errors';
import { postJson, type Reply } from './http-post';
import type { RouteConfig } from './routes';

// One HTTP exchange with an OpenAI-compatible endpoint and its retries (see openai-compatible.ts):
// each attempt has its own timeout; 429, 5xx, network errors and timeouts are retried.

const maxAttempts = 3;
const maxRetryAfterMs = 20_000;

// A missing or unusable value falls back to the default rather than to NaN (an instant timeout).
function numberFromEnv(value: string | undefined, fallback: number, min: number): number {
  const n = Number(value);
  return value !== undefined && value !== '' && Number.isFinite(n) && n >= min ? n : fallback;
}

export function settings() {
  return {
    timeoutMs: numberFromEnv(process.env.MODEL_TIMEOUT_MS, 60_000, 1),
    retryBaseMs: numberFromEnv(process.env.MODEL_RETRY_BASE_MS, 500, 0),
  };
}

export class Retryable extends Error {
  constructor(
    readonly appError: AppError,
    readonly retryAfterMs: number | null,
  ) {
    super(appError.message);
  }
}

export function unavailable(
  route: RouteConfig,
  message: string,
  details: Record<string, unknown> = {},
  retryAfterSeconds?: number,
): AppError {
  const headers: Record<string, string> =
    retryAfterSeconds !== undefined ? { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) } : {};
  return new AppError(
    'unavailable',
    message,
    { provider: route.provider, modelRouteId: route.id, ...details },
    headers,
  );
}

// A transport failure: the timer's abort means a timeout, anything else a broken connection.
export function transportFailure(
  route: RouteConfig,
  controller: AbortController,
  timeoutMessage: string,
  otherMessage: string,
): AppError {
  const timedOut = controller.signal.aborted;
  return unavailable(route, timedOut ? timeoutMessage : otherMessage, { reason: timedOut ? 'timeout' : 'network' });
}

// Retry-After is either delta-seconds or an HTTP date.
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

function backoffMs(attempt: number, baseMs: number): number {
  return baseMs * 2 ** (attempt - 1) + Math.random() * baseMs;
}

// A call whose caller stopped wanting it (an evaluation cancelled while the call failed): not retried.
const stopped = (route: RouteConfig, last: AppError) =>
  unavailable(route, `${last.message} Not retried: the work it was for was cancelled.`, { reason: 'stopped' });

// Credentials a provider's error text may echo (its own key format, masked or not, or a bearer
// header): shown to every member of the organization and stored with results, so never kept.
const credentialPattern = /\b(?:sk|pk|rk)-[A-Za-z0-9_*.-]{8,}|\bBearer\s+[^\s"',]+/gi;

/** A provider's error text as we show and store it: at most 300 characters, credentials redacted. */
export function redactProviderText(text: string, apiKey: string | undefined): string {
  const withoutKey = apiKey && apiKey.length >= 4 ? text.split(apiKey).join('[redacted]') : text;
  return withoutKey.replace(credentialPattern, '[redacted]').slice(0, 300);
}

async function providerMessage(reply: Reply, apiKey: string | undefined): Promise<string> {
  const text = await reply.text().catch(() => '');
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string };
    const message = typeof parsed.error === 'string' ? parsed.error : parsed.error?.message;
    if (typeof message === 'string') return redactProviderText(message, apiKey);
  } catch {
    // not JSON
  }
  return redactProviderText(text, apiKey);
}

type Attempt = { reply: Reply; controller: AbortController; armTimer: () => void; clearTimer: () => void };

// One HTTP exchange up to a 2xx status; failures are classified as retryable or final.
export async function attempt(route: RouteConfig, body: Record<string, unknown>, timeoutMs: number): Promise<Attempt> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const clearTimer = () => clearTimeout(timer);
  const armTimer = () => {
    clearTimer();
    timer = setTimeout(() => controller.abort(new Error('timeout')), timeoutMs);
  };
  armTimer();
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: body.stream ? 'text/event-stream' : 'application/json',
  };
  if (route.apiKey) headers.authorization = `Bearer ${route.apiKey}`;
  let reply: Reply;
  try {
    reply = await postJson(`${route.baseUrl}/chat/completions`, headers, JSON.stringify(body), controller.signal);
  } catch (error) {
    clearTimer();
    const failure = transportFailure(
      route,
      controller,
      `The model provider (${route.provider}) did not answer within ${timeoutMs} ms.`,
      `Could not reach the model provider (${route.provider}): ${(error as Error).message}.`,
    );
    throw new Retryable(failure, null);
  }
  const { status } = reply;
  if (status >= 200 && status < 300) return { reply, controller, armTimer, clearTimer };
  const detail = await providerMessage(reply, route.apiKey);
  clearTimer();
  const retryAfterMs = parseRetryAfter(reply.header('retry-after'));
  // The provider's own words, when it gave any (an HTML error page from a proxy is not words).
  const said = detail && !/^\s*</.test(detail) ? `: ${detail}${/[.!?]$/.test(detail) ? '' : '.'}` : '.';
  if (status === 429 || status >= 500) {
    const message =
      status === 429
        ? `The model provider (${route.provider}) is rate limiting requests${said}`
        : `The model provider (${route.provider}) failed with HTTP ${status}${said}`;
    throw new Retryable(
      unavailable(route, message, { status }, retryAfterMs !== null ? retryAfterMs / 1000 : undefined),
      retryAfterMs,
    );
  }
  throw unavailable(route, `The model provider (${route.provider}) refused the request (HTTP ${status})${said}`, {
    status,
  });
}

// `signal`: once it aborts, a failed attempt is not retried (the one in flight still finishes).
export async function withRetries<T>(
  route: RouteConfig,
  run: (attemptNumber: number) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  const { retryBaseMs } = settings();
  for (let n = 1; ; n++) {
    try {
      return await run(n);
    } catch (error) {
      if (!(error instanceof Retryable)) throw error;
      if (n >= maxAttempts) throw error.appError;
      if (error.retryAfterMs !== null && error.retryAfterMs > maxRetryAfterMs) throw error.appError;
      // The wait ends early (rejected) when the signal aborts, also when it already has.
      await sleep(error.retryAfterMs ?? backoffMs(n, retryBaseMs), undefined, { signal }).catch(() => undefined);
      if (signal?.aborted) throw stopped(route, error.appError);
    }
  }
}
