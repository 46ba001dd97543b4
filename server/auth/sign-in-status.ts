// next-auth answers every refused credentials sign-in with 401 and the error code in the returned
// URL. A sign-in refused by a rate limit answers 429 with Retry-After instead (API.md "Input
// hygiene"); the code stays in the URL, so the form reads it the same way.
const rateLimitedSignIn = 'rate_limited';

// authorize() throws `rate_limited:<seconds>`; this is the only place that reads the seconds.
export function rateLimitedSignInError(retryAfterSeconds: number): Error {
  return new Error(`${rateLimitedSignIn}:${retryAfterSeconds}`);
}

type RouteHandler = (req: Request, context: { params: Promise<{ nextauth: string[] }> }) => Promise<Response>;

export function withSignInStatus(handler: RouteHandler): RouteHandler {
  return async (req, context) => {
    const response = await handler(req, context);
    if (
      req.method !== 'POST' ||
      response.status !== 401 ||
      !new URL(req.url).pathname.endsWith('/callback/credentials')
    )
      return response;
    const body = (await response
      .clone()
      .json()
      .catch(() => null)) as { url?: unknown } | null;
    if (typeof body?.url !== 'string') return response;
    const error = new URL(body.url, req.url).searchParams.get('error') ?? '';
    const match = new RegExp(`^${rateLimitedSignIn}:(\\d+)$`).exec(error);
    if (!match) return response;
    const headers = new Headers(response.headers);
    headers.set('retry-after', match[1]);
    return new Response(response.body, { status: 429, headers });
  };
}
