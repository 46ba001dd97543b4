import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Command } from './command';
import { resolveOrganization, usesServiceAccount } from './context';
import { ApiError } from './api';
import { CliError, exitCodes } from './exit';
import { authorizationUrl, exchangeCode, pkcePair, revoke } from './oauth';
import { discover } from './oauth-discovery';
import { startLoopback } from './oauth-loopback';
import { render } from './output';

// Commands that are not management operations: login, logout and the organization context.

/** Opens `url` with the platform's opener; resolves false when there is none. */
function openBrowser(url: string): Promise<boolean> {
  const [command, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['rundll32', ['url.dll,FileProtocolHandler', url]]
        : ['xdg-open', [url]];
  return new Promise((resolve) => {
    try {
      const child = spawn(command, args as string[], { stdio: 'ignore', detached: true });
      child.once('error', () => resolve(false));
      child.once('spawn', () => {
        child.unref();
        resolve(true);
      });
    } catch {
      resolve(false);
    }
  });
}

const login: Command = {
  path: ['login'],
  summary: 'Log in through the browser (OAuth authorization code + PKCE, loopback redirect)',
  description:
    'Opens the server’s sign-in and consent page; after Allow, the browser is sent back to a one-time listener on 127.0.0.1 and the tokens are stored in the config directory (0600). The access token is refreshed transparently.',
  positionals: [],
  flags: [
    {
      name: 'no-browser',
      kind: 'boolean',
      description: 'Print the URL instead of opening a browser (open it in a browser on this machine).',
    },
    {
      name: 'timeout',
      kind: 'number',
      placeholder: 'seconds',
      description: 'How long to wait for the sign-in (default 300).',
    },
  ],
  async run(ctx, parsed) {
    if (ctx.serviceAccount) throw usesServiceAccount();
    const metadata = await discover(ctx.url);
    const { verifier, challenge } = pkcePair();
    const state = randomBytes(24).toString('base64url');
    const timeoutMs = ((parsed.flags.timeout as number | undefined) ?? 300) * 1000;
    const loopback = await startLoopback(
      { state, issuer: metadata.issuer, issRequired: metadata.issParameterSupported },
      timeoutMs,
    );
    const url = authorizationUrl(metadata, { redirectUri: loopback.redirectUri, state, challenge });
    if (parsed.flags['no-browser'] === true) {
      // With --json, stdout is kept for the result: the URL goes to stderr.
      (ctx.json ? ctx.err : ctx.out)(`Open this URL in a browser to log in:\n\n${url}\n`);
    } else if (await openBrowser(url)) {
      ctx.err(`Opened the browser to log in. If it did not open, visit:\n\n${url}\n`);
    } else {
      ctx.out(`Could not open a browser. Open this URL to log in:\n\n${url}\n`);
    }
    ctx.err('Waiting for the sign-in to complete…');
    const { code, redirectUri } = await loopback.wait;
    const tokens = await exchangeCode(metadata, code, redirectUri, verifier);
    const previous = await ctx.store.lockTokens(async () => {
      const old = ctx.store.tokens();
      ctx.store.saveTokens(tokens);
      return old;
    });
    // Logging in again replaces the old login: revoke it so it does not linger (best effort).
    if (previous?.refreshToken && previous.refreshToken !== tokens.refreshToken) await revoke(previous);
    let who = '';
    try {
      const me = (await ctx.api.request('GET', '/me')).body as { email?: string; name?: string };
      who = me.email ? ` as ${me.email}` : '';
    } catch {
      // Logged in all the same; the next command will say what is wrong.
    }
    ctx.out(
      ctx.json
        ? JSON.stringify({
            loggedIn: true,
            url: ctx.url,
            scope: tokens.scope,
            expiresAt: new Date(tokens.expiresAt).toISOString(),
          })
        : `Logged in to ${ctx.url}${who}.`,
    );
  },
};

const logout: Command = {
  path: ['logout'],
  summary: 'Revoke the stored tokens (RFC 7009) and delete them',
  positionals: [],
  flags: [],
  async run(ctx) {
    const outcome = await ctx.store.lockTokens(async () => {
      const tokens = ctx.store.tokens();
      if (!tokens) return null;
      const revoked = await revoke(tokens);
      ctx.store.saveTokens(undefined);
      return revoked;
    });
    if (!outcome) return void ctx.out(`Not logged in to ${ctx.url}.`);
    // The tokens are gone from here either way; a revocation the server did not confirm is exit 1,
    // so that a script knows they may still be valid there.
    if (!outcome.ok)
      throw new CliError(
        `The tokens were deleted here, but ${ctx.url} did not confirm their revocation (${outcome.message}); they may stay valid until they expire. Revoke the Promptloop CLI under Account → Authorized applications to be sure.`,
        exitCodes.apiError,
      );
    ctx.out(`Logged out of ${ctx.url}.`);
  },
};

const orgUse: Command = {
  path: ['org', 'use'],
  summary: 'Save the organization that commands act on (the local context)',
  description:
    'Checked with the server first. The context is kept per server URL and is never changed by the account default; --org overrides it for one command.',
  positionals: [{ name: 'organizationId', description: 'The organization id (org_…).' }],
  flags: [],
  async run(ctx, parsed) {
    const id = parsed.positionals[0];
    const organization = (await ctx.api.request('GET', `/organizations/${encodeURIComponent(id)}`)).body as {
      id: string;
      name: string;
      role?: string;
    };
    ctx.store.saveOrganizationId(organization.id);
    ctx.out(
      ctx.json
        ? render(organization, true)
        : `Commands on ${ctx.url} now act on ${organization.name} (${organization.id}).`,
    );
  },
};

const orgShow: Command = {
  path: ['org', 'show'],
  summary: 'Show the organization commands act on, and why',
  positionals: [],
  flags: [
    { name: 'org', kind: 'string', placeholder: 'organizationId', description: 'Show this organization instead.' },
  ],
  async run(ctx, parsed) {
    const saved = ctx.store.organizationId();
    const source =
      typeof parsed.flags.org === 'string' ? '--org' : saved ? 'saved context (promptloop org use)' : 'account default';
    const id = await resolveOrganization(ctx, parsed.flags.org);
    let organization: Record<string, unknown>;
    try {
      organization = (await ctx.api.request('GET', `/organizations/${encodeURIComponent(id)}`)).body as Record<
        string,
        unknown
      >;
    } catch (error) {
      if (error instanceof ApiError && error.status === 404 && source.startsWith('saved'))
        throw new CliError(
          `The saved organization ${id} is not accessible (${error.code}). Choose another with \`promptloop org use <id>\` or \`promptloop org clear\`.`,
          exitCodes.apiError,
          error.envelope,
        );
      throw error;
    }
    ctx.out(ctx.json ? render({ ...organization, source }, true) : `${render(organization, false)}\nsource  ${source}`);
  },
};

const orgClear: Command = {
  path: ['org', 'clear'],
  summary: 'Forget the saved organization context (commands then use --org or the account default)',
  positionals: [],
  flags: [],
  async run(ctx) {
    ctx.store.saveOrganizationId(undefined);
    ctx.out(`Cleared the organization context for ${ctx.url}.`);
  },
};

export const builtinCommands: Command[] = [login, logout, orgUse, orgShow, orgClear];
