import { describe, expect, it } from 'vitest';
import { judgeMessages, parseVerdict } from '@/server/evals/engine/scoring';
import { complete } from '@/server/models/provider';
import { findRoute } from '@/server/models/routes';

// The built-in local judge on an online span (no expected output): any non-blank output passes.
describe('local judge without an expected output', () => {
  const judge = async (output: string, expectedOutput: string | null = null) => {
    const route = findRoute('local/judge')!;
    const answer = await complete(route, {
      messages: judgeMessages({ rubric: 'Helpful.', input: 'Hi', expectedOutput, output }),
      temperature: 0,
    });
    return parseVerdict(answer.output);
  };

  it('passes a non-blank output and fails a blank one, saying why', async () => {
    expect(await judge('Hello!')).toEqual({ pass: true, score: 1, reasoning: expect.stringContaining('not empty') });
    expect(await judge('  \n ')).toEqual({ pass: false, score: 0, reasoning: expect.stringContaining('empty') });
  });

  it('still compares with an expected output when there is one (evaluations)', async () => {
    expect(await judge('Hello!', 'Bye')).toMatchObject({ pass: false, score: 0 });
    expect(await judge('Paris', 'Paris')).toMatchObject({ pass: true, score: 1 });
  });
});
