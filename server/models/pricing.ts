// List prices in USD per million tokens (input, output). Costs are integer USD nanos:
// 1 USD per million tokens = 1,000 nanos per token, so per-token prices stay whole numbers.
const perMillionUsd: Record<string, [number, number]> = {
  'gpt-4o-mini': [0.15, 0.6],
  'gpt-4o': [2.5, 10],
  'gpt-4.1': [2, 8],
  'gpt-4.1-mini': [0.4, 1.6],
  'gpt-4.1-nano': [0.1, 0.4],
  'o3-mini': [1.1, 4.4],
  'o4-mini': [1.1, 4.4],
  'gpt-3.5-turbo': [0.5, 1.5],
  'claude-3-5-haiku': [0.8, 4],
  'claude-3-5-sonnet': [3, 15],
  'claude-sonnet-4': [3, 15],
  'llama-3.1-8b-instruct': [0.05, 0.08],
};

export type Cost = { costUsdNanos: number | null; costSource: 'catalog_estimate' | 'unavailable' };

// OpenRouter-style ids ("openai/gpt-4o-mini") and dated snapshots ("gpt-4o-2024-08-06") map to the base model.
function priceOf(modelId: string): [number, number] | undefined {
  const name = modelId.toLowerCase().split('/').pop() ?? '';
  if (perMillionUsd[name]) return perMillionUsd[name];
  const undated = name.replace(/-\d{4}-\d{2}-\d{2}$|-\d{8}$|-latest$/, '');
  return perMillionUsd[undated];
}

export function costOf(modelId: string, inputTokens: number | null, outputTokens: number | null): Cost {
  const price = priceOf(modelId);
  if (!price || inputTokens === null || outputTokens === null) return { costUsdNanos: null, costSource: 'unavailable' };
  const nanos = Math.round(inputTokens * price[0] * 1000 + outputTokens * price[1] * 1000);
  return { costUsdNanos: nanos, costSource: 'catalog_estimate' };
}
