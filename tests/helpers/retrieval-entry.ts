import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

// The production entry (`server/main.ts --role=retrieval`, or another hot-path role such as
// `ingest`: no Next) as a child process on a free port, on the test database. Needs a Postgres
// server (DATABASE_URL).
export async function startRetrievalEntry(
  env: Record<string, string> = {},
  role = 'retrieval',
  // Its standard output, chunk by chunk (else ignored).
  onStdout?: (text: string) => void,
): Promise<{ url: string; child: ChildProcess; stop: () => Promise<number | null> }> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  const root = path.resolve(import.meta.dirname, '../..');
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', `--role=${role}`], {
    cwd: root,
    env: { ...process.env, PORT: String(port), LOG_LEVEL: 'warn', NODE_ENV: 'production', ...env },
    stdio: ['ignore', onStdout ? 'pipe' : 'ignore', 'inherit'],
  });
  child.stdout?.setEncoding('utf8').on('data', (text: string) => onStdout?.(text));
  const url = `http://127.0.0.1:${port}`;
  const readyPath = role === 'ingest' ? '/api/v1/traces' : '/api/v1/prompts/x';
  for (let i = 0; i < 450; i++) {
    const ready = await fetch(`${url}${readyPath}`, role === 'ingest' ? { method: 'POST' } : {}).then(
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
    if (child.exitCode !== null) throw new Error(`${role} role exited with ${child.exitCode}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  child.kill('SIGKILL');
  throw new Error(`${role} role did not start`);
}
