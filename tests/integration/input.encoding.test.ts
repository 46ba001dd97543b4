import { gzipSync } from 'node:zlib';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { organizations } from '@/db/schema';
import { dispatch } from '@/server/api/router';
import { handleMcp } from '@/server/mcp/server';
import { serveTrpc } from '@/server/trpc/http';
import { newOrganization, newUser, type TestUser } from '../helpers/api';
import { signToken } from '../helpers/issuer';
import { batch, newIngestion, span, storedSpans } from '../helpers/ingestion';
import { jsonRequest, jsonSpan } from '../helpers/otlp';
import { mcpHeaders } from '../helpers/mcp';

// Bodies whose bytes are not UTF-8, or whose Content-Type names another charset, on every JSON
// edge (API.md "Input hygiene", RFC 8259 §8.1: JSON text is UTF-8): 400 (415 on the ingestion
// paths, which answer a wrong media type so), nothing stored, never U+FFFD stored in their place.

const origin = 'http://localhost:3999';
// A JSON object whose one string holds `bytes` between two letters.
const withBytes = (field: string, ...bytes: number[]) =>
  Buffer.concat([Buffer.from(`{"${field}":"a`), Buffer.from(bytes), Buffer.from('b"}')]);
// Not UTF-8: a lone continuation byte, a truncated sequence, a CESU-8 surrogate, an overlong form.
const notUtf8: [string, number[]][] = [
  ['0xff 0xfe', [0xff, 0xfe]],
  ['a truncated sequence (0xc3 then ASCII)', [0xc3, 0x28]],
  ['an encoded lone surrogate (0xed 0xa0 0x80)', [0xed, 0xa0, 0x80]],
  ['an overlong slash (0xc0 0xaf)', [0xc0, 0xaf]],
];

let user: TestUser;
beforeAll(async () => {
  user = await newUser();
});

async function organizationsNamed(prefix: string): Promise<string[]> {
  const rows = await (
    await getDb()
  )
    .select({ name: organizations.name })
    .from(organizations)
    .where(eq(organizations.createdBy, user.id));
  return rows.map((r) => r.name).filter((name) => name.startsWith(prefix));
}

describe('management REST', () => {
  it.each(notUtf8)('a body with %s is 400 invalid_request and stores nothing', async (_label, bytes) => {
    const before = await organizationsNamed('a');
    const response = await dispatch(
      new Request(`${origin}/api/v1/organizations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
        body: new Uint8Array(withBytes('name', ...bytes)),
      }),
    );
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({
      code: 'invalid_request',
      message: /not valid UTF-8/,
      details: { issues: [{ path: '', message: expect.stringMatching(/not valid UTF-8/) }] },
    });
    expect(await organizationsNamed('a')).toEqual(before);
  });

  it('a gzip-encoded body is 400 naming the encoding, not "not UTF-8", and stores nothing', async () => {
    const before = await organizationsNamed('gz');
    const response = await dispatch(
      new Request(`${origin}/api/v1/organizations`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${user.token}`,
          'content-type': 'application/json',
          'content-encoding': 'gzip',
        },
        body: new Uint8Array(gzipSync('{"name":"gz"}')),
      }),
    );
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({
      code: 'invalid_request',
      message: 'Send the body uncompressed: Content-Encoding gzip is not accepted here.',
    });
    expect(await organizationsNamed('gz')).toEqual(before);
  });

  it('the same name in UTF-8 is stored as sent, and a charset other than UTF-8 is 400', async () => {
    const ok = await user.call('POST', '/organizations', {
      rawBody: '{"name":"aéb"}',
      headers: { 'content-type': 'application/json; charset="UTF-8"' },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.name).toBe('aéb');
    for (const type of ['application/json; charset=utf-16', 'application/json; charset=latin1']) {
      const refused = await user.call('POST', '/organizations', {
        rawBody: '{"name":"Latin"}',
        headers: { 'content-type': type },
      });
      expect(refused.status, type).toBe(400);
      expect(refused.body.error.code).toBe('invalid_request');
    }
    expect(await organizationsNamed('Latin')).toEqual([]);
  });
});

describe('management REST query strings', () => {
  const list = (query: string) =>
    dispatch(
      new Request(`${origin}/api/v1/organizations${query}`, { headers: { authorization: `Bearer ${user.token}` } }),
    );

  it('a name or value that is not valid percent-encoded UTF-8 is 400 with its name, never read as U+FFFD', async () => {
    for (const [query, path] of [
      ['?limit=%FF', 'limit'],
      ['?limit=%ED%A0%80', 'limit'],
      ['?cursor=%C3', 'cursor'],
      ['?%FF=1', '\ufffd'],
    ]) {
      const response = await list(query);
      expect(response.status, query).toBe(400);
      expect((await response.json()).error).toMatchObject({
        code: 'invalid_request',
        message: 'The query string is not valid percent-encoded UTF-8.',
        details: { issues: [{ path, message: 'Not valid percent-encoded UTF-8.' }] },
      });
    }
  });

  it('valid encodings and a literal % are read as before', async () => {
    expect((await list('?limit=%31%30')).status).toBe(200);
    const literal = await list('?limit=5%');
    expect(literal.status).toBe(400);
    expect((await literal.json()).error.message).not.toMatch(/percent-encoded/);
  });
});

describe('dashboard tRPC', () => {
  it('a body that is not UTF-8 is refused with BAD_REQUEST before any procedure runs', async () => {
    const response = await serveTrpc(
      new Request(`${origin}/api/trpc/organizations.create`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: new Uint8Array(withBytes('name', 0xff, 0xfe)),
      }),
      { actor: { userId: user.id, clientId: 'dashboard', human: true } },
    );
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain('not valid UTF-8');
    expect(await organizationsNamed('a\ufffd')).toEqual([]);
  });

  it('unknown fields are told one issue each, at most 100, with a short message (no echo of the whole body)', async () => {
    const body: Record<string, unknown> = { name: 'Many keys' };
    for (let i = 0; i < 5_000; i++) body[`k${i}`] = 0;
    const response = await serveTrpc(
      new Request(`${origin}/api/trpc/organizations.create`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
      { actor: { userId: user.id, clientId: 'dashboard', human: true } },
    );
    expect(response.status).toBe(400);
    const text = await response.text();
    expect(text.length).toBeLessThan(20_000);
    const { error } = JSON.parse(text);
    expect(error.data.details.issues).toHaveLength(100);
    expect(error.data.details.issues[0]).toEqual({ path: 'k0', message: 'Unknown field.' });
    expect(error.message.length).toBeLessThan(200);
    expect(await organizationsNamed('Many keys')).toEqual([]);
  });

  it('a field given twice is refused as on REST, not read as the last one', async () => {
    const response = await serveTrpc(
      new Request(`${origin}/api/trpc/organizations.create`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"name":"Twice A","name":"Twice B"}',
      }),
      { actor: { userId: user.id, clientId: 'dashboard', human: true } },
    );
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain('repeats a field');
    expect(await organizationsNamed('Twice')).toEqual([]);
  });
});

describe('MCP', () => {
  it('a message that is not UTF-8 is a JSON-RPC parse error (400) and runs no tool', async () => {
    const organizationId = (await newOrganization(user)).id;
    const token = await signToken({ sub: user.sub, audience: `${origin}/mcp`, clientId: 'encoding-agent' });
    const message = (name: Buffer) =>
      Buffer.concat([
        Buffer.from(
          `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_prompt","arguments":{"organizationId":"${organizationId}","name":"`,
        ),
        name,
        Buffer.from('"}}}'),
      ]);
    const send = (body: Buffer) =>
      handleMcp(
        new Request(`${origin}/mcp`, {
          method: 'POST',
          headers: mcpHeaders(token),
          body: new Uint8Array(body),
        }),
      );
    const refused = await send(message(Buffer.from([0x61, 0xff, 0x62])));
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'Parse error: the body is not valid UTF-8.' },
    });
    const prompts = await user.call('GET', `/organizations/${organizationId}/prompts`);
    expect(prompts.body.items).toEqual([]);
    // A field given twice is refused, not read as the last one.
    const twice = await send(
      Buffer.from(
        `{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"create_prompt","arguments":{"organizationId":"${organizationId}","name":"Twice"}}}`,
      ),
    );
    expect(twice.status).toBe(400);
    expect((await twice.json()).error).toEqual({
      code: -32600,
      message: 'Invalid Request: the field id is given more than once.',
    });
    expect((await user.call('GET', `/organizations/${organizationId}/prompts`)).body.items).toEqual([]);
    // The same call in UTF-8 runs.
    const ran = await send(message(Buffer.from('aéb')));
    expect(ran.status).toBe(200);
    expect((await ran.json()).result.structuredContent.name).toBe('aéb');
  });
});

describe('trace ingestion', () => {
  it.each(['application/json; charset=utf-16', 'application/json; charset=iso-8859-1'])(
    'native batches with %s → 415, nothing stored',
    async (type) => {
      const { secret, organizationId } = await newIngestion();
      const result = await dispatch(
        new Request(`${origin}/api/v1/traces`, {
          method: 'POST',
          headers: { authorization: `Bearer ${secret}`, 'content-type': type },
          body: JSON.stringify(batch(span())),
        }),
      );
      expect(result.status).toBe(415);
      expect((await result.json()).error.code).toBe('unsupported_media_type');
      expect(await storedSpans(organizationId)).toHaveLength(0);
    },
  );

  const otlp = (secret: string, body: string, type = 'application/json') =>
    dispatch(
      new Request(`${origin}/api/v1/otel/v1/traces`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': type },
        body,
      }),
    );

  it('OTLP/JSON with a charset other than UTF-8 → 415, nothing stored', async () => {
    const { secret, organizationId } = await newIngestion();
    const result = await otlp(secret, JSON.stringify(jsonRequest([jsonSpan()])), 'application/json; charset=utf-16');
    expect(result.status).toBe(415);
    expect(await storedSpans(organizationId)).toHaveLength(0);
    const ok = await otlp(secret, JSON.stringify(jsonRequest([jsonSpan()])), 'application/json; charset=utf-8');
    expect(ok.status).toBe(200);
    expect(await storedSpans(organizationId)).toHaveLength(1);
  });

  it('an OTLP/JSON body nested deeper than 64 levels → 400 before it is parsed, even in a field OTLP ignores', async () => {
    const { secret, organizationId } = await newIngestion();
    // The request object is level 1, the ignored field's arrays add the rest.
    const nested = (levels: number) =>
      JSON.stringify({
        ...jsonRequest([jsonSpan()]),
        extra: JSON.parse('['.repeat(levels - 1) + ']'.repeat(levels - 1)),
      });
    const refused = await otlp(secret, nested(65));
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({ code: 3, message: expect.stringMatching(/more than 64 levels/) });
    expect(await storedSpans(organizationId)).toHaveLength(0);
    const accepted = await otlp(secret, nested(64));
    expect(accepted.status).toBe(200);
    expect(await storedSpans(organizationId)).toHaveLength(1);
  });
});
