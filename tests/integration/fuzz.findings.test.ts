import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '@/server/api/router';
import { otlpSchema } from '@/server/otlp/schema';
import { newOrganization, newUser, type TestUser } from '../helpers/api';
import { startEntry } from '../helpers/entry';

// Regression tests for the independent fuzzing run's findings (Q1 item 9, D1–D7; D5 is in
// mcp.test.ts, D8 in billing.webhooks.test.ts). The entry-level ones run against the production
// entry's guard and socket listeners in front of the app's own handlers on a real node:http server
// (tests/helpers/entry.ts); e2e/edge.spec.ts repeats them against the production build.

let entry: Awaited<ReturnType<typeof startEntry>>;
let port: number;
beforeAll(async () => {
  process.env.STRIPE_WEBHOOK_SECRET ??= 'whsec_findings';
  entry = await startEntry();
  port = entry.port;
});
afterAll(() => entry.close());

type RawResponse = { status: number; headers: Record<string, string>; body: string };

// Parses the complete HTTP/1.1 responses in `text` (Content-Length or chunked bodies); a response
// still arriving is left out.
function parseResponses(text: string): RawResponse[] {
  const responses: RawResponse[] = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) break;
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers = Object.fromEntries(
      lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
    );
    rest = rest.slice(end + 4);
    let body = '';
    if (headers['transfer-encoding'] === 'chunked') {
      for (;;) {
        const lineEnd = rest.indexOf('\r\n');
        if (lineEnd === -1) return responses;
        const size = parseInt(rest.slice(0, lineEnd), 16);
        if (rest.length < lineEnd + 2 + size + 2) return responses;
        body += rest.slice(lineEnd + 2, lineEnd + 2 + size);
        rest = rest.slice(lineEnd + 2 + size + 2);
        if (size === 0) break;
      }
    } else {
      const length = Number(headers['content-length'] ?? 0);
      if (rest.length < length) return responses;
      body = rest.slice(0, length);
      rest = rest.slice(length);
    }
    responses.push({ status: Number(statusLine.split(' ')[1]), headers, body });
  }
  return responses;
}

// Writes raw bytes on one connection and reads until the server closes it, or until `expected`
// responses have arrived (a keep-alive connection then stays open and is ended here).
function exchange(
  chunks: (string | Buffer)[],
  expected = Infinity,
): Promise<{ responses: RawResponse[]; closedByServer: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let done = false;
    const finish = (closedByServer: boolean) => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve({ responses: parseResponses(text), closedByServer });
    };
    socket.on('data', (data) => {
      text += data.toString('latin1');
      if (parseResponses(text).length >= expected) finish(false);
    });
    socket.on('close', () => finish(true));
    socket.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNRESET' || error.code === 'EPIPE' ? finish(true) : reject(error),
    );
    for (const chunk of chunks) socket.write(chunk);
  });
}

function expectEnvelope(response: RawResponse, status: number, code: string): Record<string, any> {
  expect(response.status, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const body = JSON.parse(response.body);
  expect(body).toEqual({
    error: {
      code,
      message: expect.any(String),
      details: expect.any(Object),
      requestId: expect.stringMatching(/^req_/),
    },
  });
  expect(response.headers['x-request-id']).toBe(body.error.requestId);
  return body.error;
}

const get = (target: string, method = 'GET') =>
  `${method} ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`;

describe('D1: a path that is not valid percent-encoded UTF-8', () => {
  it.each([
    '/api/v1/organizations/%E0%A4%A',
    '/api/v1/organizations/%',
    '/api/v1/organizations/%ED%A0%80',
    '/api/v1/me/%ZZ',
    '/api/trpc/%E0%A4%A',
    '/api/auth/%ZZ',
    '/%ZZ',
  ])('%s is 400 invalid_request in the envelope', async (target) => {
    const [response] = (await exchange([get(target)])).responses;
    const error = expectEnvelope(response, 400, 'invalid_request');
    expect(error.details.issues).toEqual([{ path: 'path', message: expect.any(String) }]);
  });
});

describe('D2 and D6: methods Next does not serve, and the request target', () => {
  it.each([
    ['TRACE', '/api/v1/organizations', 'GET, POST'],
    ['TRACE', '/api/v1/organizations/org_x/prompts/prm_x/dataset/cases/case_x', 'PUT, DELETE'],
    ['TRACE', '/api/trpc/organizations.list', 'GET, POST'],
    ['TRACE', '/mcp', 'POST'],
    ['TRACE', '/api/webhooks/stripe', 'POST'],
    ['TRACE', '/oauth/token', 'POST'],
    ['TRACE', '/oauth/authorize', 'GET, POST'],
    ['TRACE', '/.well-known/oauth-protected-resource', 'GET'],
    ['TRACE', '/api/auth/session', 'GET, POST'],
    ['TRACE', '/organizations', 'GET, HEAD'],
    ['PROPFIND', '/api/v1/me', 'GET'],
    ['MKCOL', '/api/trpc/x', 'GET, POST'],
    ['PURGE', '/mcp', 'POST'],
    ['SEARCH', '/api/webhooks/stripe', 'POST'],
    ['QUERY', '/api/v1/organizations', 'GET, POST'],
    ['LOCK', '/sign-in', 'GET, HEAD'],
  ])('%s %s is 405 with Allow: %s and the envelope', async (method, target, allow) => {
    const [response] = (await exchange([get(target, method)])).responses;
    expectEnvelope(response, 405, 'method_not_allowed');
    expect(response.headers.allow).toBe(allow);
  });

  it('an odd method on an /api/v1 path that names no route is 404', async () => {
    const [response] = (await exchange([get('/api/v1/nothing-here', 'TRACE')])).responses;
    expectEnvelope(response, 404, 'not_found');
  });

  it('OPTIONS * is 405 with the methods the server serves; another target that is not a path is 400', async () => {
    const [options] = (await exchange([get('*', 'OPTIONS')])).responses;
    expectEnvelope(options, 405, 'method_not_allowed');
    expect(options.headers.allow).toBe('GET, HEAD, POST, PUT, PATCH, DELETE');
    const [star] = (await exchange([get('*')])).responses;
    expectEnvelope(star, 400, 'invalid_request');
  });

  it('HTTP/1.1 without Host, or with two, is 400 in the envelope; HTTP/1.0 needs none', async () => {
    const [missing] = (await exchange(['GET /api/v1/openapi.json HTTP/1.1\r\nConnection: close\r\n\r\n'])).responses;
    expectEnvelope(missing, 400, 'invalid_request');
    expect(JSON.parse(missing.body).error.details.issues).toEqual([{ path: 'headers.host', message: 'Required.' }]);
    const [twice] = (
      await exchange(['GET /api/v1/openapi.json HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n'])
    ).responses;
    expectEnvelope(twice, 400, 'invalid_request');
    const [old] = (await exchange(['GET /api/v1/openapi.json HTTP/1.0\r\n\r\n'])).responses;
    expect(old.status).toBe(200);
  });

  it('the absolute form is served as its path', async () => {
    const [response] = (await exchange([get('http://localhost/api/v1/openapi.json')])).responses;
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body).openapi).toBe('3.1.0');
  });

  it('a header over 16 KiB is 431 in the envelope, then the connection closes', async () => {
    const { responses, closedByServer } = await exchange([
      `GET /api/v1/me HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`,
    ]);
    expectEnvelope(responses[0], 431, 'headers_too_large');
    expect(responses[0].headers.connection).toBe('close');
    expect(closedByServer).toBe(true);
  });

  it('HEAD is served wherever GET is, without a body; OPTIONS names the methods the 405 names', async () => {
    const user = await newUser();
    const { responses } = await exchange([
      `HEAD /api/v1/me HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${user.token}\r\nConnection: close\r\n\r\n`,
    ]);
    expect(responses[0].status).toBe(200);
    expect(responses[0].headers['content-type']).toMatch(/^application\/json/);
    expect(responses[0].body).toBe('');
    const options = await fetch(`${entry.url}/api/v1/organizations`, { method: 'OPTIONS' });
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')!.split(', ').sort()).toEqual(['GET', 'HEAD', 'OPTIONS', 'POST']);
    const refused = await fetch(`${entry.url}/api/v1/organizations`, { method: 'DELETE' });
    expect(refused.status).toBe(405);
    expect(refused.headers.get('allow')).toBe('GET, POST');
    expect((await fetch(`${entry.url}/api/v1/no-such-thing`, { method: 'OPTIONS' })).status).toBe(404);
  });

  it('two Authorization headers are 400, whichever comes first (never the first one silently)', async () => {
    const user = await newUser();
    for (const pair of [
      [`Bearer ${user.token}`, 'Bearer bad.bad.bad'],
      ['Bearer bad.bad.bad', `Bearer ${user.token}`],
      [`Bearer ${user.token}`, `Bearer ${user.token}`],
    ]) {
      const { responses } = await exchange(
        [
          `GET /api/v1/me HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${pair[0]}\r\nauthorization: ${pair[1]}\r\nConnection: close\r\n\r\n`,
        ],
        1,
      );
      const error = expectEnvelope(responses[0], 400, 'invalid_request');
      expect(error.details.issues).toEqual([{ path: 'headers.authorization', message: 'Given more than once.' }]);
    }
    const { responses } = await exchange(
      [
        `GET /api/v1/me HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${user.token}\r\nConnection: close\r\n\r\n`,
      ],
      1,
    );
    expect(responses[0].status).toBe(200);
    // Promptloop-Subject and Idempotency-Key too (Node would join them into another value).
    for (const [header, value] of [
      ['Promptloop-Subject', 'user-1'],
      ['idempotency-key', 'key-12345678'],
    ]) {
      const twice = await exchange(
        [
          `GET /api/v1/me HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${user.token}\r\n${header}: ${value}\r\n${header}: ${value}\r\nConnection: close\r\n\r\n`,
        ],
        1,
      );
      const error = expectEnvelope(twice.responses[0], 400, 'invalid_request');
      expect(error.details.issues).toEqual([
        { path: `headers.${header.toLowerCase()}`, message: 'Given more than once.' },
      ]);
    }
  });

  it('on the OTLP path two Authorization headers are 400 as a google.rpc.Status encoded like the request', async () => {
    const request = (type: string) =>
      `POST /api/v1/otel/v1/traces HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer plt_a\r\nAuthorization: Bearer plt_b\r\nContent-Type: ${type}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`;
    const [json] = (await exchange([request('application/json')], 1)).responses;
    expect(json.status).toBe(400);
    expect(json.headers['content-type']).toBe('application/json');
    expect(JSON.parse(json.body)).toEqual({ code: 3, message: 'Send one Authorization header.' });
    const [protobuf] = (await exchange([request('application/x-protobuf')], 1)).responses;
    expect(protobuf.status).toBe(400);
    expect(protobuf.headers['content-type']).toBe('application/x-protobuf');
    const status = otlpSchema().status.decode(Buffer.from(protobuf.body, 'latin1'));
    expect({ code: status.code, message: status.message }).toEqual({
      code: 3,
      message: 'Send one Authorization header.',
    });
  });

  it('bytes that are not HTTP/1.1 (an unknown method, a bad header) are 400 in the envelope; CONNECT is 405', async () => {
    for (const raw of [
      'FOO /api/v1/me HTTP/1.1\r\nHost: localhost\r\n\r\n',
      'GET /api/v1/me HTTP/1.1\r\nHost: localhost\r\nBad Header\r\n\r\n',
    ]) {
      const { responses, closedByServer } = await exchange([raw]);
      expectEnvelope(responses[0], 400, 'invalid_request');
      expect(closedByServer).toBe(true);
    }
    const [connectAnswer] = (await exchange(['CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n']))
      .responses;
    expectEnvelope(connectAnswer, 405, 'method_not_allowed');
  });
});

describe('D3: a 413 never leaves its connection waiting', () => {
  let user: TestUser;
  let orgId: string;
  beforeAll(async () => {
    user = await newUser();
    orgId = (await newOrganization(user)).id;
  });

  const big = Buffer.alloc(3 * 1024 * 1024, 'a');
  const chunked = (target: string, headers = '') => [
    `POST ${target} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n${headers}\r\n`,
    `${big.length.toString(16)}\r\n`,
    big,
    '\r\n0\r\n\r\n',
    'GET /api/v1/openapi.json HTTP/1.1\r\nHost: localhost\r\n\r\n',
  ];

  // Stripe's webhook answers every rejected delivery 400 (API.md), an oversized one included.
  const refusedStatus = (target: string) => (target === '/api/webhooks/stripe' ? 400 : 413);

  it.each([
    ['/api/webhooks/stripe', () => ''],
    ['/api/trpc/account.signUp', () => ''],
    [`/api/v1/organizations/{org}/prompts`, () => `Authorization: Bearer ${user.token}\r\n`],
  ])(
    'POST %s with a body over 1 MiB and a second request on the same connection: 413 (400 for Stripe) with Connection: close, and the connection closes',
    async (target, auth) => {
      const { responses, closedByServer } = await exchange(chunked(target.replace('{org}', orgId), auth()));
      expect(responses[0].status).toBe(refusedStatus(target));
      expect(responses[0].headers.connection).toBe('close');
      expect(closedByServer).toBe(true);
    },
  );

  it('fetch: after a 413 the next request is answered on a fresh connection', async () => {
    for (const target of [
      '/api/webhooks/stripe',
      '/api/trpc/account.signUp',
      `/api/v1/organizations/${orgId}/prompts`,
    ]) {
      const refused = await fetch(`http://127.0.0.1:${port}${target}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
        body: 'x'.repeat(1024 * 1024 + 1),
      });
      expect(refused.status, target).toBe(refusedStatus(target));
      await refused.text();
      const next = await fetch(`http://127.0.0.1:${port}/api/v1/openapi.json`);
      expect(next.status).toBe(200);
      await next.text();
    }
  });
});

describe('D4: integers the database cannot hold are refused by the schema', () => {
  let user: TestUser;
  let orgId: string;
  let promptId: string;
  beforeAll(async () => {
    user = await newUser();
    orgId = (await newOrganization(user)).id;
    promptId = (await user.call('POST', `/organizations/${orgId}/prompts`, { body: { name: 'Bounds' } })).body.id;
  });

  it.each([
    ['POST', 'versions', { draftRevision: 2147483648 }, 'draftRevision'],
    ['PUT', 'draft', { revision: 9007199254740990, content: { messages: [], inputType: 'user_message' } }, 'revision'],
    ['POST', 'draft/discard', { revision: 2147483648 }, 'revision'],
    ['POST', 'dataset/cases', { revision: 2147483648, row: { input: 'a', expectedOutput: 'b' } }, 'revision'],
    ['PUT', 'dataset/order', { revision: 2147483648, caseIds: [] }, 'revision'],
    ['POST', 'evals', { versionId: 'ver_x', scope: 'quick', draftRevision: 2147483648 }, 'draftRevision'],
  ])('%s …/%s with %j: 400 with the field in details.issues', async (method, path, body, field) => {
    const response = await user.call(method, `/organizations/${orgId}/prompts/${promptId}/${path}`, { body });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('invalid_request');
    expect(response.body.error.details.issues.map((issue: { path: string }) => issue.path)).toContain(field);
  });

  it('2^31-1 itself is a valid revision (a stale one: 409, not 400)', async () => {
    const response = await user.call('POST', `/organizations/${orgId}/prompts/${promptId}/versions`, {
      body: { draftRevision: 2147483647 },
    });
    expect(response.status).not.toBe(400);
  });

  // Trace ingestion's integers (Unix ms, token counts) go to bigint columns: Number.MAX_SAFE_INTEGER is their bound.
  it('every integer a management request can carry has a maximum in the OpenAPI document', () => {
    const unbounded: string[] = [];
    const walk = (schema: unknown, where: string) => {
      if (!schema || typeof schema !== 'object') return;
      const s = schema as Record<string, unknown>;
      // zod's own bound for an integer without one is Number.MAX_SAFE_INTEGER: not a bound the database has.
      if (s.type === 'integer' && (s.maximum === undefined || s.maximum === Number.MAX_SAFE_INTEGER))
        unbounded.push(where);
      for (const [key, value] of Object.entries(s)) walk(value, `${where}.${key}`);
    };
    const paths = openApiDocument().paths as Record<
      string,
      Record<
        string,
        {
          operationId: string;
          security?: object[];
          parameters?: { name: string; schema: unknown }[];
          requestBody?: unknown;
        }
      >
    >;
    for (const operations of Object.values(paths)) {
      for (const operation of Object.values(operations)) {
        if (!JSON.stringify(operation.security ?? []).includes('ManagementOAuth')) continue;
        for (const parameter of operation.parameters ?? [])
          walk(parameter.schema, `${operation.operationId} ${parameter.name}`);
        walk(operation.requestBody, `${operation.operationId} body`);
      }
    }
    expect(unbounded).toEqual([]);
  });
});

describe('D7: the document says exactly what the server accepts', () => {
  let user: TestUser;
  let orgId: string;
  beforeAll(async () => {
    user = await newUser();
    orgId = (await newOrganization(user)).id;
  });

  it('query integers are plain digits: ?limit=1e2, 0x10, +5, 05 and 5.0 are 400 like any non-integer', async () => {
    for (const limit of ['1e2', '0x10', '%2B5', '05', '5.0', '%205', '101', '0']) {
      const response = await user.call('GET', '/organizations', { query: `limit=${limit}` });
      expect(response.status, limit).toBe(400);
      expect(response.body.error.details.issues, limit).toEqual([{ path: 'limit', message: expect.any(String) }]);
    }
    expect((await user.call('GET', '/organizations', { query: 'limit=100' })).status).toBe(200);
    const document = openApiDocument() as any;
    const limit = document.paths['/api/v1/organizations'].get.parameters.find(
      (p: { name: string }) => p.name === 'limit',
    );
    expect(limit.schema).toEqual({
      type: 'integer',
      minimum: 1,
      maximum: 100,
      default: 25,
      description: 'Items per page, 1 to 100 (default 25).',
    });
  });

  it('Idempotency-Key: visible ASCII as a pattern, as the server checks it', async () => {
    const document = openApiDocument() as any;
    const schema = document.components.parameters.IdempotencyKey.schema;
    expect(schema).toMatchObject({ type: 'string', minLength: 8, maxLength: 128, pattern: '^[!-~]+$' });
    const pattern = new RegExp(schema.pattern);
    for (const key of ['with space1', 'tab\tkey12', 'ключ-ключ-ключ']) {
      expect(pattern.test(key)).toBe(false);
      const response = await user.call('POST', '/organizations', {
        body: { name: 'Never' },
        headers: { 'idempotency-key': encodeURIComponent(key) === key ? key : 'bad key 123' },
      });
      expect(response.status).toBe(400);
    }
  });

  it('update case: an empty row is refused and the schema says so (minProperties)', async () => {
    const promptId = (await user.call('POST', `/organizations/${orgId}/prompts`, { body: { name: 'Rows' } })).body.id;
    const added = await user.call('POST', `/organizations/${orgId}/prompts/${promptId}/dataset/cases`, {
      body: { revision: 0, row: { input: 'a', expectedOutput: 'b' } },
    });
    const response = await user.call(
      'PUT',
      `/organizations/${orgId}/prompts/${promptId}/dataset/cases/${added.body.id}`,
      { body: { revision: 1, row: {} } },
    );
    expect(response.status).toBe(400);
    const document = openApiDocument() as any;
    const body =
      document.paths['/api/v1/organizations/{organizationId}/prompts/{promptId}/dataset/cases/{caseId}'].put.requestBody
        .content['application/json'].schema;
    expect(body.properties.row.minProperties).toBe(1);
  });

  it('periodEnd: a date or a date-time with a time zone, described by the patterns the server applies', async () => {
    const document = openApiDocument() as any;
    const schema =
      document.paths['/api/v1/organizations/{organizationId}/billing/cancel-renewal'].post.requestBody.content[
        'application/json'
      ].schema.properties.periodEnd;
    const patterns = (schema.anyOf as { pattern: string }[]).map(({ pattern }) => new RegExp(pattern));
    const matches = (value: string) => patterns.some((p) => p.test(value));
    for (const good of ['2026-12-31', '2026-12-31T23:59:59Z', '2026-12-31t23:59:59.123+02:00', '2026-12-31T23:59Z'])
      expect(matches(good), good).toBe(true);
    for (const bad of [
      '2026-13-01',
      '2026-12-31T24:00:00Z',
      '2026-12-31T23:59:59',
      '31/12/2026',
      '2026-12-31 23:59:59Z',
    ]) {
      expect(matches(bad), bad).toBe(false);
      const response = await user.call('POST', `/organizations/${orgId}/billing/cancel-renewal`, {
        body: { organizationName: 'x', periodEnd: bad },
      });
      // Refused by the schema (400) before the configuration check (503) or the state (409).
      expect(response.status, bad).toBe(400);
      expect(response.body.error.details.issues[0].path).toBe('periodEnd');
    }
  });
});
