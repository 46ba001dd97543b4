import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dispatch } from '@/server/api/router';
import { answerBeforeNext } from '@/server/api/entry-guard';
import { createGuardedServer, serverTimeouts } from '@/server/api/entry-socket';
import { handleStripeWebhook } from '@/server/api/stripe-webhook';
import { handleMcp } from '@/server/mcp/server';
import { serveTrpc } from '@/server/trpc/http';
import { sendResponse, toRequest } from './node-http';

// The production entry's web path without Next: the guard and socket listeners of server/main.ts
// in front of the app's own edges, each reached as Next reaches it (a Web Request from node:http).
// e2e/edge.spec.ts checks the same answers against the production build, with Next behind the guard.
async function app(req: IncomingMessage, res: ServerResponse, appUrl: string): Promise<void> {
  const request = toRequest(req, appUrl);
  const { pathname } = new URL(request.url);
  if (pathname === '/mcp') return sendResponse(res, await handleMcp(request));
  if (pathname === '/api/webhooks/stripe') return sendResponse(res, await handleStripeWebhook(request));
  if (pathname.startsWith('/api/trpc/')) return sendResponse(res, await serveTrpc(request));
  return sendResponse(res, await dispatch(request));
}

export async function startEntry(
  appUrl = 'http://localhost:3999',
  timeouts = serverTimeouts,
): Promise<{ server: Server; port: number; url: string; close: () => Promise<void> }> {
  const server = createGuardedServer((req, res) => {
    if (answerBeforeNext(req, res)) return;
    // As server/main.ts's request log does for a handler that throws: a bare 500.
    app(req, res, appUrl).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  }, timeouts);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
