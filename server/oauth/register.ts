import type { Db } from '@/db/client';
import { oauthClients } from '@/db/schema';
import { jsonTextProblem } from '../input-hygiene';
import { isLoopback, isNormalForm, registeredClientPrefix } from './clients';
import { OAuthError, oauthJson } from './errors';
import { readText } from './http';
import { managementScope } from './issuer';
import { newOpaqueId } from './secrets';

// RFC 7591 dynamic client registration: public clients only (token_endpoint_auth_method "none"),
// authorization code + refresh token, https or loopback redirect URIs. Metadata we do not know is
// ignored (section 2); metadata we know is validated strictly: a wrong value is 400
// invalid_client_metadata (invalid_redirect_uri for redirect URIs) and nothing is stored.
const maxBodyBytes = 16 * 1024;
const maxRedirectUris = 10;
const maxUriLength = 2000;
const maxNameLength = 120;

const bad = (description: string) => new OAuthError('invalid_client_metadata', description);
const badRedirect = (description: string) => new OAuthError('invalid_redirect_uri', description);

function redirectUriProblem(value: unknown): string | null {
  if (typeof value !== 'string' || value.length === 0) return 'must be a non-empty string';
  if (value.length > maxUriLength) return `must be at most ${maxUriLength} characters`;
  if (/[\u0000-\u0020\u007f-\u009f\\]/.test(value)) return 'must not contain spaces, control characters or backslashes';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (!isNormalForm(url, value)) return 'must be written in its normal form';
  if (url.hash || value.includes('#')) return 'must not contain a fragment';
  if (url.username || url.password) return 'must not contain user information';
  if (url.protocol === 'https:') return url.hostname ? null : 'must name a host';
  if (isLoopback(url)) return null;
  return 'must use https, or http on a loopback address (127.0.0.1, [::1] or localhost)';
}

function optionalString(body: Record<string, unknown>, name: string, max: number): string | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim().length === 0) throw bad(`${name} must be a non-empty string.`);
  if (value.length > max) throw bad(`${name} must be at most ${max} characters.`);
  if (/[\u0000-\u001f\u007f-\u009f]/.test(value)) throw bad(`${name} must not contain control characters.`);
  return value;
}

function optionalHttpsUri(body: Record<string, unknown>, name: string): string | undefined {
  const value = optionalString(body, name, maxUriLength);
  if (value === undefined) return undefined;
  try {
    if (new URL(value).protocol === 'https:') return value;
  } catch {
    // falls through
  }
  throw bad(`${name} must be an https URL.`);
}

function subsetOf(body: Record<string, unknown>, name: string, allowed: string[], fallback: string[]): string[] {
  const value = body[name];
  if (value === undefined) return fallback;
  if (!Array.isArray(value) || value.length === 0 || value.some((v) => typeof v !== 'string'))
    throw bad(`${name} must be a non-empty array of strings.`);
  const unsupported = (value as string[]).filter((v) => !allowed.includes(v));
  if (unsupported.length) throw bad(`${name} may only contain ${allowed.map((a) => `"${a}"`).join(', ')}.`);
  return [...new Set(value as string[])];
}

type Registration = {
  client_id: string;
  client_id_issued_at: number;
  client_name?: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: 'none';
  scope: string;
  client_uri?: string;
  logo_uri?: string;
  software_id?: string;
  software_version?: string;
};

// The consent page shows client_name as its heading: a name that hides characters (bidi controls,
// zero-width and other format or control characters) or starts with our name (the built-in
// "Promptloop CLI", in any case or width) would let a registered client pass for us.
function checkedClientName(name: string): string {
  if (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(name))
    throw bad('client_name must not hold control or invisible formatting characters.');
  const plain = name.normalize('NFKC').replace(/\s+/gu, ' ').trim().toLowerCase();
  if (/^promptloop\b/u.test(plain)) throw bad('client_name must not start with "Promptloop": that name is ours.');
  return name;
}

function validateRegistration(body: unknown): Omit<Registration, 'client_id' | 'client_id_issued_at'> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw bad('The body must be a JSON object of client metadata.');
  const metadata = body as Record<string, unknown>;
  const uris = metadata.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0) throw badRedirect('redirect_uris must be a non-empty array of URLs.');
  if (uris.length > maxRedirectUris) throw badRedirect(`At most ${maxRedirectUris} redirect_uris.`);
  uris.forEach((uri, i) => {
    const problem = redirectUriProblem(uri);
    if (problem) throw badRedirect(`redirect_uris[${i}] ${problem}.`);
  });
  const method = metadata.token_endpoint_auth_method;
  if (method !== undefined && method !== 'none')
    throw bad('Only public clients can register: token_endpoint_auth_method must be "none".');
  const grantTypes = subsetOf(
    metadata,
    'grant_types',
    ['authorization_code', 'refresh_token'],
    ['authorization_code', 'refresh_token'],
  );
  if (!grantTypes.includes('authorization_code')) throw bad('grant_types must include "authorization_code".');
  const responseTypes = subsetOf(metadata, 'response_types', ['code'], ['code']);
  const scope = metadata.scope;
  if (scope !== undefined && (typeof scope !== 'string' || scope.split(' ').some((s) => s !== managementScope))) {
    throw bad(`scope may only be "${managementScope}".`);
  }
  const result: Omit<Registration, 'client_id' | 'client_id_issued_at'> = {
    redirect_uris: [...new Set(uris as string[])],
    grant_types: grantTypes,
    response_types: responseTypes,
    token_endpoint_auth_method: 'none',
    scope: managementScope,
  };
  const name = optionalString(metadata, 'client_name', maxNameLength);
  if (name !== undefined) result.client_name = checkedClientName(name.trim());
  const clientUri = optionalHttpsUri(metadata, 'client_uri');
  if (clientUri !== undefined) result.client_uri = clientUri;
  const logoUri = optionalHttpsUri(metadata, 'logo_uri');
  if (logoUri !== undefined) result.logo_uri = logoUri;
  const softwareId = optionalString(metadata, 'software_id', 200);
  if (softwareId !== undefined) result.software_id = softwareId;
  const softwareVersion = optionalString(metadata, 'software_version', 100);
  if (softwareVersion !== undefined) result.software_version = softwareVersion;
  return result;
}

export async function parseRegistrationBody(request: Request): Promise<unknown> {
  const type = request.headers.get('content-type')?.split(';')[0].trim().toLowerCase();
  if (type !== 'application/json') {
    await request.body?.cancel().catch(() => {});
    throw bad('Send the client metadata as JSON (Content-Type: application/json).');
  }
  let text: string;
  try {
    text = await readText(request, maxBodyBytes);
  } catch (error) {
    if (error instanceof OAuthError) throw new OAuthError('invalid_client_metadata', error.description, error.status);
    throw error;
  }
  // Valid JSON, at most 16 levels deep, no U+0000 or lone surrogate (input hygiene).
  const parsed: { value?: unknown } = {};
  const problem = jsonTextProblem(text, 16, parsed);
  if (problem) throw bad(`The client metadata is not accepted: ${problem}`);
  return parsed.value;
}

export async function registerClient(db: Db, body: unknown): Promise<Response> {
  const metadata = validateRegistration(body);
  const id = newOpaqueId(registeredClientPrefix);
  const [row] = await db
    .insert(oauthClients)
    .values({ id, name: metadata.client_name ?? null, redirectUris: metadata.redirect_uris, metadata })
    .returning({ createdAt: oauthClients.createdAt });
  const registration: Registration = {
    client_id: id,
    client_id_issued_at: Math.floor(row.createdAt.getTime() / 1000),
    ...metadata,
  };
  return oauthJson(201, registration);
}
