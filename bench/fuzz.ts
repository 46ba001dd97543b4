import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withFreshDatabase } from './fresh-database';
import { startWebServer } from './web-server';
import { formatFailures, fuzzManagementApi, seedFuzzTarget } from './openapi-fuzz';

// `npm run bench -- fuzz`: the OpenAPI-driven fuzzer (bench/openapi-fuzz.ts) against the production
// entry (`server/main.ts --role=web`, Next behind the entry guard; needs `npm run build`) on a
// fresh Postgres database, FUZZ_CASES cases (default 3000; FUZZ_SEED repeats a run), then raw
// probes of every Next-served route (odd methods, bad percent-encodings, OPTIONS *, a header over
// 16 KiB, a 413 on a keep-alive connection). Passes when nothing failed: no 5xx, every error in the
// envelope, every status documented, no schema-valid request refused.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cases = Number(process.env.FUZZ_CASES ?? 3000);
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;

// One raw exchange: the status lines of what came back before the server closed, or before `ms`.
function raw(
  port: number,
  bytes: (string | Buffer)[],
  ms = 5000,
): Promise<{ statuses: number[]; text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const done = (closed: boolean) => {
      socket.destroy();
      resolve({ statuses: [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1])), text, closed });
    };
    const timer = setTimeout(() => done(false), ms);
    socket.on('data', (data) => (text += data.toString('latin1')));
    socket.on('close', () => {
      clearTimeout(timer);
      done(true);
    });
    socket.on('error', () => {});
    for (const chunk of bytes) socket.write(chunk);
  });
}

const nextRoutes = [
  '/api/v1/organizations',
  '/api/v1/me',
  '/api/trpc/organizations.list',
  '/mcp',
  '/api/webhooks/stripe',
  '/oauth/token',
  '/oauth/authorize',
  '/.well-known/oauth-protected-resource',
  '/api/auth/session',
  '/sign-in',
  '/',
];
const oddMethods = ['TRACE', 'PROPFIND', 'MKCOL', 'PURGE', 'SEARCH', 'QUERY', 'LOCK', 'UNLOCK', 'COPY', 'MOVE'];
const badPaths = [
  '/api/v1/organizations/%E0%A4%A',
  '/api/v1/organizations/%',
  '/api/v1/organizations/%ED%A0%80',
  '/api/v1/me/%ZZ',
  '/api/trpc/%E0%A4%A',
  '/api/auth/%ZZ',
  '/mcp/%ZZ',
  '/%ZZ',
];

type ProbeReport = { probes: number; serverErrors: number; failures: string[] };

async function probeEntry(port: number): Promise<ProbeReport> {
  const report: ProbeReport = { probes: 0, serverErrors: 0, failures: [] };
  const check = (what: string, got: { statuses: number[]; text: string }, expected: number) => {
    report.probes += 1;
    const status = got.statuses[0];
    if (status >= 500 || status === undefined) report.serverErrors += status === undefined ? 0 : 1;
    const envelope = /"error":\{"code":"[a-z_]+","message":/.test(got.text);
    if (status !== expected || !envelope)
      report.failures.push(`${what}: ${status ?? 'no answer'} ${got.text.slice(0, 200).replace(/\r\n/g, ' | ')}`);
  };
  const request = (method: string, target: string) =>
    `${method} ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`;
  for (const route of nextRoutes)
    for (const method of oddMethods) check(`${method} ${route}`, await raw(port, [request(method, route)]), 405);
  for (const target of badPaths) check(`GET ${target}`, await raw(port, [request('GET', target)]), 400);
  check('OPTIONS *', await raw(port, [request('OPTIONS', '*')]), 405);
  check(
    'a header over 16 KiB',
    await raw(port, [`GET /api/v1/me HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`]),
    431,
  );
  check('an unknown method', await raw(port, ['FOO / HTTP/1.1\r\nHost: localhost\r\n\r\n']), 400);
  // A body over 1 MiB on a keep-alive connection, then a second request: 413, and the connection closes.
  const big = Buffer.alloc(3 * 1024 * 1024, 'a');
  for (const route of ['/api/webhooks/stripe', '/api/trpc/account.signUp', '/mcp', '/oauth/register']) {
    const got = await raw(port, [
      `POST ${route} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n${big.length.toString(16)}\r\n`,
      big,
      '\r\n0\r\n\r\nGET /api/v1/openapi.json HTTP/1.1\r\nHost: localhost\r\n\r\n',
    ]);
    report.probes += 1;
    // /mcp answers 401 before reading (no token): the body is dropped and the connection goes on.
    const answered = got.closed || got.statuses.length === 2;
    if (!answered)
      report.failures.push(
        `POST ${route} over 1 MiB then GET on one connection: no answer to the second request, connection left open (${got.statuses.join(', ')})`,
      );
    if (got.statuses.some((s) => s >= 500)) report.serverErrors += 1;
  }
  return report;
}

export async function main(): Promise<boolean> {
  if (!existsSync(path.join(root, '.next', 'BUILD_ID'))) {
    console.error('No production build: run `NEXT_TELEMETRY_DISABLED=1 npm run build` first.');
    return false;
  }
  return withFreshDatabase(async (databaseUrl) => {
    const server = await startWebServer(databaseUrl, {
      env: { STRIPE_WEBHOOK_SECRET: 'whsec_fuzz', LOG_LEVEL: 'fatal' },
    });
    const { baseUrl, appUrl, issuer } = server;
    const port = Number(new URL(baseUrl).port);
    try {
      const token = await issuer.sign('fuzz-owner', `${appUrl}/api/v1`);
      const memberToken = await issuer.sign('fuzz-member', `${appUrl}/api/v1`);
      const api = async (method: string, route: string, body?: unknown, as = token) => {
        const response = await fetch(`${baseUrl}/api/v1${route}`, {
          method,
          headers: { authorization: `Bearer ${as}`, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        });
        const json = await response.json();
        if (!response.ok) throw new Error(`seeding ${method} ${route}: ${response.status} ${JSON.stringify(json)}`);
        return json;
      };
      const member = await api('GET', '/me', undefined, memberToken);
      const organizationId = (await api('POST', '/organizations', { name: 'Fuzz' })).id;
      const target = await seedFuzzTarget(api, {
        baseUrl,
        token,
        organizationId,
        member: { id: member.id, email: 'fuzz-member@example.com' },
      });
      const fuzz = await fuzzManagementApi(target, { runs: cases, seed });
      const probes = await probeEntry(port);
      console.log(
        `fuzz: ${fuzz.cases} OpenAPI cases (${fuzz.valid} schema-valid, ${fuzz.mutated} mutated) in ${(fuzz.ms / 1000).toFixed(1)} s, seed ${fuzz.seed}; statuses ${JSON.stringify(fuzz.byStatus)}`,
      );
      console.log(
        `fuzz: 5xx ${fuzz.serverErrors}; semantic refusals of schema-valid requests ${fuzz.semanticRefusals}; failures ${fuzz.failures.length}`,
      );
      if (fuzz.failures.length) console.log(formatFailures(fuzz, 30));
      console.log(`entry probes: ${probes.probes}, 5xx ${probes.serverErrors}, failures ${probes.failures.length}`);
      for (const failure of probes.failures.slice(0, 30)) console.log(`  ${failure}`);
      return fuzz.failures.length === 0 && probes.failures.length === 0 && probes.serverErrors === 0;
    } finally {
      await server.stop();
    }
  });
}
