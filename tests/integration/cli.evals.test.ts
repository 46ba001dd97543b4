import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { comparisonFixture, drain, setupFixture } from '../helpers/evals';
import { isolatedDatabase, useModelRoutes } from '../helpers/evals-engine';
import { newConfigDir, runCli, seedLogin, startAppServer, type AppServer } from '../helpers/cli';

// `promptloop evals start … --wait` / `evals wait`: live progress, then exit 0 (no regression),
// 4 (the candidate fails cases production passes), 5 (results await review), 1 (cancelled).
// The engine runs in this process (drainEvalWork on a database of this file's own) while the
// CLI polls over HTTP; the candidate that regresses uses a local model server that answers wrong.

let dropDatabase: () => Promise<void>;
let app: AppServer;
let model: Server;
let draining = true;
let holdWork = false; // while true, the worker leaves new evaluations pending
let drainLoop: Promise<void>;

beforeAll(async () => {
  dropDatabase = await isolatedDatabase();
  await getDb();
  app = await startAppServer();
  model = createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'x',
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: 'certainly wrong' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 3, completion_tokens: 2 },
        }),
      ),
    );
  });
  await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
  useModelRoutes([{ id: 'cli/wrong', baseUrl: `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1` }]);
  // The worker: works whatever evaluations the CLI starts, until the file ends.
  drainLoop = (async () => {
    while (draining) {
      if (!holdWork) await drain().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
}, 120_000);

afterAll(async () => {
  draining = false;
  await drainLoop;
  await app?.stop();
  await new Promise((resolve) => model?.close(resolve));
  await dropDatabase?.();
});

async function fixture() {
  const f = await comparisonFixture({ cases: 3 });
  const configDir = newConfigDir();
  seedLogin(configDir, app.url, { accessToken: f.editor.token });
  const cli = (args: string[]) =>
    runCli([...args, '--org', f.org.id], { configDir, url: app.url, env: { PROMPTLOOP_POLL_SECONDS: '0.2' } });
  // A saved version whose model answers every case wrong.
  const draftPath = `${f.base}/draft`;
  const current = await f.editor.call('GET', draftPath);
  const written = await f.editor.call('PUT', draftPath, {
    body: {
      content: {
        messages: [{ role: 'system', content: 'Answer in riddles.' }],
        inputType: 'user_message',
        modelRouteId: 'cli/wrong',
      },
      revision: current.body.revision,
    },
  });
  expect(written.status).toBe(200);
  const broken = await f.editor.call('POST', `${f.base}/versions`, { body: { draftRevision: written.body.revision } });
  expect(broken.status).toBe(201);
  return { ...f, cli, broken: broken.body as { id: string; number: number } };
}

describe('promptloop evals --wait', () => {
  it('prints progress and exits 0 when the candidate does not regress, 4 when it does', async () => {
    const f = await fixture();
    const fine = await f.cli(['evals', 'start', f.prompt.id, '--version-id', f.v2.id, '--scope', 'quick', '--wait']);
    expect(fine.stderr).toMatch(/Started evaluation eval_/);
    expect(fine.stderr).toMatch(/completed · candidate 3\/3 \(3 passed, 0 failed\) · production 3\/3/);
    expect(fine.stderr).toContain('No regression against production.');
    expect(fine.stdout).toContain('candidate v2: 3 of 3 passed');
    expect(fine.stdout).not.toContain('did not pass');
    expect(fine.code).toBe(0);

    const regressed = await f.cli([
      'evals',
      'start',
      f.prompt.id,
      '--version-id',
      f.broken.id,
      '--scope',
      'quick',
      '--wait',
    ]);
    expect(regressed.stderr).toMatch(/completed · candidate 3\/3 \(0 passed, 3 failed\) · production 3\/3 \(reused\)/);
    expect(regressed.stderr).toContain(
      'Regression: the candidate fails 3 cases that production passes (case 1, case 2, case 3).',
    );
    expect(regressed.stdout).toContain('candidate v3: 0 of 3 passed (3 failed)');
    expect(regressed.stdout).toContain('production v1: 3 of 3 passed (reused)');
    // Each case that did not pass: why, and the candidate's output beside the expected one.
    expect(regressed.stdout).toContain('Candidate cases that did not pass (3):');
    expect(regressed.stdout).toContain(
      [
        '  case 1 (candidate) · regression (production passed) · failed: the output does not match the expected output',
        '    input:    case 1',
        '    expected: case 1',
        '    output:   certainly wrong',
      ].join('\n'),
    );
    expect(regressed.code).toBe(4);

    // Without --wait it just starts (no verdict, exit 0) and prints the evaluation.
    const started = await f.cli([
      'evals',
      'start',
      f.prompt.id,
      '--version-id',
      f.broken.id,
      '--scope',
      'quick',
      '--rerun-both',
      '--json',
    ]);
    expect(started.code).toBe(0);
    const evaluation = JSON.parse(started.stdout);
    expect(evaluation).toMatchObject({ id: expect.stringMatching(/^eval_/), versionId: f.broken.id, rerunBoth: true });
    // `evals wait` on it later gives the same verdict; with --json the final evaluation is the only stdout.
    const waited = await f.cli(['evals', 'wait', evaluation.id, '--json']);
    expect(waited.code).toBe(4);
    expect(JSON.parse(waited.stdout)).toMatchObject({ id: evaluation.id, status: 'completed', failedCases: 3 });
  }, 120_000);

  it('a failed evaluation prints each errored case with its reason; evals results lists them, long texts cut with a note, in full with --json', async () => {
    const f = await fixture();
    const long = `${'x'.repeat(450)} end`;
    const dataset = await f.editor.call('GET', `${f.base}/dataset`);
    expect(
      (
        await f.editor.call('POST', `${f.base}/dataset/cases`, {
          body: { revision: dataset.body.revision, row: { input: long, expectedOutput: 'y' } },
        })
      ).status,
    ).toBe(201);
    // A candidate that takes two variables: the dataset's text inputs cannot run under it.
    const draft = await f.editor.call('GET', `${f.base}/draft`);
    const written = await f.editor.call('PUT', `${f.base}/draft`, {
      body: {
        content: { messages: [{ role: 'user', content: 'Tell {{a}} about {{b}}.' }], inputType: 'variables' },
        revision: draft.body.revision,
      },
    });
    const saved = await f.editor.call('POST', `${f.base}/versions`, { body: { draftRevision: written.body.revision } });
    expect(saved.status).toBe(201);
    const estimate = await f.cli(['evals', 'estimate', f.prompt.id, '--version-id', saved.body.id, '--scope', 'quick']);
    expect(estimate.stdout).toMatch(/incompatibleCases\s+4/);

    const result = await f.cli([
      'evals',
      'start',
      f.prompt.id,
      '--version-id',
      saved.body.id,
      '--scope',
      'quick',
      '--wait',
    ]);
    expect(result.code).toBe(1);
    const reason =
      'error: This prompt takes variables ({{a}}, {{b}}): the case input must be a JSON object of their values.';
    expect(result.stdout).toContain('candidate v4: 0 of 4 passed (4 errors)');
    expect(result.stdout).toContain(
      `  case 2 (candidate) · regression (production passed) · ${reason}\n    input:    case 2\n    expected: case 2\n    output:   —`,
    );
    expect(result.stdout).toContain(`    input:    ${'x'.repeat(200)}… (+254 characters)`);
    expect(result.stdout).toContain('Long texts are cut at 200 characters;');
    expect(result.stderr).toMatch(/Evaluation eval_\w+ failed: 4 of 4 cases could not be executed\.\n/);
    expect(`${result.stdout}${result.stderr}`).not.toMatch(/\.\./);
    const evaluationId = /Started evaluation (eval_\w+)/.exec(result.stderr)![1];

    const listed = await f.cli(['evals', 'results', evaluationId, '--side', 'candidate']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('Cases that did not pass (4):');
    expect(listed.stdout).toContain(`  case 4 (candidate) · ${reason}`);
    expect(listed.stdout).toContain('… (+254 characters)');
    const full = await f.cli(['evals', 'results', evaluationId, '--side', 'candidate', '--json']);
    expect(JSON.parse(full.stdout).items.find((r: { position: number }) => r.position === 4)).toMatchObject({
      input: long,
      status: 'error',
    });
  }, 120_000);

  it('exits 5 while results await review, and 1 for a cancelled evaluation', async () => {
    const f = await fixture();
    const scoring = await f.cli(['scoring', 'set', f.prompt.id, '--method', 'review']);
    expect(scoring.code).toBe(0);
    const review = await f.cli(['evals', 'start', f.prompt.id, '--version-id', f.v2.id, '--scope', 'quick', '--wait']);
    expect(review.stderr).toMatch(/results? await review/);
    expect(review.code).toBe(5);

    holdWork = true;
    await new Promise((resolve) => setTimeout(resolve, 500)); // a drain under way finishes
    const started = await f.editor.call('POST', f.evals, {
      body: { versionId: f.broken.id, scope: 'quick', rerunBoth: true },
    });
    const gaveUp = await f.cli(['evals', 'wait', started.body.id, '--timeout', '0.5']);
    expect(gaveUp.code).toBe(1);
    expect(gaveUp.stderr).toContain('gave up waiting');
    const cancelled = await f.cli(['evals', 'cancel', started.body.id]);
    holdWork = false;
    expect(cancelled.stderr).toBe('');
    expect(cancelled.code).toBe(0);
    const waited = await f.cli(['evals', 'wait', started.body.id]);
    expect(waited.stderr).toContain('cancelled');
    expect(waited.code).toBe(1);
  }, 120_000);

  it('evals initialize --wait: the baseline completes, publishes version 1, exit 0', async () => {
    const f = await setupFixture({ cases: 2 });
    const configDir = newConfigDir();
    seedLogin(configDir, app.url, { accessToken: f.editor.token });
    const result = await runCli(
      [
        'evals',
        'initialize',
        f.prompt.id,
        '--draft-revision',
        String(f.draft.revision),
        '--scoring-method',
        'expected',
        '--wait',
        '--org',
        f.org.id,
      ],
      {
        configDir,
        url: app.url,
        env: { PROMPTLOOP_POLL_SECONDS: '0.2' },
      },
    );
    expect(result.stderr).toMatch(/completed · candidate 2\/2 \(2 passed, 0 failed\)/);
    expect(result.stderr).not.toContain('production');
    expect(result.code).toBe(0);
    const prompt = await f.editor.call('GET', f.base);
    expect(prompt.body).toMatchObject({ state: 'active', versionCount: 1 });
  }, 120_000);
});
