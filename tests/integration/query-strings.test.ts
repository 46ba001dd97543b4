import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { getDb } from '@/db/client';
import { serveIngest } from '@/server/api/ingest';
import { serveOtlp } from '@/server/api/otlp';
import { handleMcp } from '@/server/mcp/server';
import { serveTrpc } from '@/server/trpc/http';
import { newUser } from '../helpers/api';
import { batch, newIngestion, span, storedSpans } from '../helpers/ingestion';
import { signToken } from '../helpers/issuer';
import { mcpHeaders } from '../helpers/mcp';
import { deliverRaw, event, signatureFor } from '../helpers/stripe';

// API.md "Input hygiene" (every surface, body or query) and "query strings are strict", on the
// surfaces outside the management router: native ingestion and OTLP (the production hot-path
// handlers behind node:http), MCP, tRPC and Stripe's webhook. A poison string or an unknown
// parameter in the query is 400 invalid_request before anything is stored.
vi.hoisted(() => {
  process.env.STRIPE_WEBHOOK_SECRET = 'whsec_test_current'; // tests/helpers/fake-stripe.ts's webhookSecret
});
beforeAll(() => getDb().then(() => undefined), 120_000);

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer(
    (req, res) => void (req.url?.startsWith('/api/v1/otel/') ? serveOtlp(req, res) : serveIngest(req, res)),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const poison = ['%00=1', 'a=%00', 'a=%ED%A0%80', 'x=1'];

async function expectRefused(response: Response, parameter: string) {
  expect(response.status, parameter).toBe(400);
  const body = await response.json();
  expect(body.error.code, parameter).toBe('invalid_request');
  // The issue names the query parameter (not something in the body).
  // A name that is itself poison is not echoed back: its issue's path is ''.
  const raw = decodeURIComponent(parameter.split('=')[0]);
  const name = raw.includes('\u0000') ? '' : raw;
  expect(
    body.error.details.issues.map((issue: { path: string }) => issue.path),
    parameter,
  ).toContain(name);
}

describe('ingestion and OTLP take no query string', () => {
  it('native batches: a poison or unknown parameter is 400 and the span is not stored; none is 200', async () => {
    const fixture = await newIngestion();
    const send = (query: string, spanId: string) =>
      fetch(`${base}/api/v1/traces${query}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fixture.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify(batch(span({ spanId, rootSpanId: spanId }))),
      });
    for (const [i, query] of poison.entries())
      await expectRefused(await send(`?${query}`, `00000000000000a${i}`), query);
    expect(await storedSpans(fixture.organizationId)).toEqual([]);
    const plain = await send('', '00000000000000b1');
    expect(plain.status, await plain.clone().text()).toBe(200);
    expect(await storedSpans(fixture.organizationId)).toHaveLength(1);
  });

  it('OTLP/JSON: a poison or unknown parameter is 400 and nothing is stored', async () => {
    const fixture = await newIngestion();
    const now = BigInt(Date.now()) * 1_000_000n;
    const send = (query: string) =>
      fetch(`${base}/api/v1/otel/v1/traces${query}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fixture.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          resourceSpans: [
            {
              scopeSpans: [
                {
                  spans: [
                    {
                      traceId: '9b9b9b9b9b9b9b9b9b9b9b9b9b9b9b9b',
                      spanId: '9a9a9a9a9a9a9a9a',
                      name: 'query',
                      startTimeUnixNano: String(now),
                      endTimeUnixNano: String(now + 1000n),
                    },
                  ],
                },
              ],
            },
          ],
        }),
      });
    for (const query of poison) {
      const refused = await send(`?${query}`);
      expect(refused.status, query).toBe(400);
      // OTLP answers in its own Status shape: the message names the query string.
      expect((await refused.json()).message, query).toMatch(/query string|parameter/i);
    }
    expect(await storedSpans(fixture.organizationId)).toEqual([]);
    expect((await send('')).status).toBe(200);
    expect(await storedSpans(fixture.organizationId)).toHaveLength(1);
  });
});

describe('MCP, tRPC and the Stripe webhook', () => {
  it('MCP: a poison or unknown parameter is 400 and the tool does not run', async () => {
    const user = await newUser();
    const token = await signToken({
      sub: user.sub,
      email: user.email,
      audience: `${process.env.APP_URL}/mcp`,
      clientId: 'test-agent',
      extra: { email_verified: true },
    });
    const call = (query: string, name: string) =>
      handleMcp(
        new Request(`http://localhost:3999/mcp${query}`, {
          method: 'POST',
          headers: mcpHeaders(token),
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: 'create_organization', arguments: { name } },
          }),
        }),
      );
    for (const query of poison) await expectRefused(await call(`?${query}`, `Query ${query}`), query);
    const listed = await user.call('GET', '/organizations');
    expect(listed.body.items.map((o: { name: string }) => o.name)).toEqual([]);
    expect((await call('', 'Plain')).status).toBe(200);
    expect((await user.call('GET', '/organizations')).body.items).toHaveLength(1);
  });

  it('tRPC: only batch and input are read; a poison or unknown parameter refuses every call of the batch', async () => {
    const user = await newUser();
    const actor = { userId: user.id, clientId: 'dashboard', human: true };
    const create = (query: string, name: string) =>
      serveTrpc(
        new Request(`http://localhost:3999/api/trpc/organizations.create${query}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ 0: { name } }),
        }),
        { actor },
      );
    for (const query of poison) {
      const response = await create(`?batch=1&${query}`, `Query ${query}`);
      expect(response.status, query).toBe(400);
      const [answer] = await response.json();
      expect(answer.error.data.appCode ?? answer.error.data.code, query).toMatch(/invalid_request|BAD_REQUEST/);
    }
    expect((await user.call('GET', '/organizations')).body.items).toEqual([]);
    expect((await create('?batch=1', 'Plain')).status).toBe(200);
    expect((await user.call('GET', '/organizations')).body.items).toHaveLength(1);
  });

  it('Stripe webhook: a poison parameter is 400; the operator’s own parameters are accepted', async () => {
    const payload = JSON.stringify(event('customer.created', { id: 'cus_query', object: 'customer' }));
    const post = (query: string) =>
      deliverRaw(payload, signatureFor(payload), { url: `http://localhost:3999/api/webhooks/stripe${query}` });
    for (const query of ['%00=1', 'a=%00', 'a=%ED%A0%80']) {
      const refused = await post(`?${query}`);
      expect([refused.status, refused.body.error.code], query).toEqual([400, 'invalid_request']);
    }
    const accepted = await post('?source=stripe');
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
  });
});
