import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { newOrganization, newUser, type TestUser } from '../helpers/api';
import { newConfigDir, runCli, seedLogin, startAppServer, startProxy, type AppServer } from '../helpers/cli';
import { documentedPrompts, startLangfuseServer } from '../helpers/langfuse-server';
import { createPrompt, promptWithVersions } from '../helpers/prompts';

// `promptloop export` and `promptloop import` as a user runs them: the real binary as a child
// process against the app over HTTP (the real export and import services, a real database), and
// `import langfuse --host` against a local server speaking Langfuse's public API.

const binary = path.resolve(import.meta.dirname, '../../bin/promptloop.mjs');
let app: AppServer;
let user: TestUser;
let configDir: string;
const scratch = mkdtempSync(path.join(os.tmpdir(), 'promptloop-cli-imports-'));
const file = (name: string, content: unknown) => {
  const at = path.join(scratch, name);
  writeFileSync(at, typeof content === 'string' ? content : JSON.stringify(content));
  return at;
};
const cli = (args: string[], env: Record<string, string> = {}, url = app.url) =>
  runCli(args, { configDir, url, env: { PROMPTLOOP_RETRY_BASE_MS: '20', ...env } });

async function promptsOf(organizationId: string): Promise<{ id: string; name: string; state: string }[]> {
  const all: { id: string; name: string; state: string }[] = [];
  let cursor: string | undefined;
  do {
    const page = await user.call('GET', `/organizations/${organizationId}/prompts`, {
      query: `limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    });
    all.push(...page.body.items);
    cursor = page.body.nextCursor ?? undefined;
  } while (cursor);
  return all;
}

const importPosts = () => app.requests.filter((r) => r.method === 'POST' && /\/imports$/.test(r.path));

// OpenAI request bodies (Chat Completions and Responses API shapes, from platform.openai.com/docs
// "Text generation" and "Structured outputs") with our `name`, as a .jsonl file, one per line.
const openaiBodies = [
  {
    name: 'Haiku writer',
    model: 'gpt-4o',
    messages: [
      { role: 'developer', content: 'You are a helpful assistant that writes haiku about {{topic}}.' },
      { role: 'user', content: 'Write a haiku.' },
    ],
    temperature: 0.7,
  },
  {
    name: 'Haiku writer',
    model: 'gpt-4o',
    instructions: 'You write haiku about {{topic}}. Never rhyme.',
    input: 'Write a haiku.',
    max_output_tokens: 200,
  },
];

// The OpenAI evals guide's example (platform.openai.com/docs/guides/evals): IT tickets classified
// into Hardware, Software or Other, graded by a string_check against item.correct_label.
const openaiEval = {
  eval: {
    name: 'IT Ticket Categorization',
    data_source_config: {
      type: 'custom',
      item_schema: {
        type: 'object',
        properties: { ticket_text: { type: 'string' }, correct_label: { type: 'string' } },
        required: ['ticket_text', 'correct_label'],
      },
      include_sample_schema: true,
    },
    testing_criteria: [
      {
        type: 'string_check',
        name: 'Match output to human label',
        input: '{{ sample.output_text }}',
        operation: 'eq',
        reference: '{{ item.correct_label }}',
      },
    ],
  },
  items: [
    { item: { ticket_text: "My monitor won't turn on - help!", correct_label: 'Hardware' } },
    { item: { ticket_text: "I'm in vim and I can't quit!", correct_label: 'Software' } },
    { item: { ticket_text: 'Best restaurants in Cleveland?', correct_label: 'Other' } },
  ],
  prompt: {
    model: 'gpt-4.1',
    messages: [
      {
        role: 'developer',
        content:
          'You are an expert in categorizing IT support tickets. Given the support ticket below, categorize the request into one of "Hardware", "Software", or "Other". Respond with only one of those words.',
      },
      { role: 'user', content: '{{ item.ticket_text }}' },
    ],
  },
};

beforeAll(async () => {
  await getDb();
  app = await startAppServer();
  user = await newUser();
  configDir = newConfigDir();
  seedLogin(configDir, app.url, { accessToken: user.token });
}, 120_000);
afterAll(() => app?.stop());

describe('promptloop export', () => {
  it('writes one prompt’s bundle to a file (atomically) or to stdout', async () => {
    const org = await newOrganization(user);
    const fixture = await promptWithVersions(user, org.id, 2);
    const out = path.join(scratch, 'one', 'prompt.bundle.json');
    const written = await cli(['export', '--prompt', fixture.prompt.id, '--org', org.id, '--out', out]);
    expect(written.code, written.stderr).toBe(0);
    expect(written.stdout).toMatch(/^Exported 1 prompt to .*prompt\.bundle\.json\.\n$/);
    const bundle = JSON.parse(readFileSync(out, 'utf8'));
    expect(bundle).toMatchObject({
      format: 'promptloop.bundle',
      formatVersion: 1,
      prompts: [{ name: fixture.prompt.name }],
    });
    expect(bundle.prompts[0].versions.map((v: { version: number }) => v.version)).toEqual([1, 2]);
    expect(bundle.nextCursor).toBeUndefined();
    // Nothing but the bundle is left in the directory (the temporary file was renamed).
    expect(readdirSync(path.dirname(out))).toEqual(['prompt.bundle.json']);

    const printed = await cli(['export', '--prompt', fixture.prompt.id, '--org', org.id]);
    expect(printed.code).toBe(0);
    expect({ ...JSON.parse(printed.stdout), exportedAt: null }).toEqual({ ...bundle, exportedAt: null });
    expect(printed.stderr).toContain('Exported 1 prompt.');

    const missing = await cli(['export', '--prompt', 'prm_nope', '--org', org.id, '--out', out, '--json']);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout).error.code).toBe('not_found');
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual(bundle);
  });

  it('follows the organization’s pages into ONE bundle, with progress on stderr', async () => {
    const org = await newOrganization(user);
    const names = Array.from({ length: 27 }, (_, i) => `Prompt ${String(i).padStart(2, '0')}`);
    for (const name of names) await createPrompt(user, org.id, name);
    const before = app.requests.length;
    const out = path.join(scratch, 'org.bundle.json');
    const result = await cli(['export', '--org', org.id, '--out', out, '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ out, prompts: 27 });
    expect(result.stderr).toContain('exported 25 prompts…');
    const pages = app.requests.slice(before).filter((r) => r.path.startsWith(`/api/v1/organizations/${org.id}/export`));
    expect(pages).toHaveLength(2);
    expect(pages[1].path).toContain('cursor=');
    const bundle = JSON.parse(readFileSync(out, 'utf8'));
    expect(bundle.prompts.map((p: { name: string }) => p.name).sort()).toEqual(names);
    expect(Object.keys(bundle).sort()).toEqual(['exportedAt', 'format', 'formatVersion', 'prompts']);
  });

  it('a path it cannot write is a usage error (exit 2) named before anything is downloaded', async () => {
    const org = await newOrganization(user);
    await createPrompt(user, org.id, 'Unwritten');
    const before = app.requests.length;
    const blocker = path.join(scratch, 'a-file');
    writeFileSync(blocker, 'not a directory');
    for (const out of [path.join(blocker, 'bundle.json'), scratch]) {
      const result = await cli(['export', '--org', org.id, '--out', out]);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toMatch(/^Cannot write .+ \((ENOTDIR|EEXIST|EISDIR)\)\./m);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
    const exports = app.requests.slice(before).filter((r) => r.path.includes('/export'));
    expect(exports).toHaveLength(0);
  });
});

describe('promptloop import', () => {
  it('imports a bundle: the dry run writes nothing, the import stores it, the same names are skipped or renamed', async () => {
    const source = await newOrganization(user);
    await promptWithVersions(user, source.id, 3);
    await createPrompt(user, source.id, 'Empty one');
    const bundleFile = path.join(scratch, 'roundtrip.bundle.json');
    expect((await cli(['export', '--org', source.id, '--out', bundleFile])).code).toBe(0);
    const target = await newOrganization(user);

    const dry = await cli(['import', 'promptloop', bundleFile, '--org', target.id, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/^name\s+action\s+versions\s+labels\s+cases\s+promptId$/m);
    expect(dry.stdout).toMatch(/^Support answers\s+create\s+3\s+\d+\s+\d+\s+—$/m);
    expect(dry.stdout).toMatch(/^Empty one\s+create\s+0\s+0\s+0\s+—$/m);
    expect(dry.stdout).toContain('Dry run, nothing was written: 2 would be created, 0 skipped');
    expect(await promptsOf(target.id)).toEqual([]);

    const real = await cli(['import', 'promptloop', bundleFile, '--org', target.id, '--json']);
    expect(real.code, real.stderr).toBe(0);
    const report = JSON.parse(real.stdout);
    expect(report.prompts.map((p: { name: string; action: string }) => [p.name, p.action]).sort()).toEqual([
      ['Empty one', 'create'],
      ['Support answers', 'create'],
    ]);
    const stored = await promptsOf(target.id);
    expect(stored.map((p) => p.id).sort()).toEqual(report.prompts.map((p: { promptId: string }) => p.promptId).sort());
    const exported = JSON.parse((await cli(['export', '--org', target.id])).stdout);
    const original = JSON.parse(readFileSync(bundleFile, 'utf8'));
    const versionsOf = (bundle: any) =>
      Object.fromEntries(bundle.prompts.map((p: any) => [p.name, p.versions.map((v: any) => [v.version, v.content])]));
    expect(versionsOf(exported)).toEqual(versionsOf(original));

    const again = await cli(['import', 'promptloop', bundleFile, '--org', target.id]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^Support answers\s+skip\s+/m);
    expect(again.stdout).toContain('Imported: 0 created, 2 skipped');
    const renamed = await cli(['import', 'promptloop', bundleFile, '--org', target.id, '--on-conflict', 'rename']);
    expect(renamed.code).toBe(0);
    expect(renamed.stdout).toMatch(/^Support answers \(imported\)\s+create\s+3\s+/m);
    expect((await promptsOf(target.id)).map((p) => p.name).sort()).toEqual([
      'Empty one',
      'Empty one (imported)',
      'Support answers',
      'Support answers (imported)',
    ]);
  });

  it('imports OpenAI bodies from a .jsonl file (one prompt, two versions, production on the one asked for)', async () => {
    const org = await newOrganization(user);
    const jsonl = file('requests.jsonl', `${openaiBodies.map((b) => JSON.stringify(b)).join('\n')}\n`);
    const dry = await cli(['import', 'openai', jsonl, '--org', org.id, '--dry-run', '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout).prompts).toMatchObject([
      { name: 'Haiku writer', action: 'create', promptId: null, versions: 2, labels: 1 },
    ]);
    expect(await promptsOf(org.id)).toEqual([]);
    const real = await cli(['import', 'openai', jsonl, '--org', org.id, '--production-version', '1']);
    expect(real.code, real.stderr).toBe(0);
    expect(real.stdout).toMatch(/^Haiku writer\s+create\s+2\s+1\s+0\s+prm_\S+$/m);
    const [prompt] = await promptsOf(org.id);
    const got = await user.call('GET', `/organizations/${org.id}/prompts/${prompt.id}`);
    expect(got.body.labels).toMatchObject([{ label: 'production', version: 1 }]);
    const v2 = await user.call('GET', `/organizations/${org.id}/prompts/${prompt.id}/versions/2`);
    expect(v2.body.content.maxOutputTokens).toBe(200);
  });

  it('imports an OpenAI eval (prompt + dataset + scoring) and Langfuse prompt objects from files, also from stdin', async () => {
    const org = await newOrganization(user);
    const evalFile = file('eval.json', openaiEval);
    const evalResult = await cli(['import', 'openai_eval', evalFile, '--org', org.id, '--json']);
    expect(evalResult.code, evalResult.stderr).toBe(0);
    expect(JSON.parse(evalResult.stdout).prompts).toMatchObject([
      { name: 'IT Ticket Categorization', action: 'create', versions: 1, cases: 3 },
    ]);

    const langfuseFile = file('langfuse.json', documentedPrompts());
    const dry = await cli(['import', 'langfuse', langfuseFile, '--org', org.id, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/^movie-critic\s+create\s+2\s+/m);
    expect(dry.stdout).toMatch(/^support\/triage\s+create\s+1\s+/m);
    // What could not be carried is said (the placeholder message, the tags), indented under its prompt.
    expect(dry.stdout).toMatch(/^ {4}note: /m);
    // FILE "-" is stdin.
    const piped = await runCli(['import', 'langfuse', '-', '--org', org.id, '--dry-run', '--json'], {
      configDir,
      url: app.url,
      program: ['sh', '-c', `"${process.execPath}" "${binary}" "$@" < "${langfuseFile}"`, 'sh'],
    });
    expect(piped.code, piped.stderr).toBe(0);
    expect(JSON.parse(piped.stdout).prompts).toHaveLength(3);
    const real = await cli(['import', 'langfuse', langfuseFile, '--org', org.id]);
    expect(real.code, real.stderr).toBe(0);
    expect((await promptsOf(org.id)).map((p) => p.name).sort()).toEqual([
      'IT Ticket Categorization',
      'movie-critic',
      'movie-critic-chat',
      'support/triage',
    ]);
  });

  it('prints a 422 item by item and exits 1, with the envelope under --json; nothing is stored', async () => {
    const org = await newOrganization(user);
    const bad = file('bad.json', [
      { model: 'gpt-4o', messages: [{ role: 'user', content: 'No name' }] },
      openaiBodies[0],
    ]);
    const result = await cli(['import', 'openai', bad, '--org', org.id]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^import_rejected: /m);
    expect(result.stderr).toMatch(/^ {2}\/0\S*: \S/m);
    expect(result.stderr).toContain('Nothing was imported.');
    const json = await cli(['import', 'openai', bad, '--org', org.id, '--json']);
    expect(json.code).toBe(1);
    const envelope = JSON.parse(json.stdout);
    expect(envelope.error.code).toBe('import_rejected');
    expect(envelope.error.details.items[0].path).toMatch(/^\/0/);
    expect(await promptsOf(org.id)).toEqual([]);
  });

  it('refuses bad usage with exit 2 before calling the server', async () => {
    const org = await newOrganization(user);
    const before = importPosts().length;
    const notJson = file('not.json', '{"prompts": [');
    for (const args of [
      ['import', 'nope', notJson],
      ['import', 'promptloop', notJson],
      ['import', 'promptloop'],
      ['import', 'promptloop', path.join(scratch, 'missing.json')],
      ['import', 'openai', notJson, '--host', 'https://cloud.langfuse.com'],
      ['import', 'langfuse', '--host', 'https://cloud.langfuse.com'],
      ['import', 'langfuse', notJson, '--dataset-map', 'a=b'],
      ['import', 'openai', notJson, '--idempotency-key', 'short'],
      ['import', 'openai', notJson, '--idempotency-key', 'k'.repeat(129)],
      ['import', 'openai', notJson, '--on-conflict', 'replace'],
    ]) {
      const result = await cli([...args, '--org', org.id]);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr.length).toBeGreaterThan(0);
    }
    expect(importPosts().length).toBe(before);
  });

  it('sends one Idempotency-Key per run, kept across a retry inside the CLI; the same key again replays', async () => {
    const org = await newOrganization(user);
    const bodies = file('retry.json', [{ ...openaiBodies[0], name: 'Retried once' }]);
    let dropped = false;
    const proxy = await startProxy(app.url, (req) => {
      if (req.method === 'POST' && req.url?.endsWith('/imports') && !dropped) {
        dropped = true;
        return 'drop';
      }
      return 'pass';
    });
    seedLogin(configDir, proxy.url, { accessToken: user.token });
    try {
      const result = await cli(['import', 'openai', bodies, '--org', org.id], {}, proxy.url);
      expect(result.code, result.stderr).toBe(0);
      // The first attempt was executed and its answer lost: the retry replays it (create, not skip).
      expect(result.stdout).toMatch(/^Retried once\s+create\s+/m);
      expect(result.stderr).toContain('(replayed');
      const posts = proxy.seen.filter((r) => r.method === 'POST');
      expect(posts).toHaveLength(2);
      expect(posts[0].idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
      expect(posts[1].idempotencyKey).toBe(posts[0].idempotencyKey);
    } finally {
      await proxy.stop();
    }
    expect((await promptsOf(org.id)).map((p) => p.name)).toEqual(['Retried once']);

    const key = 'cli-import-key-0001';
    const first = await cli([
      'import',
      'openai',
      bodies,
      '--org',
      org.id,
      '--idempotency-key',
      key,
      '--on-conflict',
      'rename',
    ]);
    const second = await cli([
      'import',
      'openai',
      bodies,
      '--org',
      org.id,
      '--idempotency-key',
      key,
      '--on-conflict',
      'rename',
    ]);
    expect(first.code).toBe(0);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    expect(second.stderr).toContain('(replayed');
    expect(
      importPosts()
        .slice(-2)
        .map((r) => r.idempotencyKey),
    ).toEqual([key, key]);
    expect((await promptsOf(org.id)).map((p) => p.name).sort()).toEqual(['Retried once', 'Retried once (imported)']);
  });

  it('sends a bundle over 8 MiB in parts: all checked first, then imported; paths of a refusal point into the file', async () => {
    const org = await newOrganization(user);
    const text = (i: number) => `Prompt ${i}: ${'lorem ipsum dolor sit amet '.repeat(3_700)}`.slice(0, 99_000);
    const bundle = {
      format: 'promptloop.bundle',
      formatVersion: 1,
      exportedAt: '2026-01-01T00:00:00.000Z',
      prompts: Array.from({ length: 12 }, (_, i) => ({
        name: `Big ${i}`,
        state: 'setup',
        versions: [
          {
            version: 1,
            content: {
              messages: Array.from({ length: 8 }, () => ({ role: 'system', content: text(i) })),
              inputType: 'user_message',
            },
            createdAt: '2025-06-01T00:00:00.000Z',
          },
        ],
        labels: [],
        labelHistory: [],
        scoring: null,
        dataset: { cases: [] },
      })),
    };
    const big = file('big.bundle.json', bundle);
    expect(readFileSync(big).length).toBeGreaterThan(8 * 1024 * 1024);

    const brokenFile = file('big-broken.bundle.json', {
      ...bundle,
      prompts: bundle.prompts.map((p, i) =>
        i === 11
          ? { ...p, versions: [{ ...p.versions[0], content: { ...p.versions[0].content, inputType: 'nope' } }] }
          : p,
      ),
    });
    const refused = await cli(['import', 'promptloop', brokenFile, '--org', org.id]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^ {2}\/prompts\/11\/\S*: /m);
    expect(refused.stderr).toContain('Nothing was imported.');
    expect(await promptsOf(org.id)).toEqual([]);

    const before = importPosts().length;
    const result = await cli(['import', 'promptloop', big, '--org', org.id, '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/sending it in 2 parts/);
    const report = JSON.parse(result.stdout);
    expect(report.prompts.map((p: { name: string }) => p.name)).toEqual(bundle.prompts.map((p) => p.name));
    expect(report.prompts.every((p: { action: string }) => p.action === 'create')).toBe(true);
    // Two dry runs, then two imports, each part with its own key.
    const posts = importPosts().slice(before);
    expect(posts).toHaveLength(4);
    expect(new Set(posts.slice(2).map((r) => r.idempotencyKey)).size).toBe(2);
    expect((await promptsOf(org.id)).length).toBe(12);
  }, 120_000);
});

describe('promptloop import langfuse --host', () => {
  const keys = { LANGFUSE_PUBLIC_KEY: 'pk-lf-1234', LANGFUSE_SECRET_KEY: 'sk-lf-5678' };

  it('pages prompts and a mapped dataset through 429s, then imports them with the dataset', async () => {
    const langfuse = await startLangfuseServer({
      publicKey: keys.LANGFUSE_PUBLIC_KEY,
      secretKey: keys.LANGFUSE_SECRET_KEY,
      prompts: documentedPrompts(),
      datasets: [
        {
          name: 'critic/qa',
          items: [
            { input: { criticLevel: 'expert', movie: 'Dune 2' }, expectedOutput: 'Yes, a masterpiece.' },
            { input: { criticLevel: 'casual', movie: 'Cats' }, expectedOutput: 'No.' },
            { input: { criticLevel: 'expert', movie: 'Baraka' }, expectedOutput: 'Yes.' },
          ],
        },
      ],
      maxLimit: 2,
      throttle: (n) => n === 2 || n === 6,
      retryAfterSeconds: 1,
    });
    try {
      const org = await newOrganization(user);
      const saved = path.join(scratch, 'langfuse-saved.json');
      const result = await cli(
        [
          'import',
          'langfuse',
          '--host',
          `${langfuse.url}/`,
          '--dataset-map',
          'critic/qa=movie-critic',
          '--save',
          saved,
          '--org',
          org.id,
        ],
        keys,
      );
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toMatch(/HTTP 429; retrying in 1\.0 s/);
      expect(result.stderr).toContain('Read 3 prompts (4 versions) and 3 dataset items from Langfuse.');
      expect(result.stdout).toMatch(/^movie-critic\s+create\s+2\s+\d+\s+3\s+prm_\S+$/m);
      expect(result.stdout).toMatch(/^support\/triage\s+create\s+1\s+/m);
      const statuses = langfuse.requests.map((r) => `${r.status} ${r.path}`);
      expect(statuses.filter((s) => s.startsWith('429'))).toHaveLength(2);
      expect(statuses).toContain('200 /api/public/v2/prompts?page=2&limit=50');
      expect(statuses).toContain('200 /api/public/v2/prompts/support%2Ftriage?version=1');
      expect(statuses).toContain('200 /api/public/dataset-items?datasetName=critic%2Fqa&page=2&limit=50');
      expect(JSON.parse(readFileSync(saved, 'utf8')).datasets[0]).toMatchObject({
        name: 'critic/qa',
        prompt: 'movie-critic',
      });

      const critic = (await promptsOf(org.id)).find((p) => p.name === 'movie-critic')!;
      const dataset = await user.call('GET', `/organizations/${org.id}/prompts/${critic.id}/dataset`);
      expect(dataset.body.count).toBe(3);
      const prompt = await user.call('GET', `/organizations/${org.id}/prompts/${critic.id}`);
      expect(prompt.body.labels.map((l: { label: string; version: number }) => [l.label, l.version]).sort()).toEqual([
        ['production', 1],
        ['staging', 1],
      ]);
    } finally {
      await langfuse.stop();
    }
  });

  it('names the keys when Langfuse refuses them (exit 1) and asks for missing ones (exit 2); nothing is imported', async () => {
    const langfuse = await startLangfuseServer({
      publicKey: keys.LANGFUSE_PUBLIC_KEY,
      secretKey: keys.LANGFUSE_SECRET_KEY,
      prompts: documentedPrompts(),
    });
    try {
      const org = await newOrganization(user);
      const before = importPosts().length;
      const wrong = await cli(['import', 'langfuse', '--host', langfuse.url, '--org', org.id], {
        ...keys,
        LANGFUSE_SECRET_KEY: 'sk-lf-wrong',
      });
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toMatch(/Langfuse refused the API keys \(401\).*LANGFUSE_PUBLIC_KEY.*LANGFUSE_SECRET_KEY/);
      const missing = await cli(['import', 'langfuse', '--host', langfuse.url, '--org', org.id], {
        LANGFUSE_PUBLIC_KEY: keys.LANGFUSE_PUBLIC_KEY,
      });
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('Set LANGFUSE_SECRET_KEY');
      const unknownDataset = await cli(
        ['import', 'langfuse', '--host', langfuse.url, '--dataset-map', 'nope=movie-critic', '--org', org.id],
        keys,
      );
      expect(unknownDataset.code).toBe(2);
      expect(unknownDataset.stderr).toContain('the Langfuse project has no dataset named "nope"');
      expect(importPosts().length).toBe(before);
      expect(await promptsOf(org.id)).toEqual([]);
    } finally {
      await langfuse.stop();
    }
  });
});
