import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { Promptloop, parseSnapshot } from '@/sdk/src/index';
import { newOrganization, newUser, type TestUser } from '../helpers/api';
import { newConfigDir, runCli, seedLogin, startAppServer, type AppServer } from '../helpers/cli';
import { publishBaseline } from '../helpers/prompts';
import { closedPort } from '../helpers/net';

// `promptloop pull`: the snapshot is the SDK's fallback format with entries identical to what the
// retrieval endpoint returns, and the .d.ts makes compile() type-checked by tsc.

const root = path.resolve(import.meta.dirname, '../..');
let app: AppServer;
let user: TestUser;
let orgId: string;
let greeting: { id: string; v1: string; v2: string };
let chat: { id: string };
let configDir: string;

const content = (text: string, inputType: 'variables' | 'user_message') => ({
  messages: [{ role: 'system', content: text }],
  inputType,
});

async function draft(promptId: string, text: string, inputType: 'variables' | 'user_message') {
  const path = `/organizations/${orgId}/prompts/${promptId}/draft`;
  const current = await user.call('GET', path);
  const saved = await user.call('PUT', path, {
    body: { content: content(text, inputType), revision: current.body.revision },
  });
  if (saved.status !== 200) throw new Error(JSON.stringify(saved.body));
  return saved.body as { revision: number };
}

async function retrieve(promptId: string, query = ''): Promise<unknown> {
  const key = await user.call('POST', `/organizations/${orgId}/prompts/${promptId}/keys`, {
    body: { name: 'pull test' },
  });
  const response = await fetch(`${app.url}/api/v1/prompts/${promptId}${query}`, {
    headers: { authorization: `Bearer ${key.body.secret}` },
  });
  expect(response.status).toBe(200);
  return response.json();
}

beforeAll(async () => {
  await getDb();
  app = await startAppServer();
  user = await newUser();
  orgId = (await newOrganization(user, 'Pull Org')).id;
  const created = await user.call('POST', `/organizations/${orgId}/prompts`, { body: { name: 'Greeting' } });
  await draft(created.body.id, 'Greet {{customer}} about {{ topic }}. Again: {{customer}}.', 'variables');
  const v1 = await publishBaseline(user, orgId, created.body.id);
  const d2 = await draft(created.body.id, 'Hello {{customer}}, you wrote from {{country}}.', 'variables');
  const v2 = await user.call('POST', `/organizations/${orgId}/prompts/${created.body.id}/versions`, {
    body: { draftRevision: d2.revision },
  });
  const moved = await user.call('PUT', `/organizations/${orgId}/prompts/${created.body.id}/labels/staging`, {
    body: { versionId: v2.body.id },
  });
  expect(moved.status).toBe(200);
  greeting = { id: created.body.id, v1: v1.id, v2: v2.body.id };
  const other = await user.call('POST', `/organizations/${orgId}/prompts`, { body: { name: 'Chat' } });
  await draft(other.body.id, 'You answer questions.', 'user_message');
  await publishBaseline(user, orgId, other.body.id);
  chat = { id: other.body.id };
  configDir = newConfigDir();
  seedLogin(configDir, app.url, { accessToken: user.token });
}, 120_000);
afterAll(() => app?.stop());

function tsc(project: string) {
  return spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', project], {
    encoding: 'utf8',
  });
}

describe('promptloop pull', () => {
  it('writes the SDK fallback snapshot (identical to retrieval) and a .d.ts that type-checks compile()', async () => {
    const dir = newConfigDir();
    const result = await runCli(
      [
        'pull',
        '--org',
        orgId,
        '--prompt',
        greeting.id,
        '--prompt',
        `${greeting.id}@staging`,
        '--prompt',
        `${greeting.id}@version:1`,
        '--prompt',
        chat.id,
        '--out',
        path.join(dir, 'snap.json'),
        '--types',
        path.join(dir, 'prompts.d.ts'),
      ],
      { configDir, url: app.url },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`${greeting.id}  label:staging → version 2  Greeting`);

    const snapshot = JSON.parse(readFileSync(path.join(dir, 'snap.json'), 'utf8'));
    expect(parseSnapshot(snapshot)).toEqual(snapshot);
    expect(Object.keys(snapshot.prompts[greeting.id]).sort()).toEqual([
      'label:production',
      'label:staging',
      'version:1',
    ]);
    expect(snapshot.prompts[greeting.id]['label:production']).toEqual(await retrieve(greeting.id));
    expect(snapshot.prompts[greeting.id]['label:staging']).toEqual(await retrieve(greeting.id, '?label=staging'));
    expect(snapshot.prompts[greeting.id]['version:1']).toEqual(await retrieve(greeting.id, '?version=1'));
    expect(snapshot.prompts[chat.id]['label:production']).toEqual(await retrieve(chat.id));

    // The SDK serves it as its fallback when the server cannot be reached.
    const sdk = new Promptloop({
      baseUrl: `http://127.0.0.1:${await closedPort()}`,
      apiKey: 'plr_unused',
      fallback: snapshot,
      timeoutMs: 2000,
    });
    const fallback = await sdk.getPrompt(greeting.id, { label: 'staging' });
    expect(fallback.source).toBe('fallback');
    expect(fallback.compile({ customer: 'Ada', country: 'NZ' }).messages[0].content).toBe(
      'Hello Ada, you wrote from NZ.',
    );

    // The declarations: the right calls compile, wrong variables are type errors.
    const declarations = readFileSync(path.join(dir, 'prompts.d.ts'), 'utf8');
    expect(declarations).toContain(`"label:production": { customer: unknown; topic: unknown };`);
    expect(declarations).toContain(`"label:staging": { customer: unknown; country: unknown };`);
    expect(declarations).toContain('{ input: string }');
    writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'ES2022',
          module: 'ESNext',
          moduleResolution: 'bundler',
          lib: ['ES2022', 'DOM'],
          types: [],
          skipLibCheck: true,
          paths: { '@promptloop/sdk': [path.join(root, 'sdk/src/index.ts')] },
        },
        files: ['prompts.d.ts', 'app.ts'],
      }),
    );
    const good = `import { Promptloop } from '@promptloop/sdk';
const client = new Promptloop({ baseUrl: 'http://x', apiKey: 'plr_x' });
export async function run() {
  (await client.getPrompt('${greeting.id}')).compile({ customer: 'Ada', topic: 'billing' });
  (await client.getPrompt('${greeting.id}', { label: 'staging' })).compile({ customer: 'Ada', country: 'NZ' });
  (await client.getPrompt('${greeting.id}', { label: 'staging', subject: 'user-1' })).compile({ customer: 'Ada', country: 'NZ' });
  (await client.getPrompt('${greeting.id}', { version: 1 })).compile({ customer: 1, topic: { any: 'json' } });
  (await client.getPrompt('${chat.id}')).compile({ input: 'Where is my order?' });
}
`;
    writeFileSync(path.join(dir, 'app.ts'), good);
    const ok = tsc(dir);
    expect(ok.stdout + ok.stderr).toBe('');
    expect(ok.status).toBe(0);
    writeFileSync(
      path.join(dir, 'app.ts'),
      `${good}
export async function wrong() {
  (await client.getPrompt('${greeting.id}')).compile({ customer: 'Ada' });
  (await client.getPrompt('${greeting.id}', { label: 'staging' })).compile({ customer: 'Ada', country: 'NZ', topic: 'x' });
  (await client.getPrompt('${chat.id}')).compile({ question: 'x' });
  (await client.getPrompt('${chat.id}', { subject: 'user-1' })).compile({ question: 'x' });
}
`,
    );
    const bad = tsc(dir);
    expect(bad.status).not.toBe(0);
    expect(bad.stdout).toContain("Property 'topic' is missing");
    expect(bad.stdout).toContain("'topic' does not exist");
    expect(bad.stdout).toContain("'question' does not exist");
    expect(bad.stdout.match(/error TS/g)).toHaveLength(4);
  }, 120_000);

  it('reads the prompt list and output paths from promptloop.json, and --json reports what it wrote', async () => {
    const project = newConfigDir();
    writeFileSync(
      path.join(project, 'promptloop.json'),
      JSON.stringify({
        prompts: [chat.id, `${greeting.id}@label:staging`],
        organizationId: orgId,
        out: 'gen/snapshot.json',
        types: 'gen/prompts.d.ts',
      }),
    );
    const result = await runCli(['pull', '--json'], { configDir, url: app.url, cwd: project });
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toEqual({
      snapshot: path.join(project, 'gen/snapshot.json'),
      types: path.join(project, 'gen/prompts.d.ts'),
      prompts: [
        { promptId: chat.id, selector: 'label:production', version: 1 },
        { promptId: greeting.id, selector: 'label:staging', version: 2 },
      ],
    });
    expect(
      Object.keys(JSON.parse(readFileSync(path.join(project, 'gen/snapshot.json'), 'utf8')).prompts).sort(),
    ).toEqual([chat.id, greeting.id].sort());
    expect(existsSync(path.join(project, 'gen/prompts.d.ts'))).toBe(true);
  });

  it('refuses without writing: no prompts named (2), a bad reference (2), an unassigned label or unknown prompt (1)', async () => {
    const project = newConfigDir();
    mkdirSync(path.join(project, 'out'));
    const out = ['--out', path.join(project, 'out/s.json'), '--types', path.join(project, 'out/t.d.ts')];
    const none = await runCli(['pull', '--org', orgId, ...out], { configDir, url: app.url, cwd: project });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--prompt');
    const badRef = await runCli(['pull', '--org', orgId, '--prompt', `${greeting.id}@Not A Label`, ...out], {
      configDir,
      url: app.url,
      cwd: project,
    });
    expect(badRef.code).toBe(2);
    const unassigned = await runCli(
      ['pull', '--org', orgId, '--prompt', greeting.id, '--prompt', `${greeting.id}@canary`, ...out],
      { configDir, url: app.url, cwd: project },
    );
    expect(unassigned.code).toBe(1);
    expect(unassigned.stderr).toContain('label "canary" points at no version');
    const unknown = await runCli(['pull', '--org', orgId, '--prompt', 'prm_doesnotexist', ...out], {
      configDir,
      url: app.url,
      cwd: project,
    });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('not_found');
    expect(existsSync(path.join(project, 'out/s.json'))).toBe(false);
    expect(existsSync(path.join(project, 'out/t.d.ts'))).toBe(false);
  });
});
