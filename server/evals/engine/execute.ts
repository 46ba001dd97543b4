import { AppError } from '@/server/errors';
import { complete } from '@/server/models/provider';
import { renderMessages, type RenderInput } from '@/server/models/render';
import { findRoute, localJudgeRouteId, type RouteConfig } from '@/server/models/routes';
import type { Completion } from '@/server/models/types';
import { extractVariables } from '@/server/prompts/schemas';
import type { CaseOutcome, ClaimedCase, RunInfo } from './claim';
import { defaultRubric, judgeMessages, parseVerdict, runAssertions, scoreExpected } from './scoring';

// Runs one frozen case: render the frozen content with the case input, call the model route (the
// provider client retries 429/5xx with backoff and Retry-After), score, check assertions. Never
// throws: every failure becomes an `error` outcome with a message.

function message(error: unknown): string {
  if (error instanceof AppError) return error.message;
  return error instanceof Error ? `Unexpected failure: ${error.message}` : 'Unexpected failure.';
}

function stringValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * What the case input means for the prompt's input type:
 * - user_message: the input (text or JSON text, verbatim) is the final user message.
 * - variables: a JSON object of variable values (non-string values are sent as their JSON text;
 *   keys the prompt does not use are ignored). A text input fills the prompt's only variable when it
 *   has exactly one; otherwise it must itself be a JSON object. A prompt with no variables is sent
 *   as it is.
 */
export function renderInput(
  content: RunInfo['content'],
  claimed: Pick<ClaimedCase, 'input' | 'inputFormat'>,
  names: string[] = content.inputType === 'variables' ? extractVariables(content.messages) : [],
): RenderInput {
  if (content.inputType === 'user_message') return { input: claimed.input };
  if (claimed.inputFormat === 'text' && names.length === 1) return { variables: { [names[0]]: claimed.input } };
  let parsed: unknown;
  try {
    parsed = JSON.parse(claimed.input);
  } catch {
    parsed = undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    if (names.length === 0) return { variables: {} };
    throw new AppError('invalid_request', `This prompt takes variables (${names.map((n) => `{{${n}}}`).join(', ')}): the case input must be a JSON object of their values.`);
  }
  const given = parsed as Record<string, unknown>;
  return { variables: Object.fromEntries(names.filter((name) => name in given).map((name) => [name, stringValue(given[name])])) };
}

const failed = (error: string, partial: Partial<CaseOutcome> = {}): CaseOutcome => ({
  status: 'error',
  output: null,
  passed: null,
  score: null,
  assertions: [],
  judgeReasoning: null,
  error,
  latencyMs: null,
  inputTokens: null,
  outputTokens: null,
  costUsdNanos: null,
  ...partial,
});

function addCost(a: number | null, b: number | null): number | null {
  return a === null ? null : a + (b ?? 0);
}

// What every case of a run shares, resolved once per run by the engine rather than per case: the
// model and judge routes (MODEL_ROUTES is parsed and validated on each lookup) and the variables.
export type PreparedRun = { route: RouteConfig | undefined; judgeId: string; judge: RouteConfig | undefined; variables: string[] };

export function prepareRun(run: RunInfo): PreparedRun {
  const judgeId = run.scoring.method === 'judge' ? (run.scoring.judgeModelRouteId ?? localJudgeRouteId) : localJudgeRouteId;
  return {
    route: findRoute(run.content.modelRouteId),
    judgeId,
    judge: run.scoring.method === 'judge' ? findRoute(judgeId) : undefined,
    variables: run.content.inputType === 'variables' ? extractVariables(run.content.messages) : [],
  };
}

export async function executeCase(run: RunInfo, claimed: ClaimedCase, prepared: PreparedRun = prepareRun(run)): Promise<CaseOutcome> {
  const { route } = prepared;
  if (!route) return failed(`The model route "${run.content.modelRouteId}" is not configured on this server.`);
  let completion: Completion;
  try {
    const messages = renderMessages(run.content, renderInput(run.content, claimed, prepared.variables));
    completion = await complete(route, { messages, temperature: run.content.temperature });
  } catch (error) {
    return failed(message(error));
  }
  // Latency and tokens are the prompt's own call; the cost includes the judge's call when there is one.
  const measured = {
    output: completion.output,
    latencyMs: completion.latencyMs,
    inputTokens: completion.inputTokens,
    outputTokens: completion.outputTokens,
    costUsdNanos: completion.costUsdNanos,
  };
  const assertions = runAssertions(completion.output, run.content);
  const base = { ...measured, assertions, judgeReasoning: null, error: null };

  switch (run.scoring.method) {
    case 'expected': {
      const { passed, score } = scoreExpected(completion.output, claimed.expectedOutput, claimed.referenceFormat);
      return { ...base, status: 'scored', passed, score };
    }
    case 'review':
      return { ...base, status: 'pending_review', passed: null, score: null };
    case 'judge': {
      const { judgeId, judge } = prepared;
      if (!judge) return failed(`The judge model route "${judgeId}" is not configured on this server.`, { ...measured, assertions });
      let answer: Completion;
      try {
        answer = await complete(judge, {
          messages: judgeMessages({ rubric: run.scoring.rubric ?? defaultRubric, input: claimed.input, expectedOutput: claimed.expectedOutput, output: completion.output }),
          temperature: 0,
        });
      } catch (error) {
        return failed(`The judge failed: ${message(error)}`, { ...measured, assertions });
      }
      const costUsdNanos = addCost(measured.costUsdNanos, answer.costUsdNanos);
      const verdict = parseVerdict(answer.output);
      if (!verdict) {
        const excerpt = answer.output.length > 200 ? `${answer.output.slice(0, 200)}…` : answer.output;
        return failed(`The judge's answer is not a verdict {"pass", "score", "reasoning"}: ${JSON.stringify(excerpt)}`, { ...measured, costUsdNanos, assertions });
      }
      return { ...base, costUsdNanos, status: 'scored', passed: verdict.pass, score: verdict.score, judgeReasoning: verdict.reasoning };
    }
  }
}
