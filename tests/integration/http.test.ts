import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatch } from '@/server/api/router';
import { sendResponse, toRequest } from '../helpers/node-http';
import { signToken } from '../helpers/issuer';

// The /api/v1 handlers behind a real node:http listener, through the same adapter the production entry uses.
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer(async (req, res) => sendResponse(res, await dispatch(toRequest(req, 'http://localhost:3999'))));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('management API over HTTP', () => {
  it('challenges an anonymous caller', async () => {
    const response = await fetch(`${base}/organizations`);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain('resource_metadata=');
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const body = await response.json();
    expect(body.error.requestId).toBe(response.headers.get('x-request-id'));
  });

  it('creates and replays with an Idempotency-Key', async () => {
    const token = await signToken({ sub: `http-${Date.now()}` });
    const init = {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'idempotency-key': 'http-key-0001',
      },
      body: JSON.stringify({ name: 'Over HTTP' }),
    };
    const first = await fetch(`${base}/organizations`, init);
    expect(first.status).toBe(201);
    const second = await fetch(`${base}/organizations`, init);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotency-replayed')).toBe('true');
    expect(await second.json()).toEqual(await first.json());
  });

  it('refuses a body over 1 MiB with 413 while reading it', async () => {
    const token = await signToken({ sub: `big-${Date.now()}` });
    const response = await fetch(`${base}/organizations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) }),
    });
    expect(response.status).toBe(413);
    expect((await response.json()).error.code).toBe('payload_too_large');
  });
});
