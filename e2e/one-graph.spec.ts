import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, test } from '@playwright/test';

// One process, one module graph (docs/deploy.md): the production build carries no copy of server/
// or db/, and a copy of the built app (started as `npm start` starts it, plus a test-only loader
// probe, e2e/one-graph/probe.mjs) loads each of their modules once, for its own hot paths and for
// the routes Next serves alike.

const root = path.resolve(import.meta.dirname, '..');
const url = (file: string) => pathToFileURL(path.join(root, file)).href;

function serverChunks(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.js')) files.push(full);
    }
  };
  walk(path.join(root, '.next', 'server'));
  return files;
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

test('the server bundle imports server/ and db/ at runtime instead of carrying a copy', () => {
  const chunks = serverChunks().map((file) => readFileSync(file, 'utf8'));
  // Text found only in server/ and db/ sources (an error code, a message, the reader pool's name).
  for (const marker of ['idempotency_in_progress', 'No such API route.', 'promptloop-reader']) {
    expect(
      chunks.filter((text) => text.includes(marker)),
      marker,
    ).toHaveLength(0);
  }
  const imported = new Set(chunks.flatMap((text) => [...text.matchAll(/import\("(file:[^"]+)"\)/g)].map((m) => m[1])));
  for (const file of ['server/api/router.ts', 'server/trpc/root.ts', 'server/auth/nextauth.ts', 'db/client.ts']) {
    expect(imported, file).toContain(url(file));
  }
});

test('a running production server loads each module of server/ and db/ once', async () => {
  test.setTimeout(180_000);
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'promptloop-graph-'));
  const log = path.join(dir, 'modules.log');
  let child: ChildProcess | undefined;
  try {
    child = spawn(process.execPath, ['--import', 'tsx', '--import', './e2e/one-graph/probe.mjs', 'server/main.ts'], {
      cwd: root,
      env: {
        ...process.env,
        NODE_ENV: 'production',
        NEXT_TELEMETRY_DISABLED: '1',
        PORT: String(port),
        APP_URL: `http://localhost:${port}`,
        NEXTAUTH_SECRET: 'one-graph-test-secret',
        DATABASE_URL: '',
        PGLITE_DATA_DIR: path.join(dir, 'data'),
        LOG_LEVEL: 'warn',
        ONE_GRAPH_LOG: log,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const base = `http://127.0.0.1:${port}`;
    await expect
      .poll(
        () =>
          fetch(`${base}/sign-in`).then(
            (r) => r.status,
            () => 0,
          ),
        { timeout: 150_000, intervals: [500] },
      )
      .toBe(200);

    // Through Next: a management route (the REST router) and a dashboard procedure, each answering
    // with an AppError thrown by server/ and matched by class at the edge.
    const rest = await fetch(`${base}/api/v1/no-such-route`);
    expect(rest.status).toBe(404);
    expect((await rest.json()).error.code).toBe('not_found');
    const trpc = await fetch(`${base}/api/trpc/prompts.list?input=${encodeURIComponent('{}')}`);
    expect(trpc.status).toBe(401);
    expect((await trpc.json()).error.data.appCode).toBe('unauthorized');
    // Through the entry's hot path.
    const hot = await fetch(`${base}/api/v1/prompts/prm_none`);
    expect(hot.status).toBe(401);

    expect(existsSync(log)).toBe(true);
    const loaded = readFileSync(log, 'utf8').trim().split('\n');
    const twice = loaded.filter((file, i) => loaded.indexOf(file) !== i);
    expect(twice).toEqual([]);
    // Modules the entry imports itself, and modules only Next's routes import (tRPC): all from the
    // one loader. With a bundled copy, the tRPC modules never reached it.
    for (const file of [
      'server/errors.ts',
      'db/client.ts',
      'server/evals/engine/queue.ts',
      'server/api/router.ts',
      'server/trpc/http.ts',
      'server/trpc/root.ts',
    ]) {
      expect(loaded, file).toContain(url(file));
    }
  } finally {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  }
});
