import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverTimeouts } from '@/server/api/entry-socket';
import { newIngestion, storedSpans } from '../helpers/ingestion';
import { startEntry } from '../helpers/entry';

// A client that trickles its request holds a connection only as long as the production server's
// timeouts allow (server/api/entry-socket.ts serverTimeouts: 120 s for the whole request), then
// gets `408 request_timeout` in the error envelope and nothing is stored. The timeouts are scaled
// down here so that the test takes a second, through the same server factory.

let entry: Awaited<ReturnType<typeof startEntry>>;
beforeAll(async () => {
  entry = await startEntry(undefined, { headersTimeout: 400, requestTimeout: 800, connectionsCheckingInterval: 50 });
});
afterAll(() => entry.close());

// Sends the head and the first bytes of a body that never completes, a byte every 100 ms; resolves
// with what the server wrote once it closes the connection.
function trickle(head: string, body: string): Promise<{ text: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(entry.port, '127.0.0.1');
    let text = '';
    let sent = 0;
    const timer = setInterval(() => {
      if (sent < body.length && socket.writable) socket.write(body[sent++]);
    }, 100);
    const done = () => (clearInterval(timer), resolve({ text, ms: Date.now() - started }));
    socket.on('data', (data) => (text += data.toString('latin1')));
    socket.on('close', done);
    socket.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNRESET' || error.code === 'EPIPE' ? done() : reject(error),
    );
    socket.write(head);
  });
}

describe('a request that arrives too slowly', () => {
  it('production allows a whole request two minutes and its headers half a minute', () => {
    expect(serverTimeouts.requestTimeout).toBe(120_000);
    expect(serverTimeouts.headersTimeout).toBe(30_000);
  });

  it('a trickled ingestion body is cut off with 408 request_timeout and stores nothing', async () => {
    const ingestion = await newIngestion();
    const body = JSON.stringify({
      version: 1,
      events: [{ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), name: 'slow', startedAt: Date.now() }],
    });
    const head =
      'POST /api/v1/traces HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
      `Authorization: Bearer ${ingestion.secret}\r\nContent-Length: ${body.length}\r\n\r\n`;
    const { text } = await trickle(head, body);
    const [head408, json] = text.split('\r\n\r\n');
    expect(head408).toMatch(/^HTTP\/1\.1 408 /);
    expect(JSON.parse(json).error).toMatchObject({
      code: 'request_timeout',
      requestId: expect.stringMatching(/^req_/),
    });
    expect(await storedSpans(ingestion.organizationId)).toEqual([]);
  });

  it('trickled headers are cut off with 408 too', async () => {
    const { text } = await trickle('GET /api/v1/me HTTP/1.1\r\nHost: localhost\r\n', 'X-Slow: ' + 'y'.repeat(40));
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(text).toContain('"code":"request_timeout"');
  });
});
