import { spawn } from 'node:child_process';
import path from 'node:path';
import { expect, it, onTestFinished } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

// The suite's watchdog (tests/watchdog.ts) against a file that spins in microtasks (no timer can
// fire in it): the run fails, names the file and test, and the other file still passes.
it('a test file that hangs fails the run with the file and test named, instead of spinning', async () => {
  const child = spawn(
    process.execPath,
    [path.join(root, 'node_modules/vitest/vitest.mjs'), 'run', '--config', 'tests/fixtures/hang/vitest.config.ts'],
    {
      cwd: root,
      env: { ...process.env, TEST_HANG_SECONDS: '2', NO_COLOR: '1', FORCE_COLOR: '0' },
      detached: true, // its own process group: nothing of it survives this test
    },
  );
  onTestFinished(() => {
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  expect(code, output).toBe(1);
  expect(output).toContain('[test watchdog] ');
  expect(output).toMatch(/spins\.fixture\.ts > spins in microtasks: the event loop has not turned for \d+ s/);
  expect(output).toMatch(/✓ passes\.fixture\.ts/);
}, 60_000);
