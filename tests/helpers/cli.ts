import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import { dispatch } from '@/server/api/router';
import { isRetrievalPath, serveRetrieval } from '@/server/api/retrieval';
import { sendResponse, toRequest } from './node-http';
import { Store, type StoredTokens } from '@/cli/config';

// The CLI against a running server: the app's /api/v1 handlers (and the retrieval hot path, and
// any extra handlers a test mounts, such as the OAuth endpoints) behind a real node:http listener,
// and the CLI run as a child process, exactly as a user runs it: the installable bundle, built from
// the current source once per run (tests/global-setup.ts).

const root = path.resolve(import.meta.dirname, '../..');
export const appOrigin = 'http://localhost:3999';

export type Handler = (request: Request) => Promise<Response | null>;
export type AppServer = {
  url: string;
  stop: () => Promise<void>;
  requests: { method: string; path: string; idempotencyKey: string | null }[];
};

export async function startAppServer(
  extra: Handler[] = [],
  options: { port?: number; origin?: string } = {},
): Promise<AppServer> {
  const requests: AppServer['requests'] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer(async (req, res) => {
    const pathname = (req.url ?? '/').split('?')[0];
    requests.push({
      method: req.method ?? '',
      path: req.url ?? '',
      idempotencyKey: (req.headers['idempotency-key'] as string | undefined) ?? null,
    });
    try {
      if (isRetrievalPath(pathname)) return void (await serveRetrieval(req, res));
      // As server/main.ts does: the peer address for the rate limits, never a client-sent copy.
      req.headers['x-promptloop-client-ip'] = req.socket.remoteAddress ?? '127.0.0.1';
      const request = toRequest(req, options.origin ?? appOrigin);
      for (const handler of extra) {
        const response = await handler(request);
        if (response) return void (await sendResponse(res, response));
      }
      if (pathname.startsWith('/api/v1/')) return void (await sendResponse(res, await dispatch(request)));
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end('{"error":{"code":"not_found","message":"no such route","details":{}}}');
    } catch (error) {
      res.writeHead(500).end(String(error));
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

/**
 * A proxy in front of `target`. `fault(req, attempt)` decides per request: 'pass', 'drop' (the
 * request reaches the server, its response is thrown away and the connection cut) or a status to
 * answer without forwarding (with Retry-After: 1 for 429/503; 409 is idempotency_in_progress), or 'slow' (the response is held
 * back for 1.5 s). Records every request's key.
 */
export async function startProxy(
  target: string,
  fault: (req: IncomingMessage, attempt: number) => 'pass' | 'drop' | 'slow' | number,
) {
  const seen: { method: string; path: string; idempotencyKey: string | null; outcome: string; at: number }[] = [];
  let count = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const decision = fault(req, ++count);
    seen.push({
      method: req.method ?? '',
      path: req.url ?? '',
      idempotencyKey: (req.headers['idempotency-key'] as string | undefined) ?? null,
      outcome: String(decision),
      at: Date.now(),
    });
    if (typeof decision === 'number') {
      req.resume();
      const code = decision === 409 ? 'idempotency_in_progress' : decision === 429 ? 'rate_limited' : 'unavailable';
      const headers = { 'content-type': 'application/json', ...(decision === 409 ? {} : { 'retry-after': '1' }) };
      return void res
        .writeHead(decision, headers)
        .end(JSON.stringify({ error: { code, message: 'proxy says no', details: {} } }));
    }
    const upstream = httpRequest(
      new URL(req.url ?? '/', target),
      { method: req.method, headers: { ...req.headers, host: new URL(target).host } },
      (answer) => {
        if (decision === 'drop') {
          answer.resume();
          answer.on('end', () => res.socket?.destroy());
          return;
        }
        const forward = () => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        };
        if (decision === 'slow') setTimeout(forward, 1500);
        else forward();
      },
    );
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export type CliResult = { code: number; stdout: string; stderr: string };

export function newConfigDir(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'promptloop-cli-'));
}

/** Runs `promptloop …` with its own config directory; never inherits the test's database settings. */
export function runCli(
  args: string[],
  options: {
    configDir: string;
    url?: string;
    env?: Record<string, string>;
    cwd?: string;
    onStdout?: (text: string) => void;
    /** The program to run instead of this run's CLI bundle (e.g. `['npx', 'promptloop']` in an installed project). */
    program?: string[];
  },
): Promise<CliResult> {
  const env = {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'production' as const,
    HOME: options.configDir,
    PROMPTLOOP_CONFIG_DIR: options.configDir,
    PROMPTLOOP_RETRY_BASE_MS: '50',
    NODE_NO_WARNINGS: '1',
    ...(options.url ? { PROMPTLOOP_URL: options.url } : {}),
    ...options.env,
  };
  return new Promise((resolve, reject) => {
    const [command, ...programArgs] = options.program ?? [process.execPath, inject('cliBundle')];
    const child = spawn(command, [...programArgs, ...args], {
      cwd: options.cwd ?? root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      options.onStdout?.(stdout);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** Stores tokens for `url` in the config directory the way `promptloop login` does. */
export function seedLogin(
  configDir: string,
  url: string,
  tokens: Partial<StoredTokens> & { accessToken: string },
): void {
  new Store(url, { PROMPTLOOP_CONFIG_DIR: configDir }).saveTokens({
    issuer: appOrigin,
    clientId: 'promptloop-cli',
    resource: `${appOrigin}/api/v1`,
    tokenEndpoint: `${url}/oauth/token`,
    revocationEndpoint: `${url}/oauth/revoke`,
    refreshToken: null,
    expiresAt: Date.now() + 9 * 60_000,
    scope: 'management',
    ...tokens,
  });
}

export function storedLogin(configDir: string, url: string): StoredTokens | undefined {
  return new Store(url, { PROMPTLOOP_CONFIG_DIR: configDir }).tokens();
}
