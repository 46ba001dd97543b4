import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

// The production entry (`server/main.ts --role=retrieval`: the hot-path table without Next) as a
// child process on a free port, on the test database. Needs a Postgres server (DATABASE_URL).
export async function startRetrievalEntry(
  env: Record<string, string> = {},
): Promise<{ url: string; child: ChildProcess; stop: () => Promise<number | null> }> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  const root = path.resolve(import.meta.dirname, '../..');
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', '--role=retrieval'], {
    cwd: root,
    env: { ...process.env, PORT: String(port), LOG_LEVEL: 'warn', NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 450; i++) {
    const ready = await fetch(`${url}/api/v1/prompts/x`).then(
      (r) => r.status === 401,
      () => false,
    );
    if (ready) {
      const stop = async () => {
        if (child.exitCode !== null) return child.exitCode;
        const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
        child.kill('SIGTERM');
        return exited;
      };
      return { url, child, stop };
    }
    if (child.exitCode !== null) throw new Error(`retrieval role exited with ${child.exitCode}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  child.kill('SIGKILL');
  throw new Error('retrieval role did not start');
}
