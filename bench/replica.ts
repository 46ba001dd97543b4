import { spawn, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate, openDatabase } from '../db/client';
import { startStandbyPair } from '../tests/helpers/standby';
import { bundle, bundlePrompt } from '../tests/helpers/imports';
import { percentile } from './fresh-database';
import { startIssuer } from './issuer';

// `npm run bench -- replica`: what RETRIEVAL_DATABASE_URL adds to a label move. A primary and its
// streaming standby on this machine (tests/helpers/standby.ts, ports 5440–5449); two processes of
// the management API on the same primary (bench/replica-server.ts, ports 3500 and 3501), one
// without the setting (the baseline) and one with it, whose moves answer only once the standby
// has applied them. Moves alternate between the two, each a real change (the label goes back and
// forth between two versions), one at a time as an operator or a release script sends them.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const warmup = 10;
const moves = Number(process.env.BENCH_MOVES ?? 50);

function load(): string {
  return `load average ${loadavg()
    .map((n) => n.toFixed(2))
    .join(', ')}`;
}

type Api = (method: string, route: string, body?: unknown) => Promise<{ status: number; body: any; ms: number }>;

async function startServer(port: number, env: Record<string, string>): Promise<{ child: ChildProcess; api: Api }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/replica-server.ts'], {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'warn', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`bench/replica-server.ts exited with ${code}`)));
  });
  const token = env.TOKEN;
  const api: Api = async (method, route, body) => {
    const started = performance.now();
    const response = await fetch(`http://127.0.0.1:${port}/api/v1${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null, ms: performance.now() - started };
  };
  return { child, api };
}

// An organization with one imported prompt of two versions; the production label's path and the ids.
async function preparePrompt(api: Api, name: string): Promise<{ path: string; versionIds: string[] }> {
  const org = await api('POST', '/organizations', { name });
  if (org.status !== 201) throw new Error(`create organization: ${org.status} ${JSON.stringify(org.body)}`);
  const imported = await api('POST', `/organizations/${org.body.id}/imports`, {
    source: 'promptloop',
    document: bundle([bundlePrompt(name)]),
  });
  if (imported.status !== 201) throw new Error(`import: ${imported.status} ${JSON.stringify(imported.body)}`);
  const base = `/organizations/${org.body.id}/prompts/${imported.body.prompts[0].promptId}`;
  const versions = await api('GET', `${base}/versions`);
  return { path: `${base}/labels/production`, versionIds: versions.body.items.map((v: { id: string }) => v.id) };
}

function summary(label: string, ms: number[]): { p50: number; p95: number } {
  const sorted = [...ms].sort((a, b) => a - b);
  const p50 = percentile(sorted, 50);
  const p95 = percentile(sorted, 95);
  console.log(`${label.padEnd(44)} p50 ${p50.toFixed(2).padStart(6)} ms   p95 ${p95.toFixed(2).padStart(6)} ms`);
  return { p50, p95 };
}

export async function main(): Promise<boolean> {
  console.log(`Label move with and without the retrieval standby: ${moves} moves each, ${load()}`);
  const pair = await startStandbyPair();
  const issuer = await startIssuer();
  const servers: ChildProcess[] = [];
  try {
    const database = await openDatabase({ url: pair.primaryUrl, max: 1 });
    await migrate(database);
    await database.close();
    const appUrl = 'http://localhost:3500';
    const env = {
      DATABASE_URL: pair.primaryUrl,
      APP_URL: appUrl,
      OAUTH_ISSUER: issuer.url,
      OAUTH_JWKS_URL: `${issuer.url}/jwks`,
      MANAGEMENT_RATE_LIMIT_PER_MINUTE: '0',
      TOKEN: await issuer.sign('bench-replica', `${appUrl}/api/v1`),
    };
    const primaryOnly = await startServer(3500, env);
    const withStandby = await startServer(3501, { ...env, RETRIEVAL_DATABASE_URL: pair.standbyUrl });
    servers.push(primaryOnly.child, withStandby.child);
    const sides = [
      { name: 'primary only (baseline)', api: primaryOnly.api, ms: [] as number[] },
      { name: 'RETRIEVAL_DATABASE_URL (waits for the standby)', api: withStandby.api, ms: [] as number[] },
    ];
    for (const side of sides) if ((await side.api('GET', '/me')).status !== 200) throw new Error('GET /me failed');
    const prompts = await Promise.all(sides.map((side, i) => preparePrompt(side.api, `Replica bench ${i}`)));
    for (let i = 0; i < warmup + moves; i++) {
      for (const [s, side] of sides.entries()) {
        const { path: route, versionIds } = prompts[s];
        const moved = await side.api('PUT', route, { versionId: versionIds[i % 2] });
        if (moved.status !== 200) throw new Error(`move: ${moved.status} ${JSON.stringify(moved.body)}`);
        if (i >= warmup) side.ms.push(moved.ms);
      }
    }
    const [base, standby] = sides.map((side) => summary(side.name, side.ms));
    console.log(
      `added by the wait: p50 +${(standby.p50 - base.p50).toFixed(2)} ms (×${(standby.p50 / base.p50).toFixed(2)}), p95 +${(standby.p95 - base.p95).toFixed(2)} ms (×${(standby.p95 / base.p95).toFixed(2)}); ${load()}`,
    );
    return true;
  } finally {
    await Promise.all(
      servers.map((child) => new Promise((resolve) => (child.kill('SIGTERM'), child.once('exit', resolve)))),
    );
    await new Promise((resolve) => issuer.server.close(resolve));
    await pair.stop();
  }
}
