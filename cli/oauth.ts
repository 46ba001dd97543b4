import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CliError, exitCodes, notLoggedIn } from './exit';
import type { StoredTokens } from './config';

// OAuth for the CLI (API.md "Built-in authorization server", "CLI"): the public client
// `promptloop-cli`, authorization code + S256 PKCE with a loopback redirect on a random port,
// rotating refresh tokens, RFC 7009 revocation. Endpoints come from the server's metadata.

const clientId = 'promptloop-cli';
const scope = 'management';

export type ServerMetadata = {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  revocationEndpoint: string | null;
  issParameterSupported: boolean;
  /** The API's resource indicator (RFC 8707): `<url>/api/v1`. */
  resource: string;
};

type Json = Record<string, unknown>;

async function getJson(url: string, what: string): Promise<{ status: number; body: Json | null }> {
  let response: Response;
  try {
    response = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(15_000) });
  } catch (error) {
    throw new CliError(`Cannot reach ${url} (${what}): ${(error as Error).message}`, exitCodes.apiError);
  }
  const text = await response.text();
  let body: Json | null = null;
  try {
    const parsed = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Json;
  } catch {
    body = null;
  }
  return { status: response.status, body };
}

// RFC 8414 section 3.1: the well-known segment goes between the host and the issuer's path.
function authorizationServerMetadataUrl(issuer: string): string {
  const url = new URL(issuer);
  return `${url.origin}/.well-known/oauth-authorization-server${url.pathname.replace(/\/+$/, '')}`;
}

const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/**
 * The protected resource metadata (RFC 9728) of `<url>/api/v1` names the resource and its
 * authorization server; the authorization server's RFC 8414 metadata gives the endpoints, and its
 * `issuer` must be the one named. A server without resource metadata is its own issuer at `<url>`.
 */
export async function discover(url: string): Promise<ServerMetadata> {
  let resource = `${url}/api/v1`;
  let issuer: string | null = null;
  const resourceMetadata = await getJson(`${url}/.well-known/oauth-protected-resource`, 'protected resource metadata');
  if (resourceMetadata.status === 200 && resourceMetadata.body) {
    resource = str(resourceMetadata.body.resource) ?? resource;
    const servers = resourceMetadata.body.authorization_servers;
    if (Array.isArray(servers)) issuer = str(servers[0]);
  }
  const metadataUrl = issuer ? authorizationServerMetadataUrl(issuer) : `${url}/.well-known/oauth-authorization-server`;
  const metadata = await getJson(metadataUrl, 'authorization server metadata');
  if (metadata.status !== 200 || !metadata.body)
    throw new CliError(
      `${metadataUrl} answered ${metadata.status}: the server does not publish OAuth metadata, so the CLI cannot log in.`,
      exitCodes.apiError,
    );
  const m = metadata.body;
  const metaIssuer = str(m.issuer);
  if (!metaIssuer || (issuer && metaIssuer !== issuer))
    throw new CliError(
      `${metadataUrl} names issuer ${String(m.issuer)}, expected ${issuer ?? 'an issuer'}; refusing to log in.`,
      exitCodes.apiError,
    );
  const authorizationEndpoint = str(m.authorization_endpoint);
  const tokenEndpoint = str(m.token_endpoint);
  if (!authorizationEndpoint || !tokenEndpoint)
    throw new CliError(`${metadataUrl} lacks authorization_endpoint or token_endpoint.`, exitCodes.apiError);
  const methods = m.code_challenge_methods_supported;
  if (Array.isArray(methods) && !methods.includes('S256'))
    throw new CliError(`${metaIssuer} does not support S256 PKCE; refusing to log in.`, exitCodes.apiError);
  return {
    issuer: metaIssuer,
    authorizationEndpoint,
    tokenEndpoint,
    revocationEndpoint: str(m.revocation_endpoint),
    issParameterSupported: m.authorization_response_iss_parameter_supported === true,
    resource,
  };
}

const base64url = (bytes: Buffer) => bytes.toString('base64url');

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = base64url(randomBytes(32));
  return { verifier, challenge: base64url(createHash('sha256').update(verifier).digest()) };
}

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
        escapeHtml(description ?? error) + '. You can close this window.',
      );
      const message =
        error === 'access_denied'
          ? 'Access was denied in the browser; not logged in.'
          : `Login failed: ${error}${description ? ` (${description})` : ''}.`;
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

export function authorizationUrl(
  metadata: ServerMetadata,
  options: { redirectUri: string; state: string; challenge: string },
): string {
  const url = new URL(metadata.authorizationEndpoint);
  const params: Record<string, string> = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: options.redirectUri,
    code_challenge: options.challenge,
    code_challenge_method: 'S256',
    state: options.state,
    scope,
    resource: metadata.resource,
  };
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  return url.toString();
}

type TokenAnswer = { ok: true; tokens: Json } | { ok: false; status: number; error: string; description: string };

async function postForm(endpoint: string, form: Record<string, string>): Promise<TokenAnswer> {
  let response: Response;
  try {
    response = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form).toString(),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new CliError(`Cannot reach ${endpoint}: ${(error as Error).message}`, exitCodes.apiError);
  }
  const text = await response.text();
  let body: Json = {};
  try {
    body = JSON.parse(text) ?? {};
  } catch {
    body = {};
  }
  if (response.ok) return { ok: true, tokens: body };
  return {
    ok: false,
    status: response.status,
    error: String(body.error ?? `http_${response.status}`),
    description: String(body.error_description ?? ''),
  };
}

function toStored(
  metadata: Pick<ServerMetadata, 'issuer' | 'tokenEndpoint' | 'revocationEndpoint' | 'resource'>,
  body: Json,
  previousRefresh: string | null,
): StoredTokens {
  const accessToken = str(body.access_token);
  if (!accessToken) throw new CliError('The token endpoint answered without an access_token.', exitCodes.apiError);
  const expiresIn = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 3600;
  return {
    issuer: metadata.issuer,
    clientId,
    resource: metadata.resource,
    tokenEndpoint: metadata.tokenEndpoint,
    revocationEndpoint: metadata.revocationEndpoint,
    accessToken,
    // Rotation: the answer carries the new refresh token; without one the old stays valid (RFC 6749 6).
    refreshToken: str(body.refresh_token) ?? previousRefresh,
    expiresAt: Date.now() + expiresIn * 1000,
    scope: str(body.scope) ?? scope,
  };
}

export async function exchangeCode(
  metadata: ServerMetadata,
  code: string,
  redirectUri: string,
  verifier: string,
): Promise<StoredTokens> {
  const answer = await postForm(metadata.tokenEndpoint, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: redirectUri,
    client_id: clientId,
    code_verifier: verifier,
    resource: metadata.resource,
  });
  if (!answer.ok)
    throw new CliError(
      `The token endpoint refused the code: ${answer.error}${answer.description ? ` (${answer.description})` : ''}.`,
      exitCodes.notLoggedIn,
    );
  return toStored(metadata, answer.tokens, null);
}

/** Trades the refresh token for new tokens. A refused grant means the login is gone: exit 3. */
export async function refresh(tokens: StoredTokens): Promise<StoredTokens> {
  if (!tokens.refreshToken)
    throw notLoggedIn('The access token expired and there is no refresh token. Run `promptloop login`.');
  const answer = await postForm(tokens.tokenEndpoint, {
    grant_type: 'refresh_token',
    refresh_token: tokens.refreshToken,
    client_id: tokens.clientId,
    resource: tokens.resource,
  });
  if (answer.ok) return toStored(tokens, answer.tokens, tokens.refreshToken);
  if (answer.status === 400 || answer.status === 401)
    throw notLoggedIn(`The stored login was revoked or has expired (${answer.error}). Run \`promptloop login\`.`);
  throw new CliError(
    `Refreshing the access token failed: ${answer.status} ${answer.error}${answer.description ? ` (${answer.description})` : ''}.`,
    exitCodes.apiError,
  );
}

/** RFC 7009: revokes the refresh token (and with it the access tokens of its family). */
export async function revoke(tokens: StoredTokens): Promise<{ ok: boolean; message: string }> {
  if (!tokens.revocationEndpoint) return { ok: false, message: 'the server has no revocation endpoint' };
  const token = tokens.refreshToken ?? tokens.accessToken;
  try {
    const answer = await postForm(tokens.revocationEndpoint, {
      token,
      token_type_hint: tokens.refreshToken ? 'refresh_token' : 'access_token',
      client_id: tokens.clientId,
    });
    return answer.ok ? { ok: true, message: 'revoked' } : { ok: false, message: `${answer.status} ${answer.error}` };
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
}

/** Where the bearer token comes from: the stored login (cli/api.ts) or a service account's client credentials (below). */
export interface TokenSource {
  /** An access token that does not expire within a minute. */
  current(): Promise<string>;
  /** A new access token after `stale` was refused (401); a refusal of the credentials themselves is exit 3. */
  renew(stale: string): Promise<string>;
  /** What they are ('the stored login'), and what to do when the API refuses them for good. */
  readonly description: string;
  readonly refusedHint: string;
}

/**
 * A service account (PROMPTLOOP_CLIENT_ID and PROMPTLOOP_CLIENT_SECRET): each run gets its own access
 * token with the client_credentials grant (client_secret_post) and keeps it in memory only, so nothing
 * is written to the config directory. Refused credentials (wrong or revoked) are exit 3.
 */
export class ClientCredentials implements TokenSource {
  readonly description = 'the service account';
  readonly refusedHint =
    'Check PROMPTLOOP_CLIENT_ID and PROMPTLOOP_CLIENT_SECRET, and that the service account is not revoked.';
  private token: { value: string; expiresAt: number } | null = null;

  constructor(
    private readonly url: string,
    private readonly clientId: string,
    private readonly clientSecret: string,
  ) {}

  async current(): Promise<string> {
    if (this.token && this.token.expiresAt - 60_000 > Date.now()) return this.token.value;
    return this.request();
  }

  async renew(stale: string): Promise<string> {
    if (this.token && this.token.value !== stale) return this.token.value;
    return this.request();
  }

  private async request(): Promise<string> {
    const metadata = await discover(this.url);
    const answer = await postForm(metadata.tokenEndpoint, {
      grant_type: 'client_credentials',
      client_id: this.clientId,
      client_secret: this.clientSecret,
      scope,
      resource: metadata.resource,
    });
    if (!answer.ok) {
      const reason = `${answer.error}${answer.description ? `: ${answer.description}` : ''}`;
      if (answer.status === 401 || answer.error === 'invalid_client' || answer.error === 'unauthorized_client') {
        throw notLoggedIn(
          `The server refused the service account's client credentials (${reason}). ${this.refusedHint}`,
        );
      }
      throw new CliError(`The token endpoint answered ${answer.status} (${reason}).`, exitCodes.apiError);
    }
    const value = str(answer.tokens.access_token);
    if (!value) throw new CliError('The token endpoint answered without an access_token.', exitCodes.apiError);
    const expiresIn =
      typeof answer.tokens.expires_in === 'number' && answer.tokens.expires_in > 0 ? answer.tokens.expires_in : 3600;
    this.token = { value, expiresAt: Date.now() + expiresIn * 1000 };
    return value;
  }
}
