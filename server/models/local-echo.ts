import type { ChatRequest, Completion, StreamEvent } from './types';

const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

// The first `limit` words of `text` with the whitespace between them.
function firstWords(text: string, limit: number): string {
  return (text.match(/\s*\S+/g) ?? []).slice(0, limit).join('').trimStart();
}

// Deterministic stand-in for a model: answers with the last user message (or the last message),
// counts tokens as whitespace-separated words, costs nothing. Lets everything run with no provider.
// It calls no tools (their definitions are ignored); an output token limit cuts the echo to that
// many words, with finish reason `length` as a provider gives.
function answer(request: ChatRequest): Completion {
  const last =
    [...request.messages].reverse().find((m) => m.role === 'user') ?? request.messages[request.messages.length - 1];
  const text = last?.content ?? '';
  if (request.maxTokens !== undefined && words(text) > request.maxTokens)
    return localCompletion(request, firstWords(text, request.maxTokens), 'length');
  return localCompletion(request, text);
}

// A free, instant completion of the built-in routes: tokens counted as whitespace-separated words.
export function localCompletion(request: ChatRequest, output: string, finishReason = 'stop'): Completion {
  return {
    output,
    inputTokens: request.messages.reduce((n, m) => n + words(m.content), 0),
    outputTokens: words(output),
    latencyMs: 0,
    costUsdNanos: 0,
    costSource: 'free',
    finishReason,
  };
}

export async function completeLocal(request: ChatRequest): Promise<Completion> {
  return answer(request);
}

export async function* streamLocal(request: ChatRequest): AsyncGenerator<StreamEvent> {
  const completion = answer(request);
  // Chunks of a few words, whitespace kept, so the pieces join back to the exact output.
  const pieces = completion.output.match(/\S+\s*|\s+/g) ?? [];
  for (let i = 0; i < pieces.length; i += 3) yield { type: 'delta', text: pieces.slice(i, i + 3).join('') };
  yield { type: 'done', ...completion };
}
