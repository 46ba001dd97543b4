import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { newSecret } from '@/server/ids';
import { serveIngest } from '@/server/api/ingest';
import { signToken } from '../helpers/issuer';
import { newUser } from '../helpers/api';
import { batch, newIngestion, span, storedSpans } from '../helpers/ingestion';

// Opening (and, on PGlite, migrating) the database can take longer than one test's timeout.
beforeAll(() => getDb().then(() => undefined), 120_000);

// The ingest handler behind a real node:http listener, exactly as the production entry mounts it.
let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((req, res) => void serveIngest(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

type Reply = { status: number; headers: IncomingHttpHeaders; body: any; reusedSocket: boolean };

function post(options: {
  headers?: Record<string, string | number>;
  body?: string | Buffer;
  method?: string;
  agent?: Agent;
  target?: number;
}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: options.target ?? port,
        method: options.method ?? 'POST',
        path: '/api/v1/traces',
        headers: options.headers,
        agent: options.agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode!,
            headers: res.headers,
            body: text ? JSON.parse(text) : null,
            reusedSocket: req.reusedSocket,
          });
        });
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

const json = (secret: string) => ({ authorization: `Bearer ${secret}`, 'content-type': 'application/json' });

describe('POST /api/v1/traces over HTTP', () => {
  it('stores a batch and keeps the connection alive for the next one', async () => {
    const { secret, organizationId } = await newIngestion();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const first = await post({ headers: json(secret), body: JSON.stringify(batch(span(), span())), agent });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ accepted: 2 });
    expect(first.headers['content-type']).toMatch(/^application\/json/);
    expect(first.headers['x-request-id']).toMatch(/^req_/);
    const second = await post({ headers: json(secret), body: JSON.stringify(batch(span())), agent });
    expect(second.status).toBe(200);
    expect(second.reusedSocket).toBe(true);
    agent.destroy();
    expect(await storedSpans(organizationId)).toHaveLength(3);
  });

  it('a chunked body that never ends gets 413 once it passes 1 MiB, and the connection is closed', async () => {
    const { secret, organizationId } = await newIngestion();
    const outcome = await new Promise<{ status: number; sent: number; connection: string | undefined; body: any }>(
      (resolve, reject) => {
        let sent = 0;
        let answered = false;
        const req = request(
          { host: '127.0.0.1', port, method: 'POST', path: '/api/v1/traces', headers: json(secret) },
          (res) => {
            answered = true;
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => {
              req.destroy();
              resolve({
                status: res.statusCode!,
                sent,
                connection: res.headers.connection,
                body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
              });
            });
          },
        );
        req.on('error', (error) => {
          if (!answered) reject(error);
        });
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        req.write('{"version":1,"events":[');
        const pump = () => {
          if (answered || req.destroyed) return;
          sent += chunk.length;
          // Never ends: without the limit the server would wait for more forever.
          if (req.write(chunk)) setImmediate(pump);
          else req.once('drain', pump);
        };
        pump();
      },
    );
    expect(outcome.status).toBe(413);
    expect(outcome.body.error.code).toBe('payload_too_large');
    expect(outcome.connection).toBe('close');
    expect(outcome.sent).toBeGreaterThan(1024 * 1024);
    expect(await storedSpans(organizationId)).toHaveLength(0);
  });

  it('a client that goes away mid-body stores nothing, and the server keeps serving', async () => {
    const { secret, organizationId } = await newIngestion();
    const body = JSON.stringify(batch(span(), span()));
    await new Promise<void>((resolve) => {
      const req = request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/v1/traces',
        headers: { ...json(secret), 'content-length': body.length },
      });
      req.on('error', () => resolve());
      req.write(body.slice(0, body.length / 2), () => setTimeout(() => req.destroy(), 50));
      req.on('close', () => resolve());
    });
    const next = await post({ headers: json(secret), body: JSON.stringify(batch(span())) });
    expect(next.status).toBe(200);
    expect(await storedSpans(organizationId)).toHaveLength(1);
  });

  it('a declared Content-Length over 1 MiB is refused before any body is sent', async () => {
    const { secret } = await newIngestion();
    const reply = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/api/v1/traces',
          headers: { ...json(secret), 'content-length': 5 * 1024 * 1024 },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
          req.destroy();
        },
      );
      req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
      req.flushHeaders();
    });
    expect(reply).toBe(413);
  });

  it.each([
    ['text/plain', { 'content-type': 'text/plain' }, JSON.stringify(batch(span()))],
    ['missing content type', {}, JSON.stringify(batch(span()))],
    [
      'gzip-compressed JSON',
      { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      gzipSync(JSON.stringify(batch(span()))),
    ],
    [
      'deflate encoding',
      { 'content-type': 'application/json', 'content-encoding': 'deflate' },
      JSON.stringify(batch(span())),
    ],
  ])('%s → 415', async (_label, headers, body) => {
    const { secret, organizationId } = await newIngestion();
    const reply = await post({ headers: { authorization: `Bearer ${secret}`, ...headers }, body });
    expect(reply.status).toBe(415);
    expect(reply.body.error.code).toBe('unsupported_media_type');
    expect(await storedSpans(organizationId)).toHaveLength(0);
  });

  it('application/json with a charset parameter is accepted', async () => {
    const { secret } = await newIngestion();
    const reply = await post({
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify(batch(span())),
    });
    expect(reply.status).toBe(200);
  });

  it.each(['GET', 'PUT', 'DELETE', 'PATCH'])('%s → 405 with Allow: POST', async (method) => {
    const { secret } = await newIngestion();
    const reply = await post({ method, headers: { authorization: `Bearer ${secret}` } });
    expect(reply.status).toBe(405);
    expect(reply.headers.allow).toBe('POST');
    expect(reply.body.error.code).toBe('method_not_allowed');
  });

  it('keys are separate: a retrieval key and a valid management OAuth token → 401 with WWW-Authenticate', async () => {
    const user = await newUser();
    const token = await signToken({ sub: user.sub });
    for (const credential of [newSecret('plr_'), token, newSecret('plt_')]) {
      const reply = await post({ headers: json(credential), body: JSON.stringify(batch(span())) });
      expect(reply.status).toBe(401);
      expect(reply.body.error.code).toBe('unauthorized');
      expect(reply.headers['www-authenticate']).toMatch(/^Bearer/);
    }
    const anonymous = await post({
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(batch(span())),
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['www-authenticate']).toBe('Bearer');
  });
});

// The production entry itself: `--role=ingest` starts without Next or a build and serves only this path.
// Needs a Postgres server: an in-memory PGlite cannot be shared with another process.
describe.skipIf(!process.env.DATABASE_URL)('production entry --role=ingest', () => {
  let child: ChildProcess | undefined;
  let ingestPort = 0;

  beforeAll(async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    ingestPort = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const root = path.resolve(import.meta.dirname, '../..');
    child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', '--role=ingest'], {
      cwd: root,
      env: { ...process.env, PORT: String(ingestPort), LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    for (let i = 0; i < 300; i++) {
      const ready = await fetch(`http://127.0.0.1:${ingestPort}/api/v1/traces`).then(
        () => true,
        () => false,
      );
      if (ready) return;
      if (child.exitCode !== null) throw new Error(`ingest role exited with ${child.exitCode}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error('ingest role did not start');
  }, 90_000);

  afterAll(async () => {
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  });

  it('accepts a batch, answers 405 for other methods and 404 for every other path', async () => {
    const { secret, organizationId } = await newIngestion();
    const accepted = await post({ target: ingestPort, headers: json(secret), body: JSON.stringify(batch(span())) });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual({ accepted: 1 });
    expect(await storedSpans(organizationId)).toHaveLength(1);
    expect((await post({ target: ingestPort, method: 'GET' })).status).toBe(405);
    for (const other of ['/', '/api/v1/organizations', '/api/v1/openapi.json', '/sign-in']) {
      const response = await fetch(`http://127.0.0.1:${ingestPort}${other}`);
      expect(response.status, other).toBe(404);
      expect((await response.json()).error.code).toBe('not_found');
    }
  });
});
