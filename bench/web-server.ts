import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './ingest';
import { startIssuer } from './issuer';

// The production entry (`server/main.ts --role=web`, Next, NODE_ENV=production) on a given database,
// with an OAuth issuer of the benchmark's own: what bench/fuzz.ts and bench/imports.ts call over HTTP.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

type Issuer = Awaited<ReturnType<typeof startIssuer>>;
export type WebServer = {
  child: ChildProcess;
  baseUrl: string;
  appUrl: string;
  issuer: Issuer;
  stop: () => Promise<void>;
};

async function waitFor(child: ChildProcess, url: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`);
    const up = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return;
    if (Date.now() > deadline) throw new Error('the server did not start within 120 s');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Starts the server and waits until it answers; `env` adds to (or overrides) the defaults below. */
export async function startWebServer(
  databaseUrl: string,
  options: { env?: Record<string, string>; nodeArgs?: string[] } = {},
): Promise<WebServer> {
  const issuer = await startIssuer();
  const port = await freePort();
  const appUrl = `http://localhost:${port}`;
  const child = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), '--import', 'tsx', 'server/main.ts', '--role=web'],
    {
      cwd: root,
      env: {
        ...process.env,
        NODE_ENV: 'production',
        PORT: String(port),
        APP_URL: appUrl,
        DATABASE_URL: databaseUrl,
        OAUTH_ISSUER: issuer.url,
        OAUTH_JWKS_URL: `${issuer.url}/jwks`,
        MANAGEMENT_RATE_LIMIT_PER_MINUTE: '0',
        NEXT_TELEMETRY_DISABLED: '1',
        ...options.env,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const stop = async () => {
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)));
    await new Promise((resolve) => issuer.server.close(resolve));
  };
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await waitFor(child, `${baseUrl}/api/v1/openapi.json`);
  } catch (error) {
    await stop();
    throw error;
  }
  return { child, baseUrl, appUrl, issuer, stop };
}
