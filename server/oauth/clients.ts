import { eq } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { oauthClients } from '@/db/schema';

// OAuth clients: the pre-registered public client of the CLI, and clients registered with RFC 7591.
export const cliClientId = 'promptloop-cli';

export type Client = { id: string; name: string; redirectUris: string[]; builtIn: boolean };

const cliClient: Client = {
  id: cliClientId,
  name: 'Promptloop CLI',
  // Any port (RFC 8252 section 7.3): matched by loopbackRedirectMatches.
  redirectUris: ['http://127.0.0.1/callback', 'http://localhost/callback'],
  builtIn: true,
};

const maxClientIdLength = 200;
export const registeredClientPrefix = 'client_';

export async function findClient(db: Db, clientId: string): Promise<Client | null> {
  if (clientId === cliClientId) return cliClient;
  if (!clientId || clientId.length > maxClientIdLength || !clientId.startsWith(registeredClientPrefix)) return null;
  const [row] = await db.select().from(oauthClients).where(eq(oauthClients.id, clientId));
  if (!row) return null;
  return { id: row.id, name: row.name || row.id, redirectUris: row.redirectUris, builtIn: false };
}

const loopbackHosts = new Set(['127.0.0.1', '[::1]', 'localhost']);

export function isLoopback(url: URL): boolean {
  return url.protocol === 'http:' && loopbackHosts.has(url.hostname);
}

function parse(value: string): URL | null {
  try {
    return new URL(value);
  } catch {
    return null;
  }
}

/**
 * Whether `value` is `url` written in its normal form, so that nothing a browser would read
 * differently slips through: the URL's href, or the same without the root path's slash
 * (`http://127.0.0.1:8080`, as many clients register a loopback redirect).
 */
export function isNormalForm(url: URL, value: string): boolean {
  if (value === url.href || value === `${url.origin}${url.pathname}${url.search}`) return true;
  return url.pathname === '/' && value === `${url.origin}${url.search}`;
}

// Registered redirect URIs match exactly, except that loopback ones match on any port (RFC 8252).
export function redirectUriAllowed(client: Client, redirectUri: string): boolean {
  const asked = parse(redirectUri);
  if (!asked || asked.hash || asked.username || asked.password) return false;
  for (const registered of client.redirectUris) {
    if (registered === redirectUri) return true;
    const allowed = parse(registered);
    if (!allowed || !isLoopback(allowed) || !isLoopback(asked)) continue;
    // Same host, path and query; only the port may differ. The string must be the URL's normal
    // form, so nothing the browser would read differently slips through.
    if (
      asked.hostname === allowed.hostname &&
      asked.pathname === allowed.pathname &&
      asked.search === allowed.search &&
      isNormalForm(asked, redirectUri)
    )
      return true;
  }
  return false;
}
