// `npm test`: install what is missing, run the static checks (dependency rules, type check of the
// app, the CLI and the SDK, ESLint, Prettier), run the unit and integration suites (vitest), then
// build and run the browser suite (Playwright), and print one closing line with the totals. A
// finding of any static check fails the run (the suites still run, so one run shows everything).
// `npm test checks` runs the static checks alone; SKIP_STATIC_CHECKS=1 leaves them out (CI's second
// run, on the same tree).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ensureBuilt, ensureInstalled, root } from './ensure.mjs';
import { requireNode } from './node-version.mjs';

requireNode();
ensureInstalled();
const reports = mkdtempSync(path.join(tmpdir(), 'promptloop-tests-'));
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1' };
const only = process.argv[2]; // optional: "unit", "e2e" or "checks"

function runSuite(command, args, extraEnv = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', env: { ...env, ...extraEnv } });
  return result.status === 0;
}

const totals = { passed: 0, failed: 0, skipped: 0 };
let ok = true;

// Static checks first, each timed (a failure fails the run). Each is single-threaded, so two run at
// once (this project's machines have two cores), longest first; a check's output is held and printed
// whole when it ends, so that two checks never interleave.
const checks = [
  { name: 'lint (ESLint)', command: 'npm', args: ['run', '--silent', 'lint'] },
  { name: 'types: app', command: 'npx', args: ['tsc', '--noEmit', '-p', '.'] },
  {
    name: 'format (Prettier)',
    command: 'npx',
    args: ['prettier', '--check', '--log-level=warn', '.'],
    fix: 'run `npm run format`',
  },
  {
    name: 'dependency rules (dependency-cruiser)',
    command: 'npm',
    args: ['run', '--silent', 'check:deps'],
    fix: 'each rule says why in .dependency-cruiser.cjs; area cycles: scripts/check-areas.mjs',
  },
  { name: 'types: CLI', command: 'npx', args: ['tsc', '--noEmit', '-p', 'cli'] },
  { name: 'types: SDK', command: 'npx', args: ['tsc', '--noEmit', '-p', 'sdk'] },
];
const checkLanes = 2;

function runCheck(check) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(check.command, check.args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    let finished = false;
    // 'close' can follow 'error' (a command that could not start): report once.
    const finish = (passed, extra = '') => {
      if (finished) return;
      finished = true;
      const text = Buffer.concat(output).toString() + extra;
      if (text) process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
      console.log(
        `${passed ? 'ok' : 'FAILED'}: ${check.name} (${((Date.now() - started) / 1000).toFixed(1)} s)${passed || !check.fix ? '' : `: ${check.fix}`}`,
      );
      resolve(passed);
    };
    child.on('error', (error) => finish(false, `${check.command}: ${error.message}\n`));
    child.on('close', (code) => finish(code === 0));
  });
}

const failedChecks = [];
if (process.env.SKIP_STATIC_CHECKS !== '1') {
  const queue = [...checks];
  await Promise.all(
    Array.from({ length: checkLanes }, async () => {
      for (let check = queue.shift(); check; check = queue.shift())
        if (!(await runCheck(check))) failedChecks.push(check.name);
    }),
  );
  ok = failedChecks.length === 0 && ok;
  // Each failed check counts as a failed test, so the summary line (and CI's total) cannot read clean.
  totals.failed += failedChecks.length;
}
if (only === 'checks') {
  rmSync(reports, { recursive: true, force: true });
  console.log(failedChecks.length ? `\nstatic checks failed: ${failedChecks.join(', ')}` : '\nstatic checks: ok');
  process.exit(failedChecks.length ? 1 : 0);
}

if (only !== 'e2e') {
  const file = path.join(reports, 'vitest.json');
  const vitestOk = runSuite('npx', [
    'vitest',
    'run',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${file}`,
  ]);
  ok = vitestOk && ok;
  if (existsSync(file)) {
    const report = JSON.parse(readFileSync(file, 'utf8'));
    totals.passed += report.numPassedTests;
    totals.failed += report.numFailedTests;
    totals.skipped += report.numPendingTests + (report.numTodoTests ?? 0);
    // A failure outside any test (a file the watchdog killed because it hung, an unhandled error)
    // leaves the report's counts clean: count it, vitest printed it above.
    if (!vitestOk && report.numFailedTests === 0) totals.failed += 1;
  } else ok = false;
}

if (only !== 'unit') {
  ensureBuilt();
  // A fresh database for the browser suite when a Postgres server is configured.
  const baseUrl = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL;
  let e2eEnv = {};
  let drop = async () => {};
  if (baseUrl) {
    const { default: postgres } = await import('postgres');
    const name = `promptloop_e2e_${Date.now()}`;
    const admin = postgres(baseUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database "${name}"`);
    await admin.end();
    const url = new URL(baseUrl);
    url.pathname = `/${name}`;
    e2eEnv = { E2E_DATABASE_URL: url.toString() };
    drop = async () => {
      const cleanup = postgres(baseUrl, { max: 1, onnotice: () => {} });
      await cleanup.unsafe(`drop database if exists "${name}" with (force)`);
      await cleanup.end();
    };
  }
  const file = path.join(reports, 'playwright.json');
  ok =
    runSuite('npx', ['playwright', 'test', '--reporter=list,json'], { ...e2eEnv, PLAYWRIGHT_JSON_OUTPUT_NAME: file }) &&
    ok;
  await drop();
  if (existsSync(file)) {
    const stats = JSON.parse(readFileSync(file, 'utf8')).stats ?? {};
    totals.passed += (stats.expected ?? 0) + (stats.flaky ?? 0);
    totals.failed += stats.unexpected ?? 0;
    totals.skipped += stats.skipped ?? 0;
  } else ok = false;
}

rmSync(reports, { recursive: true, force: true });
console.log(
  `\ntests: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped${failedChecks.length ? `; static checks failed: ${failedChecks.join(', ')}` : ''}`,
);
process.exit(ok && totals.failed === 0 ? 0 : 1);
