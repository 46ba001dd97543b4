import { Api, ApiError } from './api';
import { normalizeUrl, Store, type Env } from './config';
import { CliError, exitCodes, usageError } from './exit';

// What every command gets: the server URL, the config store, the API client and output helpers.

export type Context = {
  url: string;
  store: Store;
  api: Api;
  json: boolean;
  out: (text: string) => void;
  err: (text: string) => void;
  env: Env;
};

export function makeContext(flags: Record<string, unknown>, env: Env = process.env): Context {
  let url: string;
  try {
    url = normalizeUrl((flags.url as string | undefined) ?? env.PROMPTLOOP_URL ?? 'http://localhost:3000');
  } catch (error) {
    throw usageError((error as Error).message);
  }
  const store = new Store(url, env);
  const err = (text: string) => void process.stderr.write(`${text}\n`);
  const api = new Api(url, store, { onRetry: ({ attempt, delayMs, reason }) => err(`${reason}; retrying in ${(delayMs / 1000).toFixed(1)} s (attempt ${attempt + 1})…`) });
  return { url, store, api, json: flags.json === true, out: (text) => void process.stdout.write(`${text}\n`), err, env };
}

type OrganizationChoice = { id: string; name: string; role?: string };

/**
 * The organization a command acts on: --org, else the saved context (`promptloop org use`), else
 * the account default. An unset or inaccessible default is the API's 409 choose_organization: the
 * choices are printed and the command exits 2; the CLI never picks one by itself.
 */
export async function resolveOrganization(ctx: Context, flag: unknown): Promise<string> {
  if (typeof flag === 'string' && flag !== '') return flag;
  const saved = ctx.store.organizationId();
  if (saved) return saved;
  try {
    const answer = await ctx.api.request('GET', '/me/default-organization');
    const organization = answer.body as { id: string; name: string };
    return organization.id;
  } catch (error) {
    if (error instanceof ApiError && error.code === 'choose_organization') throw chooseOrganization(error);
    throw error;
  }
}

function chooseOrganization(error: ApiError): CliError {
  const choices = ((error.envelope?.error.details.organizations as OrganizationChoice[] | undefined) ?? []).filter((o) => o && typeof o.id === 'string');
  const lines = [`choose_organization: ${error.envelope?.error.message ?? 'Choose an organization.'}`];
  if (choices.length) {
    lines.push('', 'Organizations you can use:');
    const width = Math.max(...choices.map((o) => o.id.length));
    for (const o of choices) lines.push(`  ${o.id.padEnd(width)}  ${o.name}${o.role ? `  (${o.role})` : ''}`);
    lines.push('', 'Pass --org <id>, or save a context with `promptloop org use <id>`.');
  } else {
    lines.push('', 'You belong to no organization yet: create one with `promptloop orgs create --name <name>`.');
  }
  return new CliError(lines.join('\n'), exitCodes.usage, error.envelope ?? undefined);
}
