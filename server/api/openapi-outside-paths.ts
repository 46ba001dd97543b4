// The OpenAPI document's routes outside /api/v1 (API.md "Routes"): served by their own handlers,
// described here by hand (buildOpenApi in openapi.ts adds them after the generated ones).

type JsonSchema = Record<string, unknown>;

export const errorResponseRef = { $ref: '#/components/responses/Error' };

const errorStatuses = (...statuses: string[]) => Object.fromEntries(statuses.map((s) => [s, errorResponseRef]));
const jsonBody = (schema: JsonSchema) => ({ content: { 'application/json': { schema } } });
const form = (properties: Record<string, JsonSchema>, required: string[]) => ({
  required: true,
  content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', properties, required } } },
});
const str = { type: 'string' };

export const outsidePaths: Record<string, Record<string, JsonSchema>> = {
  '/api/webhooks/stripe': {
    post: {
      operationId: 'stripe_webhook',
      summary: "Stripe's webhook deliveries (billing): the only way a plan changes",
      description:
        'Verified on the raw body: `Stripe-Signature` must carry a `v1` HMAC-SHA256 of `t.payload` under one of the configured secrets (STRIPE_WEBHOOK_SECRET, comma-separated during rotation) with `t` (one, in digits) within 300 s of the server clock, before or after. Each event id is applied once, in the transaction of the state change; an event older (`created`) than the last one applied to its subscription never rolls state back. Handled: checkout.session.completed, customer.subscription.created|updated|deleted, invoice.paid, invoice.payment_failed; other types are acknowledged and ignored.',
      tags: ['Billing webhooks'],
      security: [],
      parameters: [{ name: 'Stripe-Signature', in: 'header', required: true, schema: str }],
      requestBody: {
        required: true,
        ...jsonBody({
          type: 'object',
          required: ['id', 'type', 'created', 'data'],
          description: 'A Stripe Event object.',
        }),
      },
      responses: {
        '200': {
          description: 'Accepted (also for duplicates and unhandled types)',
          ...jsonBody({ type: 'object', properties: { received: { const: true } } }),
        },
        ...errorStatuses('400', '503'),
      },
    },
  },
  '/mcp': {
    post: {
      operationId: 'mcp',
      summary: 'The hosted MCP server (streamable HTTP, stateless): one tool per management operation',
      description:
        'JSON-RPC messages of the Model Context Protocol. Needs an OAuth access token whose audience is `$APP_URL/mcp` (RFC 9728 metadata at /.well-known/oauth-protected-resource/mcp).',
      tags: ['Meta'],
      security: [{ ManagementOAuth: ['management'] }],
      requestBody: { required: true, ...jsonBody({ type: 'object' }) },
      responses: {
        '200': { description: 'JSON-RPC response', ...jsonBody({ type: 'object' }) },
        ...errorStatuses('400', '401', '403', '413', '429'),
      },
    },
  },
  '/.well-known/oauth-authorization-server': {
    get: {
      operationId: 'oauth_authorization_server_metadata',
      summary: 'Authorization server metadata (RFC 8414) of the built-in issuer',
      tags: ['OAuth'],
      security: [],
      responses: { '200': { description: 'Metadata', ...jsonBody({ type: 'object' }) } },
    },
  },
  '/.well-known/oauth-protected-resource': {
    get: {
      operationId: 'oauth_protected_resource_metadata',
      summary: 'Protected resource metadata (RFC 9728) of the management API',
      tags: ['OAuth'],
      security: [],
      responses: { '200': { description: 'Metadata', ...jsonBody({ type: 'object' }) } },
    },
  },
  '/.well-known/oauth-protected-resource/mcp': {
    get: {
      operationId: 'oauth_protected_resource_metadata_mcp',
      summary: 'Protected resource metadata (RFC 9728) of the MCP endpoint',
      tags: ['OAuth'],
      security: [],
      responses: { '200': { description: 'Metadata', ...jsonBody({ type: 'object' }) } },
    },
  },
  '/oauth/authorize': {
    get: {
      operationId: 'oauth_authorize',
      summary:
        'Authorization endpoint: authorization code with S256 PKCE; signs in and asks for consent in the browser',
      tags: ['OAuth'],
      security: [],
      parameters: [
        'response_type',
        'client_id',
        'redirect_uri',
        'code_challenge',
        'code_challenge_method',
        'scope',
        'state',
        'resource',
      ].map((name) => ({
        name,
        in: 'query',
        required: ['response_type', 'client_id', 'redirect_uri', 'code_challenge', 'code_challenge_method'].includes(
          name,
        ),
        schema: str,
      })),
      responses: {
        '302': { description: 'Redirect to sign-in, consent or the client' },
        '400': { description: 'Invalid authorization request' },
      },
    },
  },
  '/oauth/token': {
    post: {
      operationId: 'oauth_token',
      summary: 'Token endpoint: authorization_code (with code_verifier), refresh_token and client_credentials grants',
      description:
        'People (the CLI, MCP clients): `authorization_code` with the PKCE `code_verifier`, then `refresh_token` (rotating). Service accounts (CI): `client_credentials` with `client_id` and `client_secret` as form fields (client_secret_post) or HTTP Basic (client_secret_basic), optional `scope=management` and `resource` (`APP_URL/api/v1` by default, or `APP_URL/mcp`); the answer has no refresh token. A wrong, missing or revoked secret is `401 invalid_client`; a public client asking for client_credentials is `400 unauthorized_client`. Rate limited per client address (`429` with `Retry-After`).',
      tags: ['OAuth'],
      // No credential for public clients; a service account may send its secret as HTTP Basic instead of a form field.
      security: [{}, { ClientSecretBasic: [] }],
      requestBody: form(
        {
          grant_type: {
            type: 'string',
            enum: ['authorization_code', 'refresh_token', 'client_credentials'],
          },
          code: { type: 'string', description: 'authorization_code: the code from the redirect.' },
          redirect_uri: {
            type: 'string',
            description: 'authorization_code: the redirect_uri of the authorization request.',
          },
          code_verifier: { type: 'string', description: 'authorization_code: the PKCE verifier (S256).' },
          refresh_token: { type: 'string', description: 'refresh_token: the refresh token (rotated on use).' },
          client_id: {
            type: 'string',
            description: 'The client: `promptloop-cli`, a registered client, or a service account (`sa_…`).',
          },
          client_secret: {
            type: 'string',
            description: 'client_credentials: the service account secret (`pls_…`), unless sent as HTTP Basic.',
          },
          scope: { type: 'string', description: '`management` (the only scope).' },
          resource: {
            type: 'string',
            description: 'The audience (RFC 8707): `APP_URL/api/v1` (default) or `APP_URL/mcp`.',
          },
        },
        ['grant_type'],
      ),
      responses: {
        '200': {
          description: 'Tokens: access_token, token_type, expires_in, scope (and refresh_token for people)',
          ...jsonBody({ type: 'object' }),
        },
        '400': {
          description: 'OAuth error (RFC 6749): invalid_grant, invalid_scope, invalid_target, unauthorized_client…',
        },
        '401': { description: 'invalid_client: a wrong, missing or revoked client secret (WWW-Authenticate: Basic)' },
        '429': { description: 'Too many requests (Retry-After)' },
      },
    },
  },
  '/oauth/register': {
    post: {
      operationId: 'oauth_register',
      summary: 'Dynamic client registration (RFC 7591) for public clients',
      tags: ['OAuth'],
      security: [],
      requestBody: { required: true, ...jsonBody({ type: 'object', required: ['redirect_uris'] }) },
      responses: {
        '201': { description: 'The registered client', ...jsonBody({ type: 'object' }) },
        '400': { description: 'Invalid client metadata' },
        '429': { description: 'Too many requests' },
      },
    },
  },
  '/oauth/revoke': {
    post: {
      operationId: 'oauth_revoke',
      summary: 'Token revocation (RFC 7009)',
      tags: ['OAuth'],
      security: [],
      requestBody: form({ token: str, token_type_hint: str, client_id: str }, ['token']),
      responses: { '200': { description: 'Revoked (or unknown)' } },
    },
  },
  '/oauth/jwks': {
    get: {
      operationId: 'oauth_jwks',
      summary: "The built-in issuer's public signing keys (JWKS)",
      tags: ['OAuth'],
      security: [],
      responses: { '200': { description: 'JSON Web Key Set', ...jsonBody({ type: 'object' }) } },
    },
  },
};
