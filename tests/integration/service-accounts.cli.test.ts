import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newConfigDir, runCli, seedLogin, storedLogin } from '../helpers/cli';
import { builtInTeam, newServiceAccount, startStack, type Stack } from '../helpers/service-accounts';
import { drain, echoRows, importRows } from '../helpers/evals';
import { activePrompt, systemContent } from '../helpers/prompts';

// The CLI as a CI job runs it: PROMPTLOOP_CLIENT_ID and PROMPTLOOP_CLIENT_SECRET instead of a
// login. Each run gets its own token (client_credentials over real HTTP), writes nothing to the
// config directory, wins over a stored login and defaults --org to the account's organization; a
// refused secret exits 3, only one of the two variables exits 2. The CI gate (evals start --wait)
// runs against a worker draining in this process.

let stack: Stack;
let url: string;
let team: Awaited<ReturnType<typeof builtInTeam>>;
let draining = true;
let drainLoop: Promise<void>;

beforeAll(async () => {
  stack = await startStack();
  url = stack.url;
  team = await builtInTeam(url);
  drainLoop = (async () => {
    while (draining) {
      await drain().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
}, 120_000);
afterAll(async () => {
  draining = false;
  await drainLoop;
  await stack?.stop();
});

const asAccount = (account: { serviceAccount: { clientId: string }; clientSecret: string }) => ({
  PROMPTLOOP_CLIENT_ID: account.serviceAccount.clientId,
  PROMPTLOOP_CLIENT_SECRET: account.clientSecret,
});

describe('promptloop with a service account (PROMPTLOOP_CLIENT_ID / PROMPTLOOP_CLIENT_SECRET)', () => {
  it('commands work without login, act in the account’s organization by default, and write nothing to the config directory', async () => {
    const account = await newServiceAccount(url, team.admin, team.org.id, 'editor', 'CLI bot');
    const configDir = newConfigDir();
    const env = asAccount(account);
    const me = await runCli(['account', 'get', '--json'], { configDir, url, env });
    expect(me.code, me.stderr).toBe(0);
    expect(JSON.parse(me.stdout)).toMatchObject({
      id: account.serviceAccount.id,
      kind: 'service_account',
      email: null,
      defaultOrganizationId: team.org.id,
    });

    const orgs = await runCli(['orgs', 'list', '--json'], { configDir, url, env });
    expect(orgs.code, orgs.stderr).toBe(0);
    expect(JSON.parse(orgs.stdout).items.map((o: any) => o.id)).toEqual([team.org.id]);

    // No --org: the account's organization.
    const created = await runCli(['prompts', 'create', 'Made in CI', '--json'], { configDir, url, env });
    expect(created.code, created.stderr).toBe(0);
    const prompts = await runCli(['prompts', 'list', '--json'], { configDir, url, env });
    expect(prompts.code, prompts.stderr).toBe(0);
    expect(JSON.parse(prompts.stdout).items.map((p: any) => p.name)).toContain('Made in CI');
    const shown = await runCli(['org', 'show', '--json'], { configDir, url, env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: team.org.id, source: 'account default' });

    expect(readdirSync(configDir)).toEqual([]);
  });

  it('takes precedence over a stored login, which stays as it was; saving a context or logging in is a usage error (exit 2)', async () => {
    const account = await newServiceAccount(url, team.admin, team.org.id, 'viewer');
    const configDir = newConfigDir();
    seedLogin(configDir, url, { accessToken: team.editor.token });
    const before = storedLogin(configDir, url);
    const env = asAccount(account);
    const me = await runCli(['account', 'get', '--json'], { configDir, url, env });
    expect(me.code, me.stderr).toBe(0);
    expect(JSON.parse(me.stdout).id).toBe(account.serviceAccount.id);
    expect(storedLogin(configDir, url)).toEqual(before);

    for (const args of [['org', 'use', team.org.id], ['org', 'clear'], ['login', '--no-browser'], ['logout']]) {
      const refused = await runCli(args, { configDir, url, env });
      expect(refused.code, `${args.join(' ')}: ${refused.stderr}`).toBe(2);
      expect(refused.stderr).toContain('PROMPTLOOP_CLIENT_ID');
    }
    expect(readdirSync(configDir)).toEqual(['credentials.json']);
    expect(storedLogin(configDir, url)).toEqual(before);
    // Without the variables the stored login is used again.
    const person = await runCli(['account', 'get', '--json'], { configDir, url });
    expect(JSON.parse(person.stdout).id).toBe(team.editor.id);
  });

  it('a wrong or revoked secret, or a public client id, exits 3; only one of the two variables exits 2', async () => {
    const account = await newServiceAccount(url, team.admin, team.org.id, 'viewer');
    const configDir = newConfigDir();
    const wrong = await runCli(['orgs', 'list'], {
      configDir,
      url,
      env: { ...asAccount(account), PROMPTLOOP_CLIENT_SECRET: `pls_${'x'.repeat(43)}` },
    });
    expect(wrong.code, wrong.stderr).toBe(3);
    expect(wrong.stderr).toContain('invalid_client');
    const publicClient = await runCli(['orgs', 'list'], {
      configDir,
      url,
      env: { PROMPTLOOP_CLIENT_ID: 'promptloop-cli', PROMPTLOOP_CLIENT_SECRET: account.clientSecret },
    });
    expect(publicClient.code, publicClient.stderr).toBe(3);

    const halves: Record<string, string>[] = [
      { PROMPTLOOP_CLIENT_ID: account.serviceAccount.clientId },
      { PROMPTLOOP_CLIENT_SECRET: account.clientSecret },
    ];
    for (const env of halves) {
      const half = await runCli(['orgs', 'list'], { configDir, url, env });
      expect(half.code, half.stderr).toBe(2);
      expect(half.stderr).toMatch(/PROMPTLOOP_CLIENT_(ID|SECRET) is not set/);
    }

    expect(
      (await team.admin.call('DELETE', `/organizations/${team.org.id}/service-accounts/${account.serviceAccount.id}`))
        .status,
    ).toBe(200);
    const revoked = await runCli(['orgs', 'list'], { configDir, url, env: asAccount(account) });
    expect(revoked.code, revoked.stderr).toBe(3);
    expect(readdirSync(configDir)).toEqual([]);
  });

  it('the README’s CI job: save the prompt file as a version, then `evals start --wait` as the service account exits 0', async () => {
    const account = await newServiceAccount(url, team.admin, team.org.id, 'editor', 'GitHub Actions');
    const { prompt } = await activePrompt(team.editor, team.org.id);
    await importRows(team.editor, team.org.id, prompt.id, echoRows(3));
    const configDir = newConfigDir();
    const env = asAccount(account);
    const run = async (args: string[]) => {
      const result = await runCli(args, { configDir, url, env });
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
      return JSON.parse(result.stdout);
    };
    const file = path.join(newConfigDir(), 'support.json');
    writeFileSync(file, JSON.stringify(systemContent('You answer support questions, briefly.')));
    const revision = (await run(['drafts', 'get', prompt.id, '--json'])).revision;
    const saved = (
      await run(['drafts', 'update', prompt.id, '--content', `@${file}`, '--revision', String(revision), '--json'])
    ).revision;
    const version = await run(['versions', 'save', prompt.id, '--draft-revision', String(saved), '--json']);
    expect(version).toMatchObject({ number: 2, createdBy: account.serviceAccount.id });
    const gate = await runCli(
      ['evals', 'start', prompt.id, '--version-id', version.id, '--scope', 'quick', '--wait', '--interval', '0.2'],
      { configDir, url, env },
    );
    expect(gate.code, gate.stderr + gate.stdout).toBe(0);
    expect(gate.stdout).toContain('completed');
    // The person's draft was not touched: the service account has its own.
    expect(
      (await team.editor.call('GET', `/organizations/${team.org.id}/prompts/${prompt.id}/draft`)).body.content
        .messages[0].content,
    ).toBe('You answer support questions.');
    expect(readdirSync(configDir)).toEqual([]);
  }, 90_000);
});
