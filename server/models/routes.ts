import { z } from 'zod';
import { AppError } from '../errors';
import type { ModelRoute } from './schemas';

export const localRouteId = 'local/echo';
export const localJudgeRouteId = 'local/judge';

// Which request field carries the output token limit. OpenAI deprecated `max_tokens` in favour of
// `max_completion_tokens` (its reasoning models refuse the old one); Ollama and LM Studio read only
// `max_tokens`. So OpenAI routes send the new field, other providers the old one, unless a
// MODEL_ROUTES entry says otherwise.
const maxTokensFields = ['max_tokens', 'max_completion_tokens'] as const;
type MaxTokensField = (typeof maxTokensFields)[number];

// Everything needed to reach one model; `kind` picks the client.
export type RouteConfig = {
  id: string;
  provider: string;
  name: string;
  modelId: string;
  kind: 'local' | 'openai-compatible';
  baseUrl: string;
  apiKey: string | undefined;
  available: boolean;
  maxTokensField: MaxTokensField;
};

export const localRoute: RouteConfig = {
  id: localRouteId,
  provider: 'local',
  name: 'Local deterministic (no provider)',
  modelId: 'echo',
  kind: 'local',
  baseUrl: '',
  apiKey: undefined,
  available: true,
  maxTokensField: 'max_tokens',
};

// Deterministic grader for judge scoring with no provider (server/models/local-judge.ts).
const localJudgeRoute: RouteConfig = {
  ...localRoute,
  id: localJudgeRouteId,
  name: 'Local deterministic judge (no provider)',
  modelId: 'judge',
};

const extraRouteSchema = z.array(
  z.strictObject({
    id: z.string().min(1),
    provider: z.string().min(1),
    name: z.string().min(1),
    baseUrl: z.url(),
    apiKeyEnv: z.string().min(1).optional(),
    modelId: z.string().min(1),
    maxTokensField: z.enum(maxTokensFields).optional(),
  }),
);

function isLocalUrl(url: string): boolean {
  try {
    const host = new URL(url).hostname;
    return host === 'localhost' || host === '127.0.0.1' || host === '[::1]' || host === '::1';
  } catch {
    return false;
  }
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

function openAiCompatible(
  route: {
    id: string;
    provider: string;
    name: string;
    baseUrl: string;
    modelId: string;
    maxTokensField?: MaxTokensField;
  },
  apiKey: string | undefined,
): RouteConfig {
  const baseUrl = trimSlash(route.baseUrl);
  return {
    ...route,
    baseUrl,
    kind: 'openai-compatible',
    apiKey,
    available: Boolean(apiKey) || isLocalUrl(baseUrl),
    maxTokensField: route.maxTokensField ?? (route.provider === 'openai' ? 'max_completion_tokens' : 'max_tokens'),
  };
}

// Read from the environment on every call: cheap, and a changed key shows up without a restart.
export function configuredRoutes(env: Record<string, string | undefined> = process.env): RouteConfig[] {
  const routes: RouteConfig[] = [localRoute, localJudgeRoute];
  const baseUrl = env.OPENAI_BASE_URL || 'https://api.openai.com/v1';
  const models = (env.OPENAI_MODELS ?? 'gpt-4o-mini,gpt-4o')
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean);
  for (const modelId of models) {
    routes.push(
      openAiCompatible(
        { id: `openai/${modelId}`, provider: 'openai', name: `OpenAI ${modelId}`, baseUrl, modelId },
        env.OPENAI_API_KEY || undefined,
      ),
    );
  }
  if (env.MODEL_ROUTES) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(env.MODEL_ROUTES);
    } catch {
      throw new Error('MODEL_ROUTES is not valid JSON.');
    }
    const result = extraRouteSchema.safeParse(parsed);
    if (!result.success) throw new Error(`MODEL_ROUTES is not valid: ${result.error.message}`);
    for (const route of result.data) {
      const { apiKeyEnv, ...rest } = route;
      routes.push(openAiCompatible(rest, apiKeyEnv ? env[apiKeyEnv] || undefined : undefined));
    }
  }
  // A later entry with the same id replaces an earlier one.
  return [...new Map(routes.map((r) => [r.id, r])).values()];
}

export function findRoute(id: string, routes: RouteConfig[] = configuredRoutes()): RouteConfig | undefined {
  return routes.find((route) => route.id === id);
}

// `routes`: the route table read once by a caller that checks many contents (an import).
export function requireRoute(
  id: string,
  path = 'modelRouteId',
  routes: RouteConfig[] = configuredRoutes(),
): RouteConfig {
  const route = findRoute(id, routes);
  if (!route)
    throw new AppError('invalid_request', `No model route "${id}" is configured.`, {
      issues: [{ path, message: 'Unknown model route.' }],
    });
  return route;
}

// A route asked to judge: it must exist and be able to grade. local/echo repeats its input, so every
// verdict asked of it would fail, each case still charged.
export function requireJudgeRoute(id: string, path = 'judgeModelRouteId'): RouteConfig {
  const route = requireRoute(id, path);
  if (route.id === localRouteId)
    throw new AppError('invalid_request', `The model route "${route.id}" repeats its input and cannot judge.`, {
      issues: [{ path, message: 'This route cannot grade; use local/judge or a provider route.' }],
    });
  return route;
}

export function toModelRoute(route: RouteConfig): ModelRoute {
  return {
    id: route.id,
    provider: route.provider,
    modelId: route.modelId,
    name: route.name,
    available: route.available,
  };
}
