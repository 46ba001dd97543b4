import { AppError } from '../errors';
import * as openAiCompatible from './openai-compatible';
import { completeLocal, streamLocal } from './local-echo';
import { completeJudge, streamJudge } from './local-judge';
import { localJudgeRouteId, type RouteConfig } from './routes';
import type { ChatRequest, Completion, StreamEvent } from './types';

function assertAvailable(route: RouteConfig): void {
  if (!route.available) {
    throw new AppError('unavailable', `The model route ${route.id} has no credentials configured on this server.`, {
      provider: route.provider,
      modelRouteId: route.id,
      reason: 'not_configured',
    });
  }
}

// The one entry point for running a model, used by the playground and (later) evaluations.
// `signal` (evaluations): once it aborts, a failed call is not retried.
export async function complete(
  route: RouteConfig,
  request: ChatRequest,
  options: { signal?: AbortSignal } = {},
): Promise<Completion> {
  assertAvailable(route);
  if (route.kind === 'local') return route.id === localJudgeRouteId ? completeJudge(request) : completeLocal(request);
  return openAiCompatible.complete(route, request, options.signal);
}

export function stream(route: RouteConfig, request: ChatRequest): AsyncGenerator<StreamEvent> {
  assertAvailable(route);
  if (route.kind === 'local') return route.id === localJudgeRouteId ? streamJudge(request) : streamLocal(request);
  return openAiCompatible.stream(route, request);
}
