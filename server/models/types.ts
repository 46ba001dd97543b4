import type { Tool } from '../prompts/schemas';

export type ChatMessage = { role: 'system' | 'user' | 'assistant'; content: string };

// `tools`: function tools the model may call (sent only when there are some); `maxTokens`: the
// output token limit (absent = the route's own).
export type ChatRequest = { messages: ChatMessage[]; temperature: number; maxTokens?: number; tools?: Tool[] };

export type Completion = {
  output: string;
  inputTokens: number | null;
  outputTokens: number | null;
  latencyMs: number;
  costUsdNanos: number | null;
  costSource: 'catalog_estimate' | 'unavailable' | 'free';
  finishReason: string | null;
};

export type StreamEvent = { type: 'delta'; text: string } | ({ type: 'done' } & Completion);
