import { Api, StoredLogin } from './api';
import { normalizeUrl, Store, type Env, type StoredTokens } from './config';
import { usageError, type CliError } from './exit';
import { ClientCredentials } from './oauth';

// What every command gets: the server URL, the config store, the API client and output helpers.

export type Context = {
  url: string;
  store: Store;
  api: Api;
  json: boolean;
  out: (text: string) => void;
  err: (text: string) => void;
  env: Env;
  /** Set when PROMPTLOOP_CLIENT_ID and PROMPTLOOP_CLIENT_SECRET name a service account. */
  serviceAccount: boolean;
  /** The organization of the saved context (`org use`), once a command has acted on it. */
  savedOrganization?: string;
};

export const usesServiceAccount = () =>
  usageError(
    'PROMPTLOOP_CLIENT_ID and PROMPTLOOP_CLIENT_SECRET are set: commands act as that service account and nothing is saved. Unset them to use a login.',
  );

/**
 * A service account's context keeps nothing on disk: no stored login or organization context is
 * read (the account acts in its own organization), and saving either is a usage error.
 */
class ServiceAccountStore extends Store {
  override tokens(): StoredTokens | undefined {
    return undefined;
  }
  override organizationId(): string | undefined {
    return undefined;
  }
  override saveTokens(): void {
    throw usesServiceAccount();
  }
  override saveOrganizationId(): void {
    throw usesServiceAccount();
  }
  override lockTokens<T>(): Promise<T> {
    throw usesServiceAccount();
  }
}

/** Both service-account variables, neither (a stored login), or a usage error for just one. */
function serviceAccountCredentials(env: Env): { clientId: string; clientSecret: string } | null {
  const clientId = env.PROMPTLOOP_CLIENT_ID || undefined;
  const clientSecret = env.PROMPTLOOP_CLIENT_SECRET || undefined;
  if (!clientId && !clientSecret) return null;
  if (!clientId || !clientSecret) {
    throw usageError(
      `${clientId ? 'PROMPTLOOP_CLIENT_SECRET' : 'PROMPTLOOP_CLIENT_ID'} is not set: a service account needs both PROMPTLOOP_CLIENT_ID and PROMPTLOOP_CLIENT_SECRET.`,
    );
  }
  return { clientId, clientSecret };
}

export function makeContext(flags: Record<string, unknown>, env: Env = process.env): Context {
  let url: string;
  try {
    url = normalizeUrl((flags.url as string | undefined) ?? env.PROMPTLOOP_URL ?? 'http://localhost:3000');
  } catch (error) {
    throw usageError((error as Error).message);
  }
  // Service-account variables take precedence over a stored login.
  const account = serviceAccountCredentials(env);
  const store = account ? new ServiceAccountStore(url, env) : new Store(url, env);
  const tokens = account
    ? new ClientCredentials(url, account.clientId, account.clientSecret)
    : new StoredLogin(url, store);
  const err = (text: string) => void process.stderr.write(`${text}\n`);
  const api = new Api(url, tokens, {
    onRetry: ({ attempt, delayMs, reason }) =>
      err(`${reason}; retrying in ${(delayMs / 1000).toFixed(1)} s (attempt ${attempt + 1})…`),
  });
  return {
    url,
    store,
    api,
    json: flags.json === true,
    out: (text) => void process.stdout.write(`${text}\n`),
    err,
    env,
    serviceAccount: account !== null,
  };
}

/**
 * The organization a command acts on: --org, else the saved context (`promptloop org use`), else
 * the account default. An unset or inaccessible default is the API's 409 choose_organization: the
 * choices are printed and the command exits 2; the CLI never picks one by itself.
 */
export async function resolveOrganization(ctx: Context, flag: unknown): Promise<string> {
  if (typeof flag === 'string' && flag !== '') return flag;
  const saved = ctx.store.organizationId();
  if (saved) {
    ctx.savedOrganization = saved;
    return saved;
  }
  // 409 choose_organization is an ApiError that lists the choices and exits 2 (cli/api.ts).
  const answer = await ctx.api.request('GET', '/me/default-organization');
  const organization = answer.body as { id: string; name: string };
  return organization.id;
}

/**
 * A refusal worth a hint: the organization of the saved context (`org use`) is gone or no longer
 * yours (404 "Organization not found."), which the message alone does not say.
 */
export function savedOrganizationHint(ctx: Context | undefined, error: CliError): string {
  const envelope = error.body as { error?: { code?: string; message?: string } } | undefined;
  if (!ctx?.savedOrganization || envelope?.error?.code !== 'not_found') return '';
  if (!envelope.error.message?.startsWith('Organization')) return '';
  return `\n${ctx.savedOrganization} is the organization saved with \`promptloop org use\` for ${ctx.url}: pass --org, or run \`promptloop org clear\` (then your account default applies).`;
}
