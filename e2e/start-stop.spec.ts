import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { createServer, connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from '@playwright/test';

// `npm start` stops, however it is stopped: a second copy of the built app on its own port and
// embedded database, started the way the README says, then stopped. Every process of its tree must
// be gone and the port closed; a request in flight when the signal arrives is still answered.

const root = path.resolve(import.meta.dirname, '..');

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

// Linux /proc: the process's state letter, or null when it is gone (a zombie counts as gone).
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // exited meanwhile
    }
  }
  const found: number[] = [];
  const walk = (p: number) => {
    for (const child of parents.get(p) ?? []) {
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

type Started = { npm: ChildProcess; port: number; tree: number[]; output: () => string; cleanup: () => void };

async function npmStart(): Promise<Started> {
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'promptloop-stop-'));
  const npm = spawn('npm', ['start'], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      APP_URL: `http://localhost:${port}`,
      DATABASE_URL: '',
      PGLITE_DATA_DIR: dataDir,
      NEXT_TELEMETRY_DISABLED: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group, as a terminal would give it
  });
  let output = '';
  npm.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  npm.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const started: Started = {
    npm,
    port,
    tree: [],
    output: () => output,
    cleanup: () => {
      for (const pid of [npm.pid!, ...started.tree]) if (alive(pid)) process.kill(pid, 'SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  await expect
    .poll(() => output, { timeout: 150_000, message: 'npm start prints where it serves' })
    .toContain('Promptloop is ready');
  started.tree = descendants(npm.pid!);
  expect(started.tree.length).toBeGreaterThan(0);
  return started;
}

async function expectAllGone(started: Started) {
  await expect
    .poll(() => listening(started.port), { timeout: 60_000, message: 'the port stops answering' })
    .toBe(false);
  await expect
    .poll(() => [started.npm.pid!, ...started.tree].filter(alive), {
      timeout: 60_000,
      message: 'no process of the tree survives',
    })
    .toEqual([]);
  expect(started.output()).toContain('"msg":"stopped"');
}

test.describe('stopping npm start', () => {
  test.describe.configure({ mode: 'serial' });
  test.setTimeout(300_000);

  test('SIGTERM to npm: a request in flight is answered, then the server stops; no process survives', async () => {
    const started = await npmStart();
    try {
      // A sign-up whose body is still arriving when the signal comes.
      const body = JSON.stringify({
        email: `stop-${Date.now()}@example.com`,
        password: 'Correct-horse-battery-9',
        name: 'Stop',
      });
      const reply = new Promise<IncomingMessage>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port: started.port,
            method: 'POST',
            path: '/api/trpc/account.signUp',
            headers: {
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
              origin: `http://localhost:${started.port}`,
            },
          },
          resolve,
        );
        req.on('error', reject);
        req.write(body.slice(0, 10));
        started.npm.kill('SIGTERM');
        void expect
          .poll(() => started.output(), { timeout: 30_000 })
          .toContain('"msg":"shutting down"')
          .then(() => req.end(body.slice(10)), reject);
      });
      const response = await reply;
      response.resume();
      expect(response.statusCode).toBe(200);
      await expectAllGone(started);
    } finally {
      started.cleanup();
    }
  });

  test('SIGKILL to npm (nothing is passed on): the server notices npm is gone and stops', async () => {
    const started = await npmStart();
    try {
      started.npm.kill('SIGKILL');
      await expectAllGone(started);
    } finally {
      started.cleanup();
    }
  });

  test('SIGINT to the process group (Ctrl-C in a terminal): everything stops', async () => {
    const started = await npmStart();
    try {
      process.kill(-started.npm.pid!, 'SIGINT');
      await expectAllGone(started);
    } finally {
      started.cleanup();
    }
  });
});
