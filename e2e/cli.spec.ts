import { spawn } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createAccount, expect, test } from './fixtures';

// The CLI as a user runs it: `promptloop login --no-browser` prints the authorization URL, the
// person signs in and allows in Chromium, the CLI's loopback listener receives the code and the
// tokens are stored; then commands work, and logout ends it.
const appUrl = 'http://localhost:3100';
const root = path.resolve(import.meta.dirname, '..');

type Run = { code: Promise<number>; stdout: () => string; stderr: () => string };

function cli(args: string[], configDir: string): Run {
  const child = spawn(process.execPath, [path.join(root, 'bin/promptloop.mjs'), ...args], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      HOME: configDir,
      PROMPTLOOP_CONFIG_DIR: configDir,
      PROMPTLOOP_URL: appUrl,
      NODE_NO_WARNINGS: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const code = new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)));
  return { code, stdout: () => stdout, stderr: () => stderr };
}

test('promptloop login --no-browser: sign in and Allow in the browser, then commands work; logout ends it', async ({
  browser,
  request,
}) => {
  test.setTimeout(120_000);
  const account = await createAccount(request, 'cli');
  const configDir = mkdtempSync(path.join(os.tmpdir(), 'promptloop-cli-e2e-'));
  const login = cli(['login', '--no-browser'], configDir);
  await expect.poll(() => /^http\S+\/oauth\/authorize\?\S+$/m.test(login.stdout()), { timeout: 30_000 }).toBe(true);
  const authorizeUrl = /^(http\S+\/oauth\/authorize\?\S+)$/m.exec(login.stdout())![1];
  expect(new URL(authorizeUrl).searchParams.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);

  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto(authorizeUrl);
    await expect(page).toHaveURL(/\/sign-in\?/);
    await page.getByLabel('Email').fill(account.email);
    await page.getByLabel('Password').fill(account.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Promptloop CLI');
    await page.getByRole('button', { name: 'Allow', exact: true }).click();
    // The CLI's own page on the loopback listener.
    await expect(page.getByRole('heading', { name: 'Logged in' })).toBeVisible();
    expect(new URL(page.url()).hostname).toBe('127.0.0.1');
  } finally {
    await context.close();
  }
  expect(await login.code, login.stderr()).toBe(0);
  expect(login.stdout()).toContain(`Logged in to ${appUrl} as ${account.email}.`);
  expect(statSync(path.join(configDir, 'credentials.json')).mode & 0o777).toBe(0o600);

  const created = cli(['orgs', 'create', 'Made from the CLI', '--json'], configDir);
  expect(await created.code, created.stderr()).toBe(0);
  const org = JSON.parse(created.stdout());
  expect(org).toMatchObject({ name: 'Made from the CLI', role: 'admin' });
  const listed = cli(['orgs', 'list'], configDir);
  expect(await listed.code, listed.stderr()).toBe(0);
  expect(listed.stdout()).toContain(org.id);

  const logout = cli(['logout'], configDir);
  expect(await logout.code, logout.stderr()).toBe(0);
  const after = cli(['orgs', 'list'], configDir);
  expect(await after.code).toBe(3);
  expect(after.stderr()).toContain('promptloop login');
});
