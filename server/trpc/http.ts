import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { config } from '@/server/config';
import { AppError, invalidRequest, isAppError } from '@/server/errors';
import { z } from 'zod';
import { assertStrictQuery, findDuplicateKey, maxBodyBytes } from '@/server/api/strict-input';
import { readBody, utf8Text } from '@/server/http/body';
import { clientIpFromHeaders } from '@/server/credentials/client-ip';
import { isOwnOrigin } from '@/server/http/loopback';
import type { Actor } from '@/server/context';
import { appRouter } from './root';
import { createTrpcContext, logTrpcError, toTrpcError } from './init';

// API.md "Input hygiene": at most 10 calls per batch (the client links batch at most 10 too).
const maxBatchCalls = 10;

// Mutations are POSTs. A browser always sends Origin on a POST, so a foreign or opaque ("null")
// Origin, or Sec-Fetch-Site: cross-site, is another site driving the user's session: refused. Without
// Origin, a Referer from another page than ours (or one that is not a URL) is refused the same way.
// A request with none of these headers is not from a browser (curl, scripts, tests) and carries no
// ambient session of a victim, so it goes on to the usual session check.
function crossSiteRefusal(req: Request): AppError | null {
  if (req.method !== 'POST') return null;
  const origin = req.headers.get('origin');
  const referer = req.headers.get('referer');
  const { appUrl } = config();
  const crossSite =
    req.headers.get('sec-fetch-site') === 'cross-site' ||
    (origin !== null && !isOwnOrigin(origin, appUrl)) ||
    (origin === null && referer !== null && !isOwnOrigin(originOf(referer), appUrl));
  if (!crossSite) return null;
  const expectedOrigin = new URL(appUrl).origin;
  return new AppError(
    'forbidden',
    `Requests from other sites are not accepted: this server expects pages from ${expectedOrigin} (APP_URL). Open the dashboard there, or set APP_URL to the address you use.`,
    { reason: 'cross_site', expectedOrigin },
  );
}

// The origin of a Referer, or "null" when it is not a URL (which no page of ours sends).
function originOf(referer: string): string {
  try {
    return new URL(referer).origin;
  } catch {
    return 'null';
  }
}

function forwarded(req: Request, body: Buffer | null): Request {
  const headers = new Headers(req.headers);
  headers.delete('content-length');
  return new Request(req.url, {
    method: req.method,
    headers,
    body: body ? new Uint8Array(body) : null,
    signal: req.signal,
  });
}

// A field given twice is refused as on REST (API.md: request bodies are strict), not read as the
// last of the two. JSON that does not parse is left to tRPC's own parse error.
function assertNoRepeatedField(text: string): void {
  try {
    JSON.parse(text);
  } catch {
    return;
  }
  const duplicate = findDuplicateKey(text);
  if (duplicate !== null)
    throw invalidRequest('The request body repeats a field.', [
      { path: duplicate, message: 'Field given more than once.' },
    ]);
}

// The query string tRPC's links send (`?batch=1`, and a query's `input`): anything else, a poison
// string or a parameter given twice is refused as on REST (API.md: query strings are strict, on
// every surface).
const trpcQuery = z.strictObject({ batch: z.string().optional(), input: z.string().optional() });

function queryRefusal(req: Request): AppError | null {
  try {
    assertStrictQuery(new URL(req.url).search, trpcQuery);
    return null;
  } catch (error) {
    if (isAppError(error)) return error;
    throw error;
  }
}

// A refusal is raised while tRPC builds the context: every call of the batch answers with it, in
// tRPC's error shape and status, and no procedure runs. `session.actor` stands in for the
// next-auth session where there is no Next request around (tests); the route passes nothing.
export async function serveTrpc(req: Request, session: { actor?: Actor | null } = {}): Promise<Response> {
  let refusal = crossSiteRefusal(req) ?? queryRefusal(req);
  let request = req;
  if (req.method === 'POST') {
    // At most 1 MiB is read, so tRPC's own reader only ever sees a bounded, already buffered body.
    let body: Buffer | null = null;
    if (!refusal) {
      try {
        body = await readBody(req, { limit: maxBodyBytes });
        const text = utf8Text(body); // bytes that are not UTF-8 are refused, never stored as U+FFFD
        assertNoRepeatedField(text);
      } catch (error) {
        if (!isAppError(error)) throw error;
        refusal = error;
      }
    }
    request = forwarded(req, body);
  }
  const clientIp = clientIpFromHeaders(req.headers);
  return fetchRequestHandler({
    endpoint: '/api/trpc',
    req: request,
    router: appRouter,
    maxBatchSize: maxBatchCalls,
    createContext: () => {
      if (refusal) throw toTrpcError(refusal);
      return createTrpcContext({ actor: session.actor, clientIp });
    },
    onError: logTrpcError,
    // Retry-After of a 429 or 503; Connection: close after a body too large (its rest is never read).
    responseMeta({ errors }) {
      const headers = new Headers();
      const limited = errors
        .map((error) => error.cause)
        .find((cause) => isAppError(cause) && cause.headers['retry-after']);
      if (isAppError(limited)) headers.set('retry-after', limited.headers['retry-after']);
      if (errors.some((error) => error.code === 'PAYLOAD_TOO_LARGE')) headers.set('connection', 'close');
      return { headers };
    },
  });
}
