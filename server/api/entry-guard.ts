import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError, invalidRequest } from '../errors';
import { answerRequest, serverMethods } from './entry-socket';
import { matchRoute } from './router';

// The production entry's guard in front of Next's request handler (server/main.ts, web and all
// roles): requests Next would answer with a 500 or an empty 400 are answered here in the API's
// error envelope. Requests Node's parser refuses are answered by ./entry-socket.

// The methods Next's handler serves. Any other method Node parses (TRACE, PROPFIND, MKCOL, PURGE,
// SEARCH, QUERY, LOCK…) is a 405 here: Next answers TRACE with a 500 and the others with an empty 400.
const nextMethods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

// What each Next-served path answers (the exports of its app/**/route.ts); pages and static
// files answer GET and HEAD. /api/v1 paths are looked up in the router itself.
const allowByPrefix: [prefix: string, allow: string][] = [
  ['/api/trpc/', 'GET, POST'],
  ['/api/auth/', 'GET, POST'],
  ['/api/webhooks/stripe', 'POST'],
  ['/mcp', 'POST'],
  ['/oauth/authorize', 'GET, POST'],
  ['/oauth/token', 'POST'],
  ['/oauth/register', 'POST'],
  ['/oauth/revoke', 'POST'],
  ['/oauth/jwks', 'GET'],
  ['/.well-known/', 'GET'],
];
const pageMethods = 'GET, HEAD';

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

function isPercentEncodedUtf8(path: string): boolean {
  if (!path.includes('%')) return true;
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

// The request target as a path: the absolute form (`GET http://host/path`, which servers must
// accept) becomes its path and query; null for any other form (`*`, `host:port`, garbage).
function originForm(req: IncomingMessage): string | null {
  const url = req.url ?? '/';
  if (url.startsWith('/')) return url;
  if (!/^https?:\/\//i.test(url) || !URL.canParse(url)) return null;
  const { pathname, search } = new URL(url);
  req.url = `${pathname}${search}`;
  return req.url;
}

// The refusal for a request Next must not see, or null to let it through.
function refusal(req: IncomingMessage): AppError | null {
  const method = req.method ?? 'GET';
  const url = originForm(req);
  if (url === null) {
    if (req.url === '*' && method === 'OPTIONS') {
      return new AppError(
        'method_not_allowed',
        'OPTIONS * is not served: send OPTIONS to a path.',
        {},
        { allow: serverMethods },
      );
    }
    return invalidRequest('The request target must be a path starting with /.', [
      { path: 'target', message: 'Use the origin form (/path?query).' },
    ]);
  }
  const path = pathOf(url);
  if (!isPercentEncodedUtf8(path)) {
    return invalidRequest('The path is not valid percent-encoded UTF-8.', [
      { path: 'path', message: 'Not valid percent-encoded UTF-8.' },
    ]);
  }
  if (nextMethods.has(method)) return null;
  if (path === '/api/v1' || path.startsWith('/api/v1/')) {
    const found = matchRoute(method, path.length > 8 && path.endsWith('/') ? path.slice(0, -1) : path);
    if (!found || !('allowed' in found)) return new AppError('not_found', 'No such API route.');
    const allow = found.allowed.join(', ');
    return new AppError('method_not_allowed', `Use ${allow} on this path.`, {}, { allow });
  }
  const allow =
    allowByPrefix.find(
      ([prefix]) => path === prefix || path.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`),
    )?.[1] ?? pageMethods;
  return new AppError('method_not_allowed', `Use ${allow} on this path.`, {}, { allow });
}

/**
 * Answers the request here when Next must not see it (a target that is not a path, a path that
 * is not valid percent-encoded UTF-8, a method Next does not serve) and returns true; else returns
 * false and lets it through, making sure a body the handler stopped reading never holds the
 * connection once the response is sent (the next request on it would wait forever).
 */
export function answerBeforeNext(req: IncomingMessage, res: ServerResponse): boolean {
  const error = refusal(req);
  if (!error) {
    const socket = req.socket;
    res.once('finish', () => {
      if (req.complete) return;
      // Next destroys the request when a handler stops reading its body (a 413): the rest can no
      // longer be read, so the connection closes; a body nobody touched is read and dropped.
      if (req.destroyed) socket.destroySoon();
      else req.resume();
    });
    return false;
  }
  answerRequest(req, res, error);
  return true;
}
