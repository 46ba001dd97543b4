import { describe, expect, it } from 'vitest';
import { storableOutcome, type CaseOutcome } from '@/server/evals/engine/claim';

const outcome: CaseOutcome = {
  status: 'scored',
  output: 'ok',
  passed: true,
  score: 1,
  assertions: [],
  judgeReasoning: null,
  error: null,
  latencyMs: 120,
  inputTokens: 7,
  outputTokens: 3,
  costUsdNanos: 2850,
};

describe('storableOutcome', () => {
  it('keeps counts the columns hold and makes the others unknown, so the write cannot fail on them', () => {
    expect(storableOutcome(outcome)).toMatchObject({
      latencyMs: 120,
      inputTokens: 7,
      outputTokens: 3,
      costUsdNanos: 2850,
    });
    expect(
      storableOutcome({ ...outcome, latencyMs: 2 ** 31, inputTokens: 1e20, outputTokens: -1, costUsdNanos: 0.5 }),
    ).toMatchObject({ latencyMs: null, inputTokens: null, outputTokens: null, costUsdNanos: null, score: 1 });
  });
});
