import { AppError, invalidRequest } from '../errors';
import { defineRoute, type Route } from './define';
import { errorResponse, newRequestId } from './http';
import { buildOpenApi } from './openapi';
import { managementRoutes } from './handlers';
import { ingestRoutes } from './routes/ingest';
import { otlpRoutes } from './routes/otlp';
import { retrievalRoutes } from './routes/retrieval';
import { isRetrievalPath, retrievalFromRequest } from './retrieval';
import { isOtlpTracesPath, otlpFromRequest } from './otlp';

const openApiRoute = defineRoute({
  method: 'GET',
  path: '/openapi.json',
  operationId: 'get_openapi',
  summary: 'This OpenAPI document',
  tag: 'Meta',
  auth: 'none',
  status: 200,
  handler: async () => openApiDocument(),
});

// Every /api/v1 route, in one list: the router and the OpenAPI document both read it. The
// management routes come from the operation table (server/operations); ingestion and retrieval
// have hot paths of their own (server/main.ts) and are listed here for `next dev` and the document.
export const routes: Route[] = [...managementRoutes, ...ingestRoutes, ...otlpRoutes, ...retrievalRoutes, openApiRoute];

let document: Record<string, unknown> | undefined;
export function openApiDocument(): Record<string, unknown> {
  document ??= buildOpenApi(routes);
  return document;
}

type Compiled = { route: Route; pattern: RegExp; names: string[] };
const compiled: Compiled[] = routes.map((route) => {
  const names: string[] = [];
  const source = route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  return { route, pattern: new RegExp(`^/api/v1${source}/?$`), names };
});

// A segment that is not valid percent-encoded UTF-8 names nothing: null, answered 400.
function decodePathSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

type Match = { route: Route; params: Record<string, string> } | { malformed: string } | { allowed: string[] } | null;

export function matchRoute(method: string, pathname: string): Match {
  const allowed: string[] = [];
  for (const { route, pattern, names } of compiled) {
    const match = pattern.exec(pathname);
    if (!match) continue;
    if (route.method !== method) {
      allowed.push(route.method);
      continue;
    }
    const params: Record<string, string> = {};
    for (const [i, name] of names.entries()) {
      const decoded = decodePathSegment(match[i + 1]);
      if (decoded === null) return { malformed: name };
      params[name] = decoded;
    }
    return { route, params };
  }
  return allowed.length ? { allowed } : null;
}

export async function dispatch(request: Request): Promise<Response> {
  const { pathname } = new URL(request.url);
  // Retrieval checks its key before anything about the path or query (as on the hot path).
  if (isRetrievalPath(pathname)) return retrievalFromRequest(request);
  // OTLP answers every method itself, in google.rpc.Status (as on the hot path).
  if (isOtlpTracesPath(pathname)) return otlpFromRequest(request);
  // HEAD is GET without the body (RFC 9110 9.3.2; Node sends no body for a HEAD). OPTIONS says
  // which methods the path has, as the 405 does.
  if (request.method === 'OPTIONS') return optionsFor(pathname);
  const found = matchRoute(request.method === 'HEAD' ? 'GET' : request.method, pathname);
  if (found && 'route' in found) return found.route.handle(request, found.params);
  const requestId = newRequestId();
  if (found && 'malformed' in found) {
    return errorResponse(
      invalidRequest('The path is not valid percent-encoded UTF-8.', [
        { path: found.malformed, message: 'Not valid percent-encoded UTF-8.' },
      ]),
      requestId,
    );
  }
  if (found) {
    return errorResponse(
      new AppError('method_not_allowed', `Use ${found.allowed.join(', ')} on this path.`),
      requestId,
      { allow: found.allowed.join(', ') },
    );
  }
  return errorResponse(new AppError('not_found', 'No such API route.'), requestId);
}

function optionsFor(pathname: string): Response {
  const found = matchRoute('OPTIONS', pathname);
  if (!found || !('allowed' in found))
    return errorResponse(new AppError('not_found', 'No such API route.'), newRequestId());
  const allow = [...new Set([...found.allowed, ...(found.allowed.includes('GET') ? ['HEAD'] : []), 'OPTIONS'])];
  return new Response(null, { status: 204, headers: { allow: allow.join(', '), 'cache-control': 'no-store' } });
}
