import { createHash, randomBytes } from 'node:crypto';
import { CliError, exitCodes, notLoggedIn } from './exit';
import type { StoredTokens } from './config';
import { discover, str, type ServerMetadata } from './oauth-discovery';
import { fetchRetrying } from './retry';

// OAuth for the CLI (API.md "Built-in authorization server", "CLI"): the public client
// `promptloop-cli`, authorization code + S256 PKCE with a loopback redirect on a random port,
// rotating refresh tokens, RFC 7009 revocation. Endpoints come from the server's metadata.
// Discovery is in oauth-discovery.ts, the loopback redirect in oauth-loopback.ts.

const clientId = 'promptloop-cli';
const scope = 'management';

type Json = Record<string, unknown>;

const base64url = (bytes: Buffer) => bytes.toString('base64url');

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = base64url(randomBytes(32));
  return { verifier, challenge: base64url(createHash('sha256').update(verifier).digest()) };
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

// Network errors, 5xx and 429 (the token endpoint's rate limit) are tried again (cli/retry.ts): a
// refused grant is final, so a retried form is never spent twice.
async function postForm(endpoint: string, form: Record<string, string>): Promise<TokenAnswer> {
  const { response, text } = await fetchRetrying(
    endpoint,
    {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form).toString(),
    },
    'the token endpoint',
    30_000,
  );
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
