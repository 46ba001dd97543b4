import { normalizeWhitespace } from '../text';
import { localCompletion } from './local-echo';
import type { ChatRequest, Completion, StreamEvent } from './types';

// The verdict of the built-in deterministic judge: passes when the normalised output equals the
// normalised expected output (score 1) or contains it (score 0.8); otherwise fails (score 0).
export function localJudgeVerdict(request: { expectedOutput: string; output: string }): {
  pass: boolean;
  score: number;
  reasoning: string;
} {
  const output = normalizeWhitespace(request.output);
  const expected = normalizeWhitespace(request.expectedOutput);
  if (output === expected)
    return { pass: true, score: 1, reasoning: 'The output matches the expected output exactly (ignoring whitespace).' };
  if (expected.length > 0 && output.includes(expected))
    return { pass: true, score: 0.8, reasoning: 'The output contains the expected output.' };
  return { pass: false, score: 0, reasoning: 'The output neither matches nor contains the expected output.' };
}

// With no expected output to compare with (online evaluation sends expectedOutput null), the only
// thing the local judge can check is that there is an answer: a non-blank output passes.
function localJudgeVerdictWithoutReference(output: string): { pass: boolean; score: number; reasoning: string } {
  if (normalizeWhitespace(output) !== '')
    return { pass: true, score: 1, reasoning: 'There is no expected output to compare with; the output is not empty.' };
  return { pass: false, score: 0, reasoning: 'There is no expected output to compare with, and the output is empty.' };
}

// Built-in deterministic judge (route local/judge): reads the case the evaluation engine sends as
// one JSON user message ({ rubric, input, expectedOutput, output }) and answers with a verdict
// JSON, so judge scoring works with no provider. Any other conversation gets a failing verdict.
function verdictFor(request: ChatRequest): string {
  const last = [...request.messages].reverse().find((m) => m.role === 'user');
  let fields: { expectedOutput?: unknown; output?: unknown } | null = null;
  try {
    fields = last ? JSON.parse(last.content) : null;
  } catch {
    fields = null;
  }
  // A blank expected output (a case whose expectation is left to the judge) is no reference either.
  if (
    fields &&
    typeof fields === 'object' &&
    typeof fields.output === 'string' &&
    (fields.expectedOutput === null ||
      (typeof fields.expectedOutput === 'string' && normalizeWhitespace(fields.expectedOutput) === ''))
  )
    return JSON.stringify(localJudgeVerdictWithoutReference(fields.output));
  if (
    !fields ||
    typeof fields !== 'object' ||
    typeof fields.output !== 'string' ||
    typeof fields.expectedOutput !== 'string'
  ) {
    return JSON.stringify({
      pass: false,
      score: 0,
      reasoning:
        'The local judge grades evaluation outputs; this request carries no output and expected output to compare.',
    });
  }
  return JSON.stringify(localJudgeVerdict({ expectedOutput: fields.expectedOutput, output: fields.output }));
}

function answer(request: ChatRequest): Completion {
  return localCompletion(request, verdictFor(request));
}

export async function completeJudge(request: ChatRequest): Promise<Completion> {
  return answer(request);
}

export async function* streamJudge(request: ChatRequest): AsyncGenerator<StreamEvent> {
  const completion = answer(request);
  yield { type: 'delta', text: completion.output };
  yield { type: 'done', ...completion };
}
