import { AppError } from '../errors';
import { postJson, type Reply } from './http-post';
import { costOf } from './pricing';
import type { RouteConfig } from './routes';
import type { ChatRequest, Completion, StreamEvent } from './types';

// Client for any OpenAI-compatible chat-completions endpoint (OpenAI, OpenRouter, vLLM, Ollama…).
// Each attempt has its own timeout; 429, 5xx, network errors and timeouts are retried with
// exponential backoff and jitter (honouring Retry-After), at most 3 attempts. A stream is only
// retried until the provider has accepted it: once a 2xx reply starts, output may have begun.

const maxAttempts = 3;
const maxRetryAfterMs = 20_000;

// A missing or unusable value falls back to the default rather than to NaN (an instant timeout).
function numberFromEnv(value: string | undefined, fallback: number, min: number): number {
  const n = Number(value);
  return value !== undefined && value !== '' && Number.isFinite(n) && n >= min ? n : fallback;
}

function settings() {
  return {
    timeoutMs: numberFromEnv(process.env.MODEL_TIMEOUT_MS, 60_000, 1),
    retryBaseMs: numberFromEnv(process.env.MODEL_RETRY_BASE_MS, 500, 0),
  };
}

class Retryable extends Error {
  constructor(
    readonly appError: AppError,
    readonly retryAfterMs: number | null,
  ) {
    super(appError.message);
  }
}

function unavailable(
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
function transportFailure(
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function providerMessage(reply: Reply): Promise<string> {
  const text = await reply.text().catch(() => '');
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string };
    const message = typeof parsed.error === 'string' ? parsed.error : parsed.error?.message;
    if (typeof message === 'string') return message.slice(0, 300);
  } catch {
    // not JSON
  }
  return text.slice(0, 300);
}

type Attempt = { reply: Reply; controller: AbortController; armTimer: () => void; clearTimer: () => void };

// One HTTP exchange up to a 2xx status; failures are classified as retryable or final.
async function attempt(route: RouteConfig, body: Record<string, unknown>, timeoutMs: number): Promise<Attempt> {
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
  const detail = await providerMessage(reply);
  clearTimer();
  const retryAfterMs = parseRetryAfter(reply.header('retry-after'));
  if (status === 429 || status >= 500) {
    const message =
      status === 429
        ? `The model provider (${route.provider}) is rate limiting requests.`
        : `The model provider (${route.provider}) failed with HTTP ${status}.`;
    throw new Retryable(
      unavailable(route, message, { status }, retryAfterMs !== null ? retryAfterMs / 1000 : undefined),
      retryAfterMs,
    );
  }
  throw unavailable(
    route,
    `The model provider (${route.provider}) refused the request (HTTP ${status})${detail ? `: ${detail}` : '.'}`,
    { status },
  );
}

async function withRetries<T>(route: RouteConfig, run: (attemptNumber: number) => Promise<T>): Promise<T> {
  const { retryBaseMs } = settings();
  for (let n = 1; ; n++) {
    try {
      return await run(n);
    } catch (error) {
      if (!(error instanceof Retryable)) throw error;
      if (n >= maxAttempts) throw error.appError;
      if (error.retryAfterMs !== null && error.retryAfterMs > maxRetryAfterMs) throw error.appError;
      await sleep(error.retryAfterMs ?? backoffMs(n, retryBaseMs));
    }
  }
}

function requestBody(route: RouteConfig, request: ChatRequest, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: route.modelId,
    messages: request.messages,
    temperature: request.temperature,
    stream,
  };
  if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
  if (stream) body.stream_options = { include_usage: true };
  return body;
}

const tokenCount = (value: unknown): number | null =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : null;

function finish(
  route: RouteConfig,
  started: number,
  output: string,
  usage: unknown,
  finishReason: string | null,
): Completion {
  const u = (usage ?? {}) as { prompt_tokens?: unknown; completion_tokens?: unknown };
  const inputTokens = tokenCount(u.prompt_tokens);
  const outputTokens = tokenCount(u.completion_tokens);
  return {
    output,
    inputTokens,
    outputTokens,
    latencyMs: Date.now() - started,
    ...costOf(route.modelId, inputTokens, outputTokens),
    finishReason,
  };
}

function malformed(route: RouteConfig, what: string): AppError {
  return unavailable(route, `The model provider (${route.provider}) sent a malformed reply: ${what}.`, {
    reason: 'malformed',
  });
}

export async function complete(route: RouteConfig, request: ChatRequest): Promise<Completion> {
  const { timeoutMs } = settings();
  const started = Date.now();
  const body = requestBody(route, request, false);
  return withRetries(route, async () => {
    const { reply, clearTimer, controller } = await attempt(route, body, timeoutMs);
    let text: string;
    try {
      text = await reply.text();
    } catch (error) {
      throw new Retryable(
        transportFailure(
          route,
          controller,
          `The model provider (${route.provider}) did not answer within ${timeoutMs} ms.`,
          `The reply from ${route.provider} was cut off.`,
        ),
        null,
      );
    } finally {
      clearTimer();
    }
    let parsed: { choices?: { message?: { content?: unknown }; finish_reason?: unknown }[]; usage?: unknown };
    try {
      parsed = JSON.parse(text);
    } catch {
      throw malformed(route, 'not JSON');
    }
    const choice = Array.isArray(parsed?.choices) ? parsed.choices[0] : undefined;
    if (!choice || typeof choice.message?.content !== 'string') throw malformed(route, 'no choices[0].message.content');
    const finishReason = typeof choice.finish_reason === 'string' ? choice.finish_reason : null;
    return finish(route, started, choice.message.content, parsed.usage, finishReason);
  });
}

type Chunk = {
  choices?: { delta?: { content?: unknown }; finish_reason?: unknown }[];
  usage?: unknown;
  error?: { message?: unknown };
};

// Server-sent events: `data: {json}` lines, ending with `data: [DONE]`.
export async function* stream(route: RouteConfig, request: ChatRequest): AsyncGenerator<StreamEvent> {
  const { timeoutMs } = settings();
  const started = Date.now();
  const { reply, armTimer, clearTimer, controller } = await withRetries(route, () =>
    attempt(route, requestBody(route, request, true), timeoutMs),
  );
  const reader = reply.chunks()[Symbol.asyncIterator]();
  const decoder = new TextDecoder();
  let buffer = '';
  let output = '';
  let usage: unknown = null;
  let finishReason: string | null = null;
  let done = false;
  try {
    while (!done) {
      let chunk: IteratorResult<Buffer>;
      try {
        chunk = await reader.next();
      } catch {
        throw transportFailure(
          route,
          controller,
          `The model provider (${route.provider}) stopped sending for ${timeoutMs} ms.`,
          `The stream from ${route.provider} was cut off.`,
        );
      }
      if (chunk.done) break;
      armTimer();
      buffer += decoder.decode(chunk.value, { stream: true });
      const lines = buffer.split(/\r?\n/);
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.startsWith('data:')) continue;
        const data = line.slice(5).trim();
        if (data === '[DONE]') {
          done = true;
          break;
        }
        let parsed: Chunk;
        try {
          parsed = JSON.parse(data);
        } catch {
          throw malformed(route, 'a stream event is not JSON');
        }
        if (parsed?.error)
          throw unavailable(
            route,
            `The model provider (${route.provider}) failed mid-stream: ${String(parsed.error.message ?? 'unknown error')}.`,
            { reason: 'stream_error' },
          );
        if (!parsed || typeof parsed !== 'object' || !Array.isArray(parsed.choices))
          throw malformed(route, 'a stream event has no choices');
        if (parsed.usage) usage = parsed.usage;
        const choice = parsed.choices[0];
        if (typeof choice?.finish_reason === 'string') finishReason = choice.finish_reason;
        const text = choice?.delta?.content;
        if (typeof text === 'string' && text.length) {
          output += text;
          yield { type: 'delta', text };
        }
      }
    }
    if (!done && finishReason === null) throw malformed(route, 'the stream ended before it finished');
  } finally {
    clearTimer();
    reply.discard();
  }
  yield { type: 'done', ...finish(route, started, output, usage, finishReason) };
}
