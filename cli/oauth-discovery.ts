import { CliError, exitCodes } from './exit';
import { fetchRetrying } from './retry';

// Where the CLI logs in (see oauth.ts): the server's OAuth metadata, read once per login or token.

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

// Network errors, 5xx and 429 are tried again (cli/retry.ts), as for API calls.
async function getJson(url: string, what: string): Promise<{ status: number; body: Json | null }> {
  const { response, text } = await fetchRetrying(url, { headers: { accept: 'application/json' } }, what, 15_000);
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

export const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

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
  if (metadata.status === 429 || metadata.status >= 500)
    throw new CliError(
      `${metadataUrl} answered ${metadata.status} on every attempt: the server is unavailable for now; try again later.`,
      exitCodes.apiError,
    );
  if (metadata.status !== 200 || !metadata.body)
    throw new CliError(
      `${metadataUrl} answered ${metadata.status}: the server does not publish OAuth metadata, so the CLI cannot get a token.`,
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
