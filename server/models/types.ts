export type ChatMessage = { role: 'system' | 'user' | 'assistant'; content: string };

export type ChatRequest = { messages: ChatMessage[]; temperature: number; maxTokens?: number };

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
