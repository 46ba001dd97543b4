import { AppError } from '../errors';
import * as openAiCompatible from './openai-compatible';
import { completeLocal, streamLocal } from './local-echo';
import type { RouteConfig } from './routes';
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
export async function complete(route: RouteConfig, request: ChatRequest): Promise<Completion> {
  assertAvailable(route);
  return route.kind === 'local' ? completeLocal(request) : openAiCompatible.complete(route, request);
}

export function stream(route: RouteConfig, request: ChatRequest): AsyncGenerator<StreamEvent> {
  assertAvailable(route);
  return route.kind === 'local' ? streamLocal(request) : openAiCompatible.stream(route, request);
}
