import { execFile } from 'node:child_process';
import { builtinModules } from 'node:module';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { newOrganization, newUser, type TestUser } from '../helpers/api';
import { promptWithVersions } from '../helpers/prompts';
import { runCli, seedLogin, startAppServer, type AppServer } from '../helpers/cli';

// The installable CLI (`@promptloop/cli`) as a user gets it: `npm pack` of cli/ (its prepack builds
// the bundle), the tarball installed offline into a fresh project outside the repository, and
// `npx promptloop` run there against the app over HTTP. The bundle must need nothing from this
// repository (no node_modules up the tree) and hold no server-only code.

const root = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const scratch = mkdtempSync(path.join(os.tmpdir(), 'promptloop-cli-package-'));
const project = path.join(scratch, 'project');
const configDir = path.join(scratch, 'config');
// npm without a network: its own cache, offline, no update check.
const npmEnv = {
  PATH: process.env.PATH ?? '',
  NODE_ENV: 'production' as const,
  HOME: scratch,
  npm_config_cache: path.join(scratch, 'npm-cache'),
  npm_config_offline: 'true',
  npm_config_update_notifier: 'false',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
};

let app: AppServer;
let tarball: string;
let user: TestUser;
let organizationId: string;

beforeAll(async () => {
  await getDb();
  app = await startAppServer();
  await run('npm', ['pack', '--pack-destination', scratch], { cwd: path.join(root, 'cli'), env: npmEnv });
  tarball = path.join(scratch, 'promptloop-cli-0.1.0.tgz');
  mkdirSync(project);
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'uses-promptloop', private: true }));
  await run('npm', ['install', tarball, '--offline', '--no-audit', '--no-fund'], { cwd: project, env: npmEnv });
  user = await newUser();
  organizationId = (await newOrganization(user)).id;
  seedLogin(configDir, app.url, { accessToken: user.token });
}, 180_000);
afterAll(async () => {
  await app?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

/** `npx promptloop …` in the fresh project. */
const npx = (args: string[], options: { login?: boolean } = {}) =>
  runCli(args, {
    configDir: options.login === false ? path.join(scratch, 'no-login') : configDir,
    url: app.url,
    cwd: project,
    env: npmEnv,
    program: ['npx', 'promptloop'],
  });

describe('the packed tarball', () => {
  it('holds the bundle, the README and the manifest; the manifest declares the bin, engines and no dependencies', async () => {
    expect(project.startsWith(root)).toBe(false);
    const { stdout } = await run('tar', ['-tzf', tarball]);
    expect(stdout.trim().split('\n').sort()).toEqual([
      'package/README.md',
      'package/dist/promptloop.mjs',
      'package/package.json',
    ]);
    const installed = path.join(project, 'node_modules', '@promptloop', 'cli');
    const manifest = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8'));
    const rootManifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({
      name: '@promptloop/cli',
      type: 'module',
      bin: { promptloop: 'dist/promptloop.mjs' },
      engines: { node: rootManifest.engines.node },
    });
    expect(manifest.dependencies ?? {}).toEqual({});
    const bundle = readFileSync(path.join(installed, 'dist', 'promptloop.mjs'), 'utf8');
    expect(bundle.startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(statSync(path.join(installed, 'dist', 'promptloop.mjs')).mode & 0o111).not.toBe(0);
  });

  it('bundles only the CLI, the operation table and zod: no database, server or web-app code, and imports only Node built-ins', async () => {
    const { buildCli, forbiddenInputs } = (await import(pathToFileURL(path.join(root, 'cli', 'build.mjs')).href)) as {
      buildCli: (options: { write: boolean; outfile: string }) => Promise<{
        inputs: string[];
        bytes: number;
        metafile: { outputs: Record<string, { imports: { path: string; external?: boolean }[] }> };
      }>;
      forbiddenInputs: RegExp[];
    };
    const { inputs, bytes, metafile } = await buildCli({
      write: false,
      outfile: path.join(scratch, 'check', 'promptloop.mjs'),
    });
    expect(inputs).toContain('cli/entry.ts');
    expect(inputs).toContain('server/operations/index.ts');
    expect(inputs.some((input) => input.startsWith('node_modules/zod/'))).toBe(true);
    for (const input of inputs) {
      expect(input, input).not.toMatch(
        /^(db|app|components)\/|node_modules\/(postgres|@electric-sql\/pglite|next|drizzle-orm|pg-boss)\//,
      );
      expect(input, input).not.toMatch(
        /^server\/(api|http|auth\/(?!schemas)|billing\/(?!schemas)|evals\/(?!schemas)|oauth|mcp)/,
      );
    }
    // The guard the build applies would catch them.
    for (const bad of [
      'db/client.ts',
      'node_modules/postgres/src/index.js',
      'node_modules/@electric-sql/pglite/dist/index.js',
      'server/api/router.ts',
      'node_modules/next/dist/server.js',
    ])
      expect(
        forbiddenInputs.some((pattern) => pattern.test(bad)),
        bad,
      ).toBe(true);
    for (const fine of ['server/operations/index.ts', 'server/prompts/schemas.ts', 'cli/main.ts', 'sdk/src/prompt.ts'])
      expect(
        forbiddenInputs.some((pattern) => pattern.test(fine)),
        fine,
      ).toBe(false);
    const imports = Object.values(metafile.outputs).flatMap((output) => output.imports);
    for (const { path: specifier, external } of imports) {
      expect(external, specifier).toBe(true);
      expect(builtinModules.includes(specifier.replace(/^node:/, '')), specifier).toBe(true);
    }
    expect(bytes).toBeLessThan(600 * 1024);
  });
});

describe('npx promptloop outside the repository', () => {
  it('prints help and its version (exit 0) and refuses bad usage (exit 2)', async () => {
    const help = await npx(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: promptloop <command> [options]');
    for (const command of ['login', 'orgs list', 'labels move', 'evals start', 'export', 'import'])
      expect(help.stdout).toContain(`  ${command}`);
    const version = await npx(['--version']);
    expect(version).toMatchObject({
      code: 0,
      stdout: `promptloop ${JSON.parse(readFileSync(path.join(root, 'cli', 'package.json'), 'utf8')).version}\n`,
    });
    const moveHelp = await npx(['labels', 'move', '--help']);
    expect(moveHelp.code).toBe(0);
    // versionId is optional since a label can take a split instead (M10): the server says which is missing.
    expect(moveHelp.stdout).toContain('Usage: promptloop labels move <promptId> <label> [options]');
    expect(moveHelp.stdout).toContain('   or: promptloop labels move <promptId> <label> [versionId] [options]');
    expect(moveHelp.stdout).toContain('--split <json>');
    const unknown = await npx(['prompts', 'frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown command: promptloop prompts frobnicate');
  });

  it('runs commands against the server: exit 0 with the JSON, 1 for an API error, 3 without a login', async () => {
    const created = await npx([
      'prompts',
      'create',
      '--name',
      'Packaged CLI prompt',
      '--org',
      organizationId,
      '--json',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const prompt = JSON.parse(created.stdout);
    expect(prompt).toMatchObject({ name: 'Packaged CLI prompt', state: 'setup' });
    const listed = await npx(['prompts', 'list', '--org', organizationId, '--json']);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).items.map((p: { id: string }) => p.id)).toContain(prompt.id);

    const missing = await npx(['prompts', 'get', 'prm_doesnotexist', '--org', organizationId, '--json']);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout).error.code).toBe('not_found');

    const anonymous = await npx(['orgs', 'list'], { login: false });
    expect(anonymous.code).toBe(3);
    expect(anonymous.stderr).toMatch(/Not logged in .*promptloop login/);
  });

  it('labels move takes --version-id like evals start, and the version id as a trailing argument too', async () => {
    const fixture = await promptWithVersions(user, organizationId, 3);
    const [, v2, v3] = fixture.ids;
    const byFlag = await npx([
      'labels',
      'move',
      fixture.prompt.id,
      'staging',
      '--version-id',
      v2,
      '--org',
      organizationId,
      '--json',
    ]);
    expect(byFlag.code, byFlag.stderr).toBe(0);
    expect(JSON.parse(byFlag.stdout)).toMatchObject({ label: 'staging', versionId: v2 });
    const byArgument = await npx([
      'labels',
      'move',
      fixture.prompt.id,
      'staging',
      v3,
      '--org',
      organizationId,
      '--json',
    ]);
    expect(byArgument.code, byArgument.stderr).toBe(0);
    expect(JSON.parse(byArgument.stdout)).toMatchObject({ label: 'staging', versionId: v3 });

    const before = app.requests.length;
    const twice = await npx([
      'labels',
      'move',
      fixture.prompt.id,
      'staging',
      v2,
      '--version-id',
      v2,
      '--org',
      organizationId,
    ]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('Give versionId once: as an argument or as --version-id.');
    expect(app.requests.length).toBe(before);
    // Neither a version nor a split: the server refuses it (one rule across fields) and nothing moves.
    const none = await npx(['labels', 'move', fixture.prompt.id, 'staging', '--org', organizationId]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('invalid_request');
    const labels = await user.call('GET', `${fixture.base}/labels`);
    expect(labels.body.items.find((l: { label: string }) => l.label === 'staging')).toMatchObject({ versionId: v3 });
  });
});
