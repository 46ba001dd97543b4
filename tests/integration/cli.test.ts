import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { newOrganization, newUser, type TestUser } from '../helpers/api';
import {
  newConfigDir,
  runCli,
  seedLogin,
  startAppServer,
  startProxy,
  storedLogin,
  type AppServer,
} from '../helpers/cli';
import { closedPort } from '../helpers/net';

// The real `promptloop` binary as a child process against the app over HTTP (tokens from the
// test issuer stored as `login` stores them): exit codes, --json, organization context and
// choose_organization, config file permissions, Idempotency-Key reuse on retries.

let app: AppServer;
beforeAll(async () => {
  await getDb();
  app = await startAppServer();
}, 120_000);
afterAll(() => app?.stop());

async function loggedIn(user?: TestUser) {
  const u = user ?? (await newUser());
  const configDir = newConfigDir();
  seedLogin(configDir, app.url, { accessToken: u.token });
  const cli = (args: string[], env?: Record<string, string>) => runCli(args, { configDir, url: app.url, env });
  return { user: u, configDir, cli };
}

describe('promptloop: usage and login state', () => {
  it('exits 3 with a login hint when nothing is stored, for every command that calls the API', async () => {
    const configDir = newConfigDir();
    for (const args of [
      ['orgs', 'list'],
      ['prompts', 'get', 'prm_x', '--org', 'org_x'],
      ['org', 'use', 'org_x'],
      ['pull', '--prompt', 'prm_x', '--org', 'org_x'],
    ]) {
      const result = await runCli(args, { configDir, url: app.url });
      expect(result.code, args.join(' ')).toBe(3);
      expect(result.stderr).toMatch(/Not logged in .*promptloop login/);
      expect(result.stdout).toBe('');
    }
    expect(app.requests.some((r) => r.path.startsWith('/api/v1/organizations'))).toBe(false);
  });

  it('exits 2 for usage errors, before calling the server, and 0 for --help', async () => {
    const { cli } = await loggedIn();
    const before = app.requests.length;
    for (const args of [
      ['nope'],
      ['orgs', 'list', '--nope'],
      ['prompts', 'get'],
      ['prompts', 'get', 'a', 'b'],
      ['orgs', 'list', '--limit', 'ten'],
      ['evals', 'start', 'prm_x', '--scope', 'huge'],
      ['orgs', 'create', '--body', '{'],
    ]) {
      const result = await cli(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr.length).toBeGreaterThan(0);
    }
    expect(app.requests.length).toBe(before);
    const help = await cli(['prompts', 'get', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: promptloop prompts get <promptId> [options]');
    expect(help.stdout).toContain('Exit codes:');
    const group = await cli(['evals', '--help']);
    expect(group.code).toBe(0);
    expect(group.stdout).toContain('Usage: promptloop evals <command> [options]');
    expect(group.stdout).toContain('  evals wait');
    expect(group.stdout).not.toContain('  orgs list');
    // Global options with a value before a group's or the top --help: the value is not a command.
    const afterUrl = await cli(['--url', 'http://127.0.0.1:1', 'evals', '--help']);
    expect([afterUrl.code, afterUrl.stderr]).toEqual([0, '']);
    expect(afterUrl.stdout).toContain('Usage: promptloop evals <command> [options]');
    const topAfterOrg = await cli(['--org', 'org_x', '--help']);
    expect([topAfterOrg.code, topAfterOrg.stderr]).toEqual([0, '']);
    const top = await cli(['--help']);
    expect(top.code).toBe(0);
    for (const command of ['login', 'logout', 'pull', 'orgs list', 'prompts get', 'evals start', 'org use'])
      expect(top.stdout).toContain(`  ${command}`);
    for (const variable of ['PROMPTLOOP_URL', 'PROMPTLOOP_CLIENT_ID', 'PROMPTLOOP_MAX_ATTEMPTS'])
      expect(top.stdout).toContain(`  ${variable}`);
  }, 90_000); // ten CLI processes, one after another: slow when the suite's other file shares the cores

  it('exits 3 when the server refuses the stored token and there is no refresh token', async () => {
    const configDir = newConfigDir();
    seedLogin(configDir, app.url, { accessToken: 'not-a-jwt' });
    const result = await runCli(['orgs', 'list'], { configDir, url: app.url });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/promptloop login/);
  });

  it('exits 1 with the error envelope on stdout under --json when the API refuses', async () => {
    const { cli } = await loggedIn();
    const result = await cli(['orgs', 'get', '--org', 'org_doesnotexist', '--json']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).error.code).toBe('not_found');
    expect(result.stderr).toContain('not_found');
  });

  it('exits 1 when the server cannot be reached, after retrying', async () => {
    const configDir = newConfigDir();
    const url = `http://127.0.0.1:${await closedPort()}`;
    seedLogin(configDir, url, { accessToken: 'x' });
    const result = await runCli(['orgs', 'list'], { configDir, url, env: { PROMPTLOOP_MAX_ATTEMPTS: '2' } });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/gave up after 2 attempts/);
    expect(result.stderr).toContain(url);
  });

  it('PROMPTLOOP_TIMEOUT_SECONDS bounds each attempt; a bad PROMPTLOOP_MAX_ATTEMPTS or timeout is a usage error', async () => {
    // A server that accepts the connection and never answers.
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    try {
      const configDir = newConfigDir();
      seedLogin(configDir, url, { accessToken: 'x' });
      const result = await runCli(['orgs', 'list'], {
        configDir,
        url,
        env: { PROMPTLOOP_MAX_ATTEMPTS: '1', PROMPTLOOP_TIMEOUT_SECONDS: '1' },
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`${url} did not answer within 1 s`);
      for (const env of <Record<string, string>[]>[
        { PROMPTLOOP_MAX_ATTEMPTS: 'abc' },
        { PROMPTLOOP_MAX_ATTEMPTS: '0' },
        { PROMPTLOOP_TIMEOUT_SECONDS: '-5' },
      ]) {
        const refused = await runCli(['orgs', 'list'], { configDir, url, env });
        expect(refused.code, JSON.stringify(env)).toBe(2);
        expect(refused.stderr).toMatch(/must be a whole number of at least 1/);
      }
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

describe('promptloop: --json and summaries', () => {
  it('prints exactly the API JSON with --json, and a table without it', async () => {
    const { user, cli } = await loggedIn();
    const org = await newOrganization(user, 'Json Org');
    const json = await cli(['orgs', 'list', '--json']);
    expect(json.code).toBe(0);
    const direct = await user.call('GET', '/organizations');
    expect(JSON.parse(json.stdout)).toEqual(direct.body);
    const table = await cli(['orgs', 'list']);
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^id\s+name/);
    expect(table.stdout).toContain(org.id);
    expect(table.stdout).toContain('Json Org');
  });

  it('creates with positionals and flags, and prints the created resource', async () => {
    const { user, cli } = await loggedIn();
    const created = await cli(['orgs', 'create', 'Made by CLI', '--json']);
    expect(created.code).toBe(0);
    const org = JSON.parse(created.stdout);
    expect(org).toMatchObject({ id: expect.stringMatching(/^org_/), name: 'Made by CLI', role: 'admin' });
    const prompt = await cli(['prompts', 'create', 'Support answers', '--org', org.id, '--json']);
    expect(prompt.code).toBe(0);
    expect(JSON.parse(prompt.stdout)).toMatchObject({ name: 'Support answers', state: 'setup' });
    const listed = await user.call('GET', `/organizations/${org.id}/prompts`);
    expect(listed.body.items.map((p: { name: string }) => p.name)).toEqual(['Support answers']);
  });

  it('a created key’s secret is printed with a note (on stderr) that it is shown once; a revoked key says so in the list', async () => {
    const { user, cli } = await loggedIn();
    const org = await newOrganization(user, 'Keys Org');
    const made = await cli([
      'ingestion-keys',
      'create',
      'CI',
      '--application',
      'bot',
      '--environment',
      'ci',
      '--org',
      org.id,
    ]);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/secret\s+plt_/);
    expect(made.stderr).toContain('The secret is shown once: store it now, it cannot be shown again.');
    const id = /\b(ikey_[0-9a-z]+)/.exec(made.stdout)![1];
    expect((await cli(['ingestion-keys', 'revoke', id, '--org', org.id])).code).toBe(0);
    const listed = await cli(['ingestion-keys', 'list', '--org', org.id]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout.split('\n')[0]).toMatch(/revokedAt/);
    // The revoked key's row has two times: created and revoked (it was never used).
    const row = listed.stdout.split('\n').find((line) => line.startsWith(id))!;
    expect(row.match(/\d{4}-\d\d-\d\dT/g)).toHaveLength(2);
  });
});

describe('promptloop: complex inputs', () => {
  it('takes a whole body from --body @file (or JSON), with flags overriding its fields', async () => {
    const { user, cli } = await loggedIn();
    const org = await newOrganization(user);
    const prompt = (await user.call('POST', `/organizations/${org.id}/prompts`, { body: { name: 'Body test' } })).body;
    const dir = newConfigDir();
    const file = path.join(dir, 'draft.json');
    writeFileSync(
      file,
      JSON.stringify({
        content: { messages: [{ role: 'system', content: 'Hello {{name}}' }], inputType: 'variables' },
        revision: 99,
      }),
    );
    const stale = await cli(['drafts', 'update', prompt.id, '--org', org.id, '--body', `@${file}`, '--json']);
    expect(stale.code).toBe(1);
    expect(JSON.parse(stale.stdout).error.code).toBe('draft_conflict');
    const current = (await user.call('GET', `/organizations/${org.id}/prompts/${prompt.id}/draft`)).body.revision;
    const updated = await cli([
      'drafts',
      'update',
      prompt.id,
      '--org',
      org.id,
      '--body',
      `@${file}`,
      '--revision',
      String(current),
      '--json',
    ]);
    expect(updated.code, updated.stderr).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({
      variables: ['name'],
      content: { messages: [{ role: 'system', content: 'Hello {{name}}' }] },
    });
    // Nested fields as JSON flags; a scalar flag converted before sending.
    const inline = await cli([
      'dataset',
      'add',
      prompt.id,
      '--org',
      org.id,
      '--revision',
      '0',
      '--row',
      '{"input":"hi","expectedOutput":"hello"}',
      '--json',
    ]);
    expect(inline.code, inline.stderr).toBe(0);
    expect(JSON.parse(inline.stdout)).toMatchObject({ input: 'hi', expectedOutput: 'hello' });
    const missing = await cli(['drafts', 'update', prompt.id, '--org', org.id]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--content');
  });

  it("takes a field named like a global option (a webhook's url) as its argument, beside --url for the server", async () => {
    const { user, cli } = await loggedIn();
    const org = await newOrganization(user);
    const target = 'https://hooks.example.invalid/promptloop';
    const created = await cli([
      'webhooks',
      'create',
      target,
      '--events',
      'prompt.version.created',
      '--org',
      org.id,
      '--url',
      app.url,
      '--json',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const webhook = JSON.parse(created.stdout).webhook;
    expect(webhook).toMatchObject({ url: target, events: ['prompt.version.created'] });
    const moved = await cli(['webhooks', 'update', webhook.id, `${target}/v2`, '--org', org.id, '--url', app.url]);
    expect(moved.code, moved.stderr).toBe(0);
    const read = await user.call('GET', `/organizations/${org.id}/webhooks/${webhook.id}`);
    expect(read.body.url).toBe(`${target}/v2`);
    // Without it (and not in --body): a usage error naming the argument, before any request.
    const before = app.requests.length;
    const missing = await cli(['webhooks', 'create', '--events', 'prompt.version.created', '--org', org.id]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('Missing <url> (or give it in --body)');
    expect(app.requests.length).toBe(before);
    const help = await cli(['webhooks', 'create', '--help']);
    expect(help.stdout).not.toContain('Same as --url');
  });
});

// An admin's organization named `name` with a second person in it as an editor (whom a test then removes).
async function sharedOrganization(name: string) {
  const admin = await newUser();
  const member = await newUser();
  const shared = await newOrganization(admin, name);
  const added = await admin.call('POST', `/organizations/${shared.id}/members`, {
    body: { email: member.email, role: 'editor' },
  });
  expect(added.status).toBe(201);
  return { admin, member, shared };
}

describe('promptloop: organization context', () => {
  it('uses --org, else the saved context, else the account default; never switches silently', async () => {
    const { user, cli, configDir } = await loggedIn();
    const first = await newOrganization(user, 'First'); // the account default (first organization)
    const second = await newOrganization(user, 'Second');
    const viaDefault = await cli(['orgs', 'get', '--json']);
    expect(viaDefault.code).toBe(0);
    expect(JSON.parse(viaDefault.stdout).id).toBe(first.id);
    const viaFlag = await cli(['orgs', 'get', '--org', second.id, '--json']);
    expect(JSON.parse(viaFlag.stdout).id).toBe(second.id);

    const use = await cli(['org', 'use', second.id]);
    expect(use.code).toBe(0);
    expect(use.stdout).toContain('Second');
    const viaContext = await cli(['orgs', 'get', '--json']);
    expect(JSON.parse(viaContext.stdout).id).toBe(second.id);
    // Changing the account default does not move an established context.
    const setDefault = await cli(['account', 'set-default-org', first.id]);
    expect(setDefault.code).toBe(0);
    expect(JSON.parse((await cli(['orgs', 'get', '--json'])).stdout).id).toBe(second.id);
    const show = await cli(['org', 'show']);
    expect(show.stdout).toContain(second.id);
    expect(show.stdout).toContain('saved context');

    // The files are private to the user.
    expect(statSync(configDir).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(configDir, 'config.json')).mode & 0o777).toBe(0o600);
    expect(statSync(path.join(configDir, 'credentials.json')).mode & 0o777).toBe(0o600);

    expect((await cli(['org', 'clear'])).code).toBe(0);
    expect(JSON.parse((await cli(['orgs', 'get', '--json'])).stdout).id).toBe(first.id);
  });

  it('refuses an unknown organization in `org use` (exit 1) and keeps the old context', async () => {
    const { user, cli, configDir } = await loggedIn();
    const org = await newOrganization(user);
    expect((await cli(['org', 'use', org.id])).code).toBe(0);
    const bad = await cli(['org', 'use', 'org_nobodyhasthis']);
    expect(bad.code).toBe(1);
    expect(JSON.parse((await cli(['orgs', 'get', '--json'])).stdout).id).toBe(org.id);
    expect(configDir).toBeTruthy();
  });

  it('a saved context whose organization is no longer yours says so, with what to do', async () => {
    const { admin, member, shared } = await sharedOrganization('Left behind');
    const { cli } = await loggedIn(member);
    expect((await cli(['org', 'use', shared.id])).code).toBe(0);
    expect((await admin.call('DELETE', `/organizations/${shared.id}/members/${member.id}`)).status).toBe(204);
    const result = await cli(['prompts', 'list']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('not_found: Organization not found.');
    expect(result.stderr).toContain(`${shared.id} is the organization saved with \`promptloop org use\``);
    expect(result.stderr).toContain('promptloop org clear');
    // With --org the hint is not given: the organization was named, not saved.
    const named = await cli(['prompts', 'list', '--org', shared.id]);
    expect(named.code).toBe(1);
    expect(named.stderr).not.toContain('org use');
  });

  it('prints the choose_organization choices and exits 2 when the account default is no longer accessible', async () => {
    const { admin, member, shared } = await sharedOrganization('Shared');
    const set = await member.call('PUT', '/me/default-organization', { body: { organizationId: shared.id } });
    expect(set.status).toBe(200);
    const own = await newOrganization(member, 'Own');
    const { cli } = await loggedIn(member);
    expect(JSON.parse((await cli(['orgs', 'get', '--json'])).stdout).id).toBe(shared.id);

    const removed = await admin.call('DELETE', `/organizations/${shared.id}/members/${member.id}`);
    expect(removed.status).toBe(204);
    const before = (await member.call('GET', `/organizations/${own.id}/prompts`)).body.items.length;
    const result = await cli(['prompts', 'create', 'Should not land anywhere']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('choose_organization');
    expect(result.stderr).toContain(own.id);
    expect(result.stderr).toContain('Own');
    expect(result.stderr).not.toContain(shared.id + ' ');
    expect((await member.call('GET', `/organizations/${own.id}/prompts`)).body.items.length).toBe(before);
    const json = await cli(['orgs', 'get', '--json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout).error).toMatchObject({
      code: 'choose_organization',
      details: { organizations: [expect.objectContaining({ id: own.id })] },
    });
    // The command whose whole job is resolving the default says the same.
    const resolved = await cli(['account', 'default-org']);
    expect(resolved.code).toBe(2);
    expect(resolved.stderr).toContain('Organizations you can use:');
    expect(resolved.stderr).toContain(own.id);
    // An explicit choice works.
    expect((await cli(['prompts', 'create', 'Lands in Own', '--org', own.id])).code).toBe(0);
  });

  it('an unset default (cleared with `account set-default-org null`) is a choice too: exit 2', async () => {
    const { user, cli } = await loggedIn();
    const org = await newOrganization(user, 'Only one');
    const cleared = await cli(['account', 'set-default-org', 'null', '--json']);
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(JSON.parse(cleared.stdout).defaultOrganizationId).toBeNull();
    const result = await cli(['prompts', 'list']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(org.id);
    expect(result.stdout).toBe('');
  });
});

describe('promptloop: idempotency and retries', () => {
  it('reuses the Idempotency-Key when a response is lost, so the write happens once', async () => {
    const { user, configDir } = await loggedIn();
    let dropped = false;
    const proxy = await startProxy(app.url, (req) => {
      if (req.method === 'POST' && !dropped) {
        dropped = true;
        return 'drop';
      }
      return 'pass';
    });
    try {
      seedLogin(configDir, proxy.url, { accessToken: user.token });
      const result = await runCli(['orgs', 'create', 'Exactly once', '--json'], { configDir, url: proxy.url });
      expect(result.code).toBe(0);
      const posts = proxy.seen.filter((r) => r.method === 'POST');
      expect(posts).toHaveLength(2);
      expect(posts[0].idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
      expect(posts[1].idempotencyKey).toBe(posts[0].idempotencyKey);
      expect(result.stderr).toContain('replayed');
      const orgs = (await user.call('GET', '/organizations')).body.items.filter(
        (o: { name: string }) => o.name === 'Exactly once',
      );
      expect(orgs).toHaveLength(1);
      expect(JSON.parse(result.stdout).id).toBe(orgs[0].id);
    } finally {
      await proxy.stop();
    }
  });

  it('waits Retry-After on 503 and 429, keeps the key, and a new command gets a new key', async () => {
    const { user, configDir } = await loggedIn();
    const proxy = await startProxy(app.url, (_req, attempt) => (attempt === 1 ? 503 : attempt === 2 ? 429 : 'pass'));
    try {
      seedLogin(configDir, proxy.url, { accessToken: user.token });
      const result = await runCli(['orgs', 'create', 'After retries'], { configDir, url: proxy.url });
      expect(result.code).toBe(0);
      const [a, b, c] = proxy.seen;
      expect(new Set([a.idempotencyKey, b.idempotencyKey, c.idempotencyKey]).size).toBe(1);
      expect(b.at - a.at).toBeGreaterThanOrEqual(950); // Retry-After: 1
      expect(c.at - b.at).toBeGreaterThanOrEqual(950);
      const again = await runCli(['orgs', 'create', 'After retries'], { configDir, url: proxy.url });
      expect(again.code).toBe(0);
      expect(proxy.seen.at(-1)!.idempotencyKey).not.toBe(a.idempotencyKey);
      expect(storedLogin(configDir, proxy.url)?.accessToken).toBe(user.token);
    } finally {
      await proxy.stop();
    }
  });

  it('asks again, with the same key, while the first attempt is still in progress (409 idempotency_in_progress)', async () => {
    const { user, configDir } = await loggedIn();
    const proxy = await startProxy(app.url, (_req, attempt) => (attempt === 1 ? 409 : 'pass'));
    try {
      seedLogin(configDir, proxy.url, { accessToken: user.token });
      const result = await runCli(['orgs', 'create', 'After in-progress', '--json'], { configDir, url: proxy.url });
      expect(result.code, result.stderr).toBe(0);
      expect(proxy.seen).toHaveLength(2);
      expect(proxy.seen[1].idempotencyKey).toBe(proxy.seen[0].idempotencyKey);
    } finally {
      await proxy.stop();
    }
  });

  it('sends no Idempotency-Key on reads', async () => {
    const { cli } = await loggedIn();
    const start = app.requests.length;
    expect((await cli(['orgs', 'list'])).code).toBe(0);
    expect(app.requests.slice(start).every((r) => r.idempotencyKey === null)).toBe(true);
  });
});
