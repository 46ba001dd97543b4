import { NextRequest } from 'next/server';
import { errorResponse, newRequestId, toAppError } from '@/server/api/http';
import { invalidRequest } from '@/server/errors';
import { readBody } from '@/server/http/body';

// next-auth reads a POST body whole (`req.text()`, `req.json()`) with no limit, so its routes get
// the one bounded reader of every other edge first: a sign-in, sign-out or CSRF form is a few
// hundred bytes, and anything over 16 KiB (declared, chunked or endless) is `413 payload_too_large`
// before next-auth sees it; a JSON body that is not an object is `400 invalid_request`.
const maxAuthBodyBytes = 16 * 1024;

function parseJson(body: Buffer): void {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    value = undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalidRequest('The body is not a JSON object.', [
      { path: 'body', message: 'Send a JSON object, or a form.' },
    ]);
}

type RouteHandler = (req: NextRequest, context: { params: Promise<{ nextauth: string[] }> }) => Promise<Response>;

export function withBoundedBody(handler: RouteHandler): RouteHandler {
  return async (req, context) => {
    if (req.method !== 'POST') return handler(req, context);
    let body: Buffer;
    try {
      body = await readBody(req, { limit: maxAuthBodyBytes });
      // next-auth parses a JSON body itself and throws (a 500) on anything else.
      if (req.headers.get('content-type')?.includes('application/json')) parseJson(body);
    } catch (error) {
      return errorResponse(toAppError(error), newRequestId());
    }
    return handler(
      new NextRequest(req.url, { method: req.method, headers: req.headers, body: new Uint8Array(body) }),
      context,
    );
  };
}
