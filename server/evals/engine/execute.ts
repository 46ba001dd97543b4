import { AppError } from '@/server/errors';
import { complete } from '@/server/models/provider';
import { chatRequest } from '@/server/models/render';
import { findRoute, localJudgeRouteId, type RouteConfig } from '@/server/models/routes';
import type { ChatMessage, Completion } from '@/server/models/types';
import { caseMessages, variablesOf, type CaseInput } from '../../datasets/case-input';
import type { CaseOutcome, ClaimedCase, RunInfo } from './claim';
import { defaultRubric, judgeMessages, parseVerdict, runAssertions, scoreExpected } from './scoring';

// Runs one frozen case: render the frozen content with the case input, call the model route (the
// provider client retries 429/5xx with backoff and Retry-After), score, check assertions. Never
// throws: every failure becomes an `error` outcome with a message.

function message(error: unknown): string {
  if (error instanceof AppError) return error.message;
  return error instanceof Error ? `Unexpected failure: ${error.message}` : 'Unexpected failure.';
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
export type PreparedRun = {
  route: RouteConfig | undefined;
  judgeId: string;
  judge: RouteConfig | undefined;
  variables: string[];
};

export function prepareRun(run: Pick<RunInfo, 'content' | 'scoring'>): PreparedRun {
  const judgeId =
    run.scoring.method === 'judge' ? (run.scoring.judgeModelRouteId ?? localJudgeRouteId) : localJudgeRouteId;
  return {
    route: findRoute(run.content.modelRouteId),
    judgeId,
    judge: run.scoring.method === 'judge' ? findRoute(judgeId) : undefined,
    variables: variablesOf(run.content),
  };
}

/**
 * Why no case of the run can be scored, known before any call: its model route, or its judge's, is not
 * configured on this server or has no credentials (a call that would never leave the server, or a prompt
 * call whose output no judge could score). Null when both can be called.
 */
export function unusableRoute(run: Pick<RunInfo, 'content' | 'scoring'>, prepared: PreparedRun): string | null {
  const { route, judge, judgeId } = prepared;
  if (!route) return `The model route "${run.content.modelRouteId}" is not configured on this server.`;
  if (!route.available) return `The model route ${route.id} has no credentials configured on this server.`;
  if (run.scoring.method !== 'judge') return null;
  if (!judge) return `The judge model route "${judgeId}" is not configured on this server.`;
  if (!judge.available) return `The judge model route ${judge.id} has no credentials configured on this server.`;
  return null;
}

/**
 * The messages of the case's call, or why it fails before any model call: a route that cannot be
 * used (above), or an input the content cannot take (input type, a missing variable). Such a case is
 * never charged: the engine records it as an error before it is claimed (runner.ts).
 */
export function preModelCheck(
  run: RunInfo,
  item: CaseInput,
  prepared: PreparedRun,
): { route: RouteConfig; messages: ChatMessage[] } | { error: string } {
  const unusable = unusableRoute(run, prepared);
  if (unusable !== null || !prepared.route) return { error: unusable ?? 'No model route.' };
  const rendered = caseMessages(run.content, item, prepared.variables);
  return 'error' in rendered ? rendered : { route: prepared.route, messages: rendered.messages };
}

// `signal` aborts when the run is cancelled: a failed call is then not retried.
export async function executeCase(
  run: RunInfo,
  claimed: ClaimedCase,
  prepared: PreparedRun = prepareRun(run),
  signal?: AbortSignal,
): Promise<CaseOutcome> {
  const call = preModelCheck(run, claimed, prepared);
  if ('error' in call) return failed(call.error);
  let completion: Completion;
  try {
    completion = await complete(call.route, chatRequest(run.content, call.messages), { signal });
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
      if (!judge)
        return failed(`The judge model route "${judgeId}" is not configured on this server.`, {
          ...measured,
          assertions,
        });
      let answer: Completion;
      try {
        answer = await complete(
          judge,
          {
            messages: judgeMessages({
              rubric: run.scoring.rubric ?? defaultRubric,
              input: claimed.input,
              expectedOutput: claimed.expectedOutput,
              output: completion.output,
            }),
            temperature: 0,
          },
          { signal },
        );
      } catch (error) {
        return failed(`The judge failed: ${message(error)}`, { ...measured, assertions });
      }
      const costUsdNanos = addCost(measured.costUsdNanos, answer.costUsdNanos);
      const verdict = parseVerdict(answer.output);
      if (!verdict) {
        const excerpt = answer.output.length > 200 ? `${answer.output.slice(0, 200)}…` : answer.output;
        return failed(
          `The judge's answer is not a verdict {"pass", "score", "reasoning"}: ${JSON.stringify(excerpt)}`,
          { ...measured, costUsdNanos, assertions },
        );
      }
      return {
        ...base,
        costUsdNanos,
        status: 'scored',
        passed: verdict.pass,
        score: verdict.score,
        judgeReasoning: verdict.reasoning,
      };
    }
  }
}
