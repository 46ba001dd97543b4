import type { Db } from '@/db/client';
import { isOwnOrigin } from '../http/loopback';
import { clientIpFromHeaders } from '../credentials/client-ip';
import { config } from '../config';
import {
  checkAuthorizeRequest,
  canonicalQuery,
  consentTokenValid,
  errorRedirect,
  hasConsent,
  issueCode,
  rememberConsent,
  type AuthorizeCheck,
} from './authorize';
import { OAuthError, oauthJson } from './errors';
import { checkParams, oauthEndpoint, readText, readForm } from './http';
import { authorizationServerMetadata, isBuiltInIssuer, protectedResourceMetadata } from './issuer';
import { jwksDocument } from './keys';
import { takeOAuthLimit } from './limits';
import { parseRegistrationBody, registerClient } from './register';
import { revokeEndpoint, tokenEndpoint } from './token';

// The HTTP side of the built-in authorization server; app/oauth/** and app/.well-known/** are thin
// wrappers around these. With an external issuer (OAUTH_ISSUER set to another URL) they answer 404.

const notServed = () =>
  oauthJson(
    404,
    { error: 'not_found', error_description: 'This deployment uses an external authorization server (OAUTH_ISSUER).' },
    { 'cache-control': 'no-store' },
  );

const publicJson = (body: unknown) =>
  Response.json(body, { headers: { 'cache-control': 'public, max-age=300', 'access-control-allow-origin': '*' } });

export function metadataResponse(): Response {
  return isBuiltInIssuer() ? publicJson(authorizationServerMetadata()) : notServed();
}

export function protectedResourceResponse(which: 'api' | 'mcp'): Response {
  return publicJson(protectedResourceMetadata(which));
}

export async function jwksResponse(): Promise<Response> {
  if (!isBuiltInIssuer()) return notServed();
  return oauthEndpoint('oauth.jwks', async () =>
    Response.json(await jwksDocument(), {
      headers: { 'cache-control': 'public, max-age=60', 'access-control-allow-origin': '*' },
    }),
  );
}

// Token, revocation and registration serve public clients, which authenticate with nothing a
// browser keeps (no cookies, no client secrets): any origin may call them, so MCP clients running
// in a browser can sign in. Every answer carries the CORS header; OPTIONS answers the preflight.
// The discovery documents and the JWKS (GET) are public too. Their preflight allows the header the
// MCP SDK sends with its discovery requests (MCP-Protocol-Version), as /mcp's does.
function withCors(response: Response): Response {
  response.headers.set('access-control-allow-origin', '*');
  return response;
}

export function corsPreflight(method: 'GET' | 'POST' = 'POST'): Response {
  return new Response(null, {
    status: 204,
    headers: {
      'access-control-allow-origin': '*',
      'access-control-allow-methods': method === 'GET' ? 'GET, HEAD' : 'POST',
      'access-control-allow-headers': 'authorization, content-type, accept, mcp-protocol-version',
      'access-control-max-age': '600',
    },
  });
}

export async function tokenRoute(db: Db, request: Request): Promise<Response> {
  if (!isBuiltInIssuer()) return notServed();
  return withCors(
    await oauthEndpoint('oauth.token', async () => {
      await takeOAuthLimit(db, 'tokenPerIp', clientIpFromHeaders(request.headers));
      return tokenEndpoint(db, await readForm(request), request.headers.get('authorization'));
    }),
  );
}

export async function revokeRoute(db: Db, request: Request): Promise<Response> {
  if (!isBuiltInIssuer()) return notServed();
  return withCors(
    await oauthEndpoint('oauth.revoke', async () => {
      await takeOAuthLimit(db, 'tokenPerIp', clientIpFromHeaders(request.headers));
      return revokeEndpoint(db, await readForm(request));
    }),
  );
}

export async function registerRoute(db: Db, request: Request): Promise<Response> {
  if (!isBuiltInIssuer()) return notServed();
  return withCors(
    await oauthEndpoint('oauth.register', async () => {
      await takeOAuthLimit(db, 'registrationsPerIp', clientIpFromHeaders(request.headers));
      return registerClient(db, await parseRegistrationBody(request));
    }),
  );
}

export const methodNotAllowed = (allow: string) =>
  oauthJson(405, { error: 'invalid_request', error_description: `Use ${allow}.` }, { allow });

// --- /oauth/authorize ------------------------------------------------------------------------

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

// The error page for a request that must not be redirected (unknown client, unregistered redirect URI).
function errorPage(title: string, message: string, status = 400): Response {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Promptloop</title>
<style>
body{margin:0;min-height:100vh;display:grid;place-items:center;background:#f6f7f9;color:#111827;font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif}
main{max-width:440px;margin:24px;padding:32px;background:#fff;border:1px solid #e5e7eb;border-radius:12px;box-shadow:0 1px 2px rgba(0,0,0,.04)}
.brand{display:flex;gap:8px;align-items:center;font-weight:600;margin-bottom:24px}
.mark{display:inline-grid;place-items:center;width:28px;height:28px;border-radius:7px;background:#4f46e5;color:#fff;font-weight:700}
h1{font-size:20px;margin:0 0 8px}p{margin:0 0 16px;color:#4b5563}a{color:#4f46e5}
</style></head>
<body><main role="main"><div class="brand"><span class="mark" aria-hidden="true">P</span>Promptloop</div>
<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>
<p>Nothing was shared with the application. Start the sign-in again from the application, or <a href="/">go to Promptloop</a>.</p>
</main></body></html>`;
  return new Response(html, {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      'content-security-policy': "frame-ancestors 'none'",
    },
  });
}

const redirect = (location: string) =>
  new Response(null, { status: 302, headers: { location, 'cache-control': 'no-store' } });

export function consentPath(all: URLSearchParams): string {
  return `/oauth/consent?${canonicalQuery(all)}`;
}

function signInRedirect(all: URLSearchParams): Response {
  const signIn = new URL('/sign-in', config().appUrl);
  signIn.searchParams.set('callbackUrl', consentPath(all));
  return redirect(signIn.toString());
}

function checked(check: AuthorizeCheck): Response | null {
  if (check.kind === 'error_page') return errorPage(check.title, check.message);
  if (check.kind === 'error_redirect') return redirect(check.location);
  return null;
}

// GET: check the request; signed out → sign-in, then the consent page; consent remembered → the code.
export async function authorizeRoute(db: Db, request: Request, userId: string | null): Promise<Response> {
  if (!isBuiltInIssuer()) return notServed();
  const all = new URL(request.url).searchParams;
  const check = await checkAuthorizeRequest(db, all);
  const refused = checked(check);
  if (refused || check.kind !== 'ok') return refused!;
  if (!userId) return signInRedirect(all);
  if (await hasConsent(db, userId, check.request)) return redirect(await issueCode(db, userId, check.request));
  return redirect(`${config().appUrl}${consentPath(all)}`);
}

// POST from the consent page: Allow → remember the consent and send the code; Deny → access_denied.
export async function decisionRoute(db: Db, request: Request, userId: string | null): Promise<Response> {
  if (!isBuiltInIssuer()) return notServed();
  const origin = request.headers.get('origin');
  if (origin === null || !isOwnOrigin(origin, config().appUrl)) {
    return errorPage(
      'Request refused',
      `The consent form was not sent from Promptloop at ${new URL(config().appUrl).origin} (APP_URL).`,
      403,
    );
  }
  let all: URLSearchParams;
  try {
    const type = request.headers.get('content-type')?.split(';')[0].trim().toLowerCase();
    if (type !== 'application/x-www-form-urlencoded') throw new OAuthError('invalid_request', 'form expected');
    all = new URLSearchParams(await readText(request, 16 * 1024));
    checkParams([...all].filter(([name]) => name === 'decision' || name === 'consent_token'));
  } catch {
    return errorPage('Request refused', 'The consent form could not be read. Start again from the application.');
  }
  const check = await checkAuthorizeRequest(db, all);
  const refused = checked(check);
  if (refused || check.kind !== 'ok') return refused!;
  if (!userId) return signInRedirect(all);
  if (!consentTokenValid(all.get('consent_token') ?? '', userId, all)) {
    return errorPage(
      'This request has expired',
      'The consent page was open for too long or was not yours. Start the sign-in again from the application.',
    );
  }
  const decision = all.get('decision');
  if (decision === 'deny')
    return redirect(errorRedirect(check.request, 'access_denied', 'The person denied the request.'));
  if (decision !== 'allow') return errorPage('Request refused', 'Choose Allow or Deny.');
  await rememberConsent(db, userId, check.request);
  return redirect(await issueCode(db, userId, check.request));
}
