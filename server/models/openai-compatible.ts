import type { AppError } from '../errors';
import { costOf } from './pricing';
import type { RouteConfig } from './routes';
import type { ChatRequest, Completion, StreamEvent } from './types';
import { chatCompletionsTools, toolCallsOutput, type ToolCall } from './tool-calls';
import {
  attempt,
  redactProviderText,
  Retryable,
  settings,
  transportFailure,
  unavailable,
  withRetries,
} from './openai-compatible-attempts';
import { storableText } from '../input-hygiene';
import { maxReplyBytes, ReplyTooLarge } from './http-post';

// Client for any OpenAI-compatible chat-completions endpoint (OpenAI, OpenRouter, vLLM, Ollama…).
// Each attempt has its own timeout; 429, 5xx, network errors and timeouts are retried with
// exponential backoff and jitter (honouring Retry-After), at most 3 attempts. A stream is only
// retried until the provider has accepted it: once a 2xx reply starts, output may have begun.
// One attempt and the retries are in openai-compatible-attempts.ts. Tools go out as function
// definitions; an answer that calls tools has their calls as its output (tool-calls.ts).

export { parseRetryAfter } from './openai-compatible-attempts';

function requestBody(route: RouteConfig, request: ChatRequest, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: route.modelId,
    messages: request.messages,
    temperature: request.temperature,
    stream,
  };
  if (request.maxTokens !== undefined) body[route.maxTokensField] = request.maxTokens;
  if (request.tools?.length) body.tools = chatCompletionsTools(request.tools);
  if (stream) body.stream_options = { include_usage: true };
  return body;
}

// A provider's count as reported, when it is one: a whole number up to a trillion (no reply comes
// near it). Anything else is unknown: an absurd count (1e20) would overflow the stored columns and
// the cost computed from it, and fail the result's write.
export const maxTokenCount = 1e12;
const tokenCount = (value: unknown): number | null =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= maxTokenCount ? value : null;

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
    output: storableText(output),
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

export async function complete(route: RouteConfig, request: ChatRequest, signal?: AbortSignal): Promise<Completion> {
  const { timeoutMs } = settings();
  const started = Date.now();
  const body = requestBody(route, request, false);
  return withRetries(
    route,
    async () => {
      const { reply, clearTimer, controller } = await attempt(route, body, timeoutMs);
      let text: string;
      try {
        text = await reply.text();
      } catch (error) {
        if (error instanceof ReplyTooLarge) throw malformed(route, error.message);
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
      let parsed: {
        choices?: { message?: { content?: unknown; tool_calls?: unknown }; finish_reason?: unknown }[];
        usage?: unknown;
      };
      try {
        parsed = JSON.parse(text);
      } catch {
        throw malformed(route, 'not JSON');
      }
      const choice = Array.isArray(parsed?.choices) ? parsed.choices[0] : undefined;
      const finishReason = typeof choice?.finish_reason === 'string' ? choice.finish_reason : null;
      const calls = toolCalls(route, choice?.message?.tool_calls);
      if (calls.length) return finish(route, started, toolCallsOutput(calls), parsed.usage, finishReason);
      if (!choice || typeof choice.message?.content !== 'string')
        throw malformed(route, 'no choices[0].message.content');
      return finish(route, started, choice.message.content, parsed.usage, finishReason);
    },
    signal,
  );
}

// `message.tool_calls` of a reply: `[{ id, type: "function", function: { name, arguments } }]`.
function toolCalls(route: RouteConfig, value: unknown): ToolCall[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw malformed(route, 'tool_calls is not an array');
  return value.map((call: { function?: { name?: unknown; arguments?: unknown } } | null) => {
    const fn = call?.function;
    if (typeof fn?.name !== 'string') throw malformed(route, 'a tool call has no function name');
    return { name: fn.name, arguments: fn.arguments };
  });
}

// A streamed tool call arrives in pieces keyed by `index`: the name first, the arguments in fragments.
type ToolCallDelta = { index?: unknown; function?: { name?: unknown; arguments?: unknown } };

function addToolCallDeltas(route: RouteConfig, calls: { name: string; arguments: string }[], deltas: unknown): void {
  if (deltas === undefined || deltas === null) return;
  if (!Array.isArray(deltas)) throw malformed(route, "a stream event's tool_calls is not an array");
  for (const delta of deltas as (ToolCallDelta | null)[]) {
    const name = delta?.function?.name;
    const pieces = delta?.function?.arguments;
    // Without an index (not OpenAI's own shape), a name starts a new call and a fragment continues the last.
    const index =
      typeof delta?.index === 'number' && Number.isInteger(delta.index)
        ? delta.index
        : typeof name === 'string' || calls.length === 0
          ? calls.length
          : calls.length - 1;
    if (index < 0 || index > calls.length) throw malformed(route, 'a streamed tool call skips an index');
    const call = (calls[index] ??= { name: '', arguments: '' });
    // The name comes once (some servers repeat it in every piece); the arguments come in fragments.
    if (typeof name === 'string' && call.name === '') call.name = name;
    if (typeof pieces === 'string') call.arguments += pieces;
  }
}

type Chunk = {
  choices?: { delta?: { content?: unknown; tool_calls?: unknown }; finish_reason?: unknown }[];
  usage?: unknown;
  error?: { message?: unknown };
};

// The longest stream event line taken (a delta is a few hundred characters).
const maxEventChars = 4 * 1024 * 1024;

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
  let received = 0;
  let output = '';
  const calls: { name: string; arguments: string }[] = [];
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
      received += chunk.value.length;
      if (received > maxReplyBytes) throw malformed(route, new ReplyTooLarge().message);
      const piece = decoder.decode(chunk.value, { stream: true });
      // Only a piece with a line break ends lines: a long line is joined once, not split again for
      // every piece of it (which made a 20 MB line cost a minute of CPU).
      if (!piece.includes('\n')) {
        buffer += piece;
        if (buffer.length > maxEventChars) throw malformed(route, 'a stream event is larger than 4 MiB');
        continue;
      }
      const lines = (buffer + piece).split(/\r?\n/);
      buffer = lines.pop() ?? '';
      if (buffer.length > maxEventChars) throw malformed(route, 'a stream event is larger than 4 MiB');
      for (const line of lines) {
        if (line.length > maxEventChars) throw malformed(route, 'a stream event is larger than 4 MiB');
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
            `The model provider (${route.provider}) failed mid-stream: ${redactProviderText(String(parsed.error.message ?? 'unknown error'), route.apiKey)}.`,
            { reason: 'stream_error' },
          );
        if (!parsed || typeof parsed !== 'object' || !Array.isArray(parsed.choices))
          throw malformed(route, 'a stream event has no choices');
        if (parsed.usage) usage = parsed.usage;
        const choice = parsed.choices[0];
        if (typeof choice?.finish_reason === 'string') finishReason = choice.finish_reason;
        addToolCallDeltas(route, calls, choice?.delta?.tool_calls);
        const text = choice?.delta?.content;
        if (typeof text === 'string' && text.length) {
          output += text;
          yield { type: 'delta', text: storableText(text) };
        }
      }
    }
    if (!done && finishReason === null) throw malformed(route, 'the stream ended before it finished');
  } finally {
    clearTimer();
    reply.discard();
  }
  if (calls.some((call) => call.name === '')) throw malformed(route, 'a streamed tool call has no function name');
  if (calls.length) output = toolCallsOutput(calls);
  yield { type: 'done', ...finish(route, started, output, usage, finishReason) };
}
