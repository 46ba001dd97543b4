import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CliError, exitCodes } from './exit';

// The loopback redirect of the CLI's login (see oauth.ts): one random port on 127.0.0.1.

type CallbackResult = { code: string; redirectUri: string };

const page = (title: string, text: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>` +
  `<body style="font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;color:#1f2328"><h1>${title}</h1><p>${text}</p></body></html>`;

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * Listens on 127.0.0.1 on a random port for the one redirect to /callback. Resolves with the code
 * once `state` matches and `iss` (RFC 9207) is the expected issuer; rejects on an error redirect.
 * A request with a wrong state is answered 400 and ignored (it is not our browser).
 */
export async function startLoopback(
  expected: { state: string; issuer: string; issRequired: boolean },
  timeoutMs: number,
) {
  let server: Server;
  let settle!: { resolve: (value: CallbackResult) => void; reject: (error: Error) => void };
  const result = new Promise<CallbackResult>((resolve, reject) => (settle = { resolve, reject }));
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') return void res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
    const q = url.searchParams;
    const html = (status: number, title: string, text: string) =>
      res
        .writeHead(status, {
          'content-type': 'text/html; charset=utf-8',
          'cache-control': 'no-store',
          connection: 'close',
        })
        .end(page(title, text));
    if (q.get('state') !== expected.state)
      return void html(
        400,
        'Login failed',
        'This sign-in response does not belong to the running <code>promptloop login</code>.',
      );
    const iss = q.get('iss');
    if (iss !== null ? iss !== expected.issuer : expected.issRequired) {
      html(400, 'Login failed', 'The response came from an unexpected authorization server.');
      return void settle.reject(
        new CliError(
          `The authorization response names issuer ${iss ?? '(none)'}, expected ${expected.issuer}; login aborted.`,
          exitCodes.apiError,
        ),
      );
    }
    const error = q.get('error');
    if (error) {
      const description = q.get('error_description');
      html(
        400,
        error === 'access_denied' ? 'Access denied' : 'Login failed',
        `${escapeHtml((description ?? error).replace(/[.\s]+$/, ''))}. You can close this window.`,
      );
      const message =
        error === 'access_denied'
          ? 'Access was denied in the browser; not logged in.'
          : `Login failed: ${error}${description ? ` (${description.replace(/[.\s]+$/, '')})` : ''}.`;
      return void settle.reject(new CliError(message, exitCodes.notLoggedIn));
    }
    const code = q.get('code');
    if (!code) return void html(400, 'Login failed', 'The response carries no authorization code.');
    html(200, 'Logged in', 'The Promptloop CLI is logged in. You can close this window and go back to the terminal.');
    settle.resolve({ code, redirectUri });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  const timer = setTimeout(
    () =>
      settle.reject(
        new CliError(
          `No sign-in within ${Math.round(timeoutMs / 1000)} s; run \`promptloop login\` again.`,
          exitCodes.notLoggedIn,
        ),
      ),
    timeoutMs,
  );
  // Stop listening once settled; a page being sent still finishes (its connection closes after it).
  const wait = result.finally(() => {
    clearTimeout(timer);
    server.close();
    server.closeIdleConnections();
  });
  return { redirectUri, wait };
}
