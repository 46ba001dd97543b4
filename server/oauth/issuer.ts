import { config } from '../config';

// The built-in authorization server serves only when the app is its own issuer (OAUTH_ISSUER unset
// or equal to APP_URL); with an external issuer its endpoints answer 404 and tokens are checked
// against that issuer as before (server/auth/oauth.ts).
export function isBuiltInIssuer(): boolean {
  const cfg = config();
  return cfg.oauthIssuer === cfg.appUrl;
}

export const managementScope = 'management';
export const supportedScopes = [managementScope];

// Lifetimes (API.md: codes at most 60 s, access tokens at most 1 hour).
export const codeTtlMs = 60_000;
export const accessTokenTtlSeconds = 3600;
export const refreshTokenTtlMs = 30 * 24 * 3600_000;

export function endpoints() {
  const base = config().appUrl;
  return {
    issuer: base,
    authorization: `${base}/oauth/authorize`,
    token: `${base}/oauth/token`,
    registration: `${base}/oauth/register`,
    revocation: `${base}/oauth/revoke`,
    jwks: `${base}/oauth/jwks`,
  };
}

// The two protected resources a token can be bound to (RFC 8707 `resource` → `aud`).
export function resources(): { api: string; mcp: string } {
  const cfg = config();
  return { api: cfg.oauthAudience, mcp: `${cfg.appUrl}/mcp` };
}

export function isKnownResource(value: string): boolean {
  const { api, mcp } = resources();
  return value === api || value === mcp;
}

// RFC 8414 metadata.
export function authorizationServerMetadata() {
  const e = endpoints();
  return {
    issuer: e.issuer,
    authorization_endpoint: e.authorization,
    token_endpoint: e.token,
    registration_endpoint: e.registration,
    revocation_endpoint: e.revocation,
    jwks_uri: e.jwks,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
    code_challenge_methods_supported: ['S256'],
    // none: public clients (the CLI, registered clients); the other two: service accounts.
    token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    revocation_endpoint_auth_methods_supported: ['none'],
    scopes_supported: supportedScopes,
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${e.issuer}/api/v1/openapi.json`,
  };
}

// RFC 9728 metadata of /api/v1 and /mcp, built from APP_URL (never from Host headers).
export function protectedResourceMetadata(which: 'api' | 'mcp') {
  const cfg = config();
  return {
    resource: resources()[which],
    authorization_servers: [cfg.oauthIssuer],
    scopes_supported: supportedScopes,
    bearer_methods_supported: ['header'],
    resource_name: which === 'mcp' ? 'Promptloop MCP server' : 'Promptloop management API',
  };
}
