import { connect } from 'node:net';
import { expect, test } from '@playwright/test';

// The production entry's answers to what the independent fuzzing run sent (Q1 item 9, D1–D3, D6),
// on the real build: Next serves these routes behind the entry guard (server/api/entry-guard.ts).
// Raw sockets, so that methods, targets and connection reuse are exactly what is on the wire.
const port = Number(process.env.E2E_PORT ?? 3100);

type Exchange = { statuses: number[]; text: string; closed: boolean };

// Writes the bytes on one connection; resolves when the server closes it or `responses` arrived.
function exchange(bytes: (string | Buffer)[], responses = Infinity): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const statuses = () => [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
    const done = (closed: boolean) => {
      socket.destroy();
      resolve({ statuses: statuses(), text, closed });
    };
    socket.on('data', (data) => {
      text += data.toString('latin1');
      if (statuses().length >= responses && /\r\n\r\n[\s\S]*\}\s*$/.test(text)) done(false);
    });
    socket.on('close', () => done(true));
    socket.on('error', () => {});
    for (const chunk of bytes) socket.write(chunk);
  });
}

const request = (method: string, target: string) =>
  `${method} ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`;

function envelopeOf(text: string): { code: string; message: string; details: object; requestId: string } {
  const body = JSON.parse(
    text
      .slice(text.indexOf('\r\n\r\n') + 4)
      .replace(/^[0-9a-f]+\r\n/, '')
      .replace(/\r\n0\r\n\r\n$/, ''),
  );
  expect(Object.keys(body.error).sort()).toEqual(['code', 'details', 'message', 'requestId']);
  return body.error;
}

test.describe('the production entry in front of Next', () => {
  test('a path that is not valid percent-encoded UTF-8 is 400 invalid_request in the envelope (D1)', async () => {
    for (const target of [
      '/api/v1/organizations/%E0%A4%A',
      '/api/v1/organizations/%',
      '/api/v1/organizations/%ED%A0%80',
      '/api/v1/me/%ZZ',
      '/api/trpc/%E0%A4%A',
      '/api/auth/%ZZ',
    ]) {
      const { statuses, text } = await exchange([request('GET', target)]);
      expect(statuses[0], target).toBe(400);
      expect(envelopeOf(text).code).toBe('invalid_request');
    }
  });

  test('TRACE, WebDAV and other methods Next does not serve are 405 with Allow and the envelope (D2, D6)', async () => {
    const routes: [string, string][] = [
      ['/api/v1/organizations', 'GET, POST'],
      ['/api/trpc/organizations.list', 'GET, POST'],
      ['/mcp', 'POST'],
      ['/api/webhooks/stripe', 'POST'],
      ['/oauth/token', 'POST'],
      ['/.well-known/oauth-protected-resource', 'GET'],
      ['/api/auth/session', 'GET, POST'],
      ['/sign-in', 'GET, HEAD'],
    ];
    for (const [route, allow] of routes) {
      for (const method of ['TRACE', 'PROPFIND', 'MKCOL', 'PURGE', 'SEARCH', 'QUERY']) {
        const { statuses, text } = await exchange([request(method, route)]);
        expect(statuses[0], `${method} ${route}`).toBe(405);
        expect(text.toLowerCase()).toContain(`\r\nallow: ${allow.toLowerCase()}\r\n`);
        expect(envelopeOf(text).code).toBe('method_not_allowed');
      }
    }
    const options = await exchange([request('OPTIONS', '*')]);
    expect(options.statuses[0]).toBe(405);
    expect(envelopeOf(options.text).code).toBe('method_not_allowed');
  });

  test('OPTIONS names what a path serves (/api/v1 and /mcp); HEAD is GET without a body; PUT on /mcp is 405 with Allow', async () => {
    const base = `http://127.0.0.1:${port}`;
    const options = await fetch(`${base}/api/v1/organizations`, { method: 'OPTIONS' });
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')!.split(', ').sort()).toEqual(['GET', 'HEAD', 'OPTIONS', 'POST']);
    const mcp = await fetch(`${base}/mcp`, { method: 'OPTIONS' });
    expect(mcp.status).toBe(204);
    expect(mcp.headers.get('allow')).toBe('POST, OPTIONS');
    // Without a token: the 401 a GET gets, without its body.
    const head = await exchange([request('HEAD', '/api/v1/me')]);
    expect(head.statuses).toEqual([401]);
    expect(head.text.endsWith('\r\n\r\n')).toBe(true);
    const put = await fetch(`${base}/mcp`, { method: 'PUT' });
    expect(put.status).toBe(401); // authentication first, as for GET and DELETE
  });

  test('a header over 16 KiB is 431 and malformed HTTP 400, each in the envelope, then the connection closes (D6)', async () => {
    const big = await exchange([
      `GET /api/v1/me HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`,
    ]);
    expect(big.statuses).toEqual([431]);
    expect(envelopeOf(big.text).code).toBe('headers_too_large');
    expect(big.closed).toBe(true);
    const garbage = await exchange(['FOO / HTTP/1.1\r\nHost: localhost\r\n\r\n']);
    expect(garbage.statuses).toEqual([400]);
    expect(envelopeOf(garbage.text).code).toBe('invalid_request');
  });

  test('after a 413 on a keep-alive connection the connection closes instead of hanging (D3)', async () => {
    const body = Buffer.alloc(3 * 1024 * 1024, 'a');
    // Stripe's webhook answers every rejected delivery 400 (API.md), an oversized one included.
    const refusedStatus = (route: string) => (route === '/api/webhooks/stripe' ? 400 : 413);
    for (const route of ['/api/webhooks/stripe', '/api/trpc/account.signUp']) {
      const { statuses, text, closed } = await exchange([
        `POST ${route} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n`,
        body,
        '\r\n0\r\n\r\nGET /api/v1/openapi.json HTTP/1.1\r\nHost: localhost\r\n\r\n',
      ]);
      expect(statuses[0], route).toBe(refusedStatus(route));
      expect(text.toLowerCase()).toContain('\r\nconnection: close\r\n');
      expect(closed).toBe(true);
    }
    // A client that keeps its connections (fetch) gets the next answer on a fresh one.
    const refused = await fetch(`http://127.0.0.1:${port}/api/webhooks/stripe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: 'x'.repeat(1024 * 1024 + 1),
    });
    expect(refused.status).toBe(400);
    await refused.text();
    expect((await fetch(`http://127.0.0.1:${port}/api/v1/openapi.json`)).status).toBe(200);
  });

  test('sign-in bodies are bounded (over 16 KiB, declared or chunked without end: 413) and JSON ones checked (400)', async () => {
    const form = 'application/x-www-form-urlencoded';
    for (const route of ['/api/auth/callback/credentials', '/api/auth/signout', '/api/auth/_log']) {
      const declared = await fetch(`http://127.0.0.1:${port}${route}`, {
        method: 'POST',
        headers: { 'content-type': form },
        body: `email=a%40b.test&password=${'a'.repeat(16 * 1024)}`,
      });
      expect(declared.status, route).toBe(413);
      expect((await declared.json()).error.code).toBe('payload_too_large');
    }
    // A chunked body that never ends is answered once 16 KiB have arrived, and the connection closes.
    const endless = exchange([
      `POST /api/auth/callback/credentials HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${form}\r\nTransfer-Encoding: chunked\r\n\r\n`,
      ...Array.from({ length: 8 }, () => `1000\r\n${'a'.repeat(4096)}\r\n`),
    ]);
    const { statuses, closed } = await endless;
    expect(statuses[0]).toBe(413);
    expect(closed).toBe(true);
    // next-auth would parse a JSON body itself and throw (500): one that is not an object is a 400.
    for (const body of ['', 'garbage', 'null', '[1]']) {
      const refused = await fetch(`http://127.0.0.1:${port}/api/auth/signout`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect(refused.status, body).toBe(400);
      expect((await refused.json()).error.code).toBe('invalid_request');
    }
    // A small form still reaches next-auth: its usual refusal of a wrong password, not a 413.
    const csrf = await (await fetch(`http://127.0.0.1:${port}/api/auth/csrf`)).json();
    const small = await fetch(`http://127.0.0.1:${port}/api/auth/callback/credentials`, {
      method: 'POST',
      headers: { 'content-type': form },
      body: new URLSearchParams({
        email: 'nobody@example.test',
        password: 'wrong',
        csrfToken: csrf.csrfToken,
        json: 'true',
      }),
      redirect: 'manual',
    });
    // next-auth's own answer (json: true): a 200 whose url names the sign-in page or the refusal.
    expect(small.status).toBe(200);
    expect((await small.json()).url).toMatch(/\/api\/auth\/|error=/);
  });
});

// `npm start` packs the CLI and the SDK with the build and serves them where the snippets point.
test('the CLI and SDK tarballs are served at /downloads, anything else there is 404', async ({ request }) => {
  for (const name of ['promptloop-cli.tgz', 'promptloop-sdk.tgz']) {
    const response = await request.get(`/downloads/${name}`);
    expect(response.status()).toBe(200);
    expect(response.headers()['content-type']).toBe('application/gzip');
    const body = await response.body();
    expect([body[0], body[1]]).toEqual([0x1f, 0x8b]);
  }
  const missing = await request.get('/downloads/promptloop.tgz');
  expect(missing.status()).toBe(404);
  expect((await missing.json()).error.code).toBe('not_found');
});
