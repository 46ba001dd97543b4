// Loopback names (Q1): on a developer's machine `localhost`, `127.0.0.1` and `[::1]` reach the same
// server, but cookies, next-auth's redirects and the origin check all follow APP_URL. A browser that
// opens the other name is sent to APP_URL's; scripts and API clients are never redirected.

const loopbackHosts = new Set(['localhost', '127.0.0.1', '[::1]']);

function isLoopbackHost(hostname: string): boolean {
  return loopbackHosts.has(hostname) || /^127(\.\d{1,3}){3}$/.test(hostname) || hostname.endsWith('.localhost');
}

function parse(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

/** An origin served by this very server: APP_URL's, or another loopback name on the same scheme and port when APP_URL is loopback. */
export function isOwnOrigin(origin: string, appUrl: string): boolean {
  const app = parse(appUrl);
  const other = parse(origin);
  if (!app || !other) return false;
  if (other.origin === app.origin) return true;
  return (
    other.protocol === app.protocol &&
    other.port === app.port &&
    isLoopbackHost(app.hostname) &&
    isLoopbackHost(other.hostname)
  );
}

// Paths that machines call (APIs, OAuth endpoints, MCP, assets) answer on every name as they are.
const machinePaths = /^\/(api|mcp|oauth\/(token|register|revoke|jwks)|\.well-known|_next)(\/|$)/;

/**
 * Where a browser's page request should go instead, or null. Only GET and HEAD navigations (Accept
 * names text/html) that reach this server through a loopback name other than APP_URL's.
 */
export function loopbackRedirect(
  request: { method?: string; url?: string; host?: string; accept?: string },
  appUrl: string,
): string | null {
  if (request.method !== 'GET' && request.method !== 'HEAD') return null;
  if (!request.host || !request.accept?.includes('text/html')) return null;
  const path = request.url ?? '/';
  if (!path.startsWith('/') || path.startsWith('//') || machinePaths.test(path)) return null;
  const app = parse(appUrl);
  const reached = parse(`${app?.protocol ?? 'http:'}//${request.host}`);
  if (!app || !reached || reached.host === app.host) return null;
  if (!isOwnOrigin(reached.origin, appUrl)) return null;
  return `${app.origin}${path}`;
}
