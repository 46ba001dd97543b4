import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CliError, exitCodes } from '@/cli/exit';
import { ClientCredentials } from '@/cli/oauth';

// The OAuth side of the CLI follows the retry policy of API calls (README "CLI"): discovery and the
// token endpoint are tried again on network errors, 5xx and 429 (after Retry-After), up to
// PROMPTLOOP_MAX_ATTEMPTS. A small local server speaks RFC 9728 / RFC 8414 metadata and the token
// endpoint, and is told which answers fail.

type Fault = 'drop' | number | null;
let faults: Record<string, Fault[]> = {};
const seen: string[] = [];
let base = '';

function answer(req: IncomingMessage, res: ServerResponse) {
  const path = new URL(req.url ?? '/', base).pathname;
  seen.push(`${req.method} ${path}`);
  const fault = faults[path]?.shift() ?? null;
  if (fault === 'drop') return void req.socket.destroy();
  if (typeof fault === 'number')
    return void res.writeHead(fault, { 'retry-after': '0', 'content-type': 'text/plain' }).end('not now');
  const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  if (path === '/.well-known/oauth-protected-resource')
    return json({ resource: `${base}/api/v1`, authorization_servers: [base] });
  if (path === '/.well-known/oauth-authorization-server')
    return json({
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      code_challenge_methods_supported: ['S256'],
    });
  if (path === '/oauth/token') {
    let form = '';
    req.on('data', (chunk) => (form += chunk));
    req.on('end', () => {
      const grant = new URLSearchParams(form).get('grant_type');
      if (grant !== 'client_credentials') return void res.writeHead(400).end('{"error":"unsupported_grant_type"}');
      json({ access_token: `token-${seen.length}`, token_type: 'Bearer', expires_in: 3600 });
    });
    return;
  }
  res.writeHead(404).end();
}

const server = createServer(answer);
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  process.env.PROMPTLOOP_RETRY_BASE_MS = '1';
});
afterAll(async () => {
  delete process.env.PROMPTLOOP_RETRY_BASE_MS;
  delete process.env.PROMPTLOOP_MAX_ATTEMPTS;
  await new Promise((resolve) => server.close(resolve));
});
afterEach(() => {
  faults = {};
  seen.length = 0;
  delete process.env.PROMPTLOOP_MAX_ATTEMPTS;
});

const account = () => new ClientCredentials(base, 'sa_test', 'pls_secret');

describe('a service account’s token, through transient failures', () => {
  it('rides out a 503 and a dropped connection in discovery and a 429 at the token endpoint', async () => {
    faults = {
      '/.well-known/oauth-protected-resource': [503],
      '/.well-known/oauth-authorization-server': ['drop'],
      '/oauth/token': [429, 500],
    };
    expect(await account().current()).toMatch(/^token-/);
    expect(seen).toEqual([
      'GET /.well-known/oauth-protected-resource',
      'GET /.well-known/oauth-protected-resource',
      'GET /.well-known/oauth-authorization-server',
      'GET /.well-known/oauth-authorization-server',
      'POST /oauth/token',
      'POST /oauth/token',
      'POST /oauth/token',
    ]);
  });

  it('gives up after PROMPTLOOP_MAX_ATTEMPTS, saying the server is unavailable (not that it has no metadata)', async () => {
    process.env.PROMPTLOOP_MAX_ATTEMPTS = '3';
    faults = { '/.well-known/oauth-authorization-server': [503, 503, 503, 503] };
    const failure = await account()
      .current()
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(CliError);
    expect((failure as CliError).exitCode).toBe(exitCodes.apiError);
    expect((failure as CliError).message).toMatch(/answered 503 on every attempt: the server is unavailable for now/);
    expect(seen.filter((line) => line.endsWith('oauth-authorization-server'))).toHaveLength(3);
  });

  it('a token endpoint that keeps answering 429 is reported after the last attempt; a refusal is not retried', async () => {
    process.env.PROMPTLOOP_MAX_ATTEMPTS = '2';
    faults = { '/oauth/token': [429, 429, 429] };
    const limited = await account()
      .current()
      .catch((error: unknown) => error);
    expect((limited as CliError).message).toMatch(/token endpoint answered 429/);
    expect(seen.filter((line) => line === 'POST /oauth/token')).toHaveLength(2);
    seen.length = 0;
    faults = { '/oauth/token': [401] };
    const refused = await account()
      .current()
      .catch((error: unknown) => error);
    expect((refused as CliError).exitCode).toBe(exitCodes.notLoggedIn);
    expect(seen.filter((line) => line === 'POST /oauth/token')).toHaveLength(1);
  });
});
