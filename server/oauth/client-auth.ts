import { OAuthError } from './errors';

// Client authentication at the token endpoint for confidential clients (service accounts), RFC 6749
// section 2.3.1: HTTP Basic, whose client_id and client_secret are form-urlencoded before base64,
// or both as form fields; never both methods in one request.

export type PresentedClient = { clientId: string; secret: string | undefined; basic: boolean };

const basicChallenge = { 'www-authenticate': 'Basic realm="promptloop", charset="UTF-8"' };

// 401 invalid_client; with the Basic challenge when the client tried Basic (RFC 6749 section 5.2).
export function invalidClient(description: string, basic: boolean): OAuthError {
  return new OAuthError('invalid_client', description, 401, basic ? basicChallenge : {});
}

function formDecode(part: string): string {
  try {
    return decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    throw invalidClient('The Basic credentials are not form-urlencoded (RFC 6749 section 2.3.1).', true);
  }
}

function decodeBasic(credentials: string): { clientId: string; secret: string } {
  const malformed = () =>
    invalidClient('The Authorization header is not valid HTTP Basic: base64 of client_id:client_secret.', true);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(credentials) || credentials.length % 4 !== 0) throw malformed();
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(credentials, 'base64'));
  } catch {
    throw malformed();
  }
  const colon = text.indexOf(':');
  if (colon < 0) throw malformed();
  return { clientId: formDecode(text.slice(0, colon)), secret: formDecode(text.slice(colon + 1)) };
}

export function presentedClient(params: Map<string, string>, authorization: string | null): PresentedClient {
  const basic = authorization ? /^Basic(?:[ \t]+(\S*))?[ \t]*$/i.exec(authorization) : null;
  if (basic) {
    const { clientId, secret } = decodeBasic(basic[1] ?? '');
    const twice = params.has('client_secret') || (params.has('client_id') && params.get('client_id') !== clientId);
    if (twice)
      throw new OAuthError(
        'invalid_request',
        'Send the client credentials once: in the Authorization header or as form fields, not both.',
      );
    return { clientId, secret, basic: true };
  }
  const clientId = params.get('client_id');
  if (!clientId)
    throw invalidClient(
      'Client authentication is required: client_id and client_secret as form fields or with HTTP Basic.',
      false,
    );
  return { clientId, secret: params.get('client_secret') || undefined, basic: false };
}
