import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { readBody } from '@/server/http/body';

// server/http/body.ts: the one bounded body reader of every edge.
const limit = 1024;

function streamOf(chunks: () => Uint8Array | null): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled++;
      const chunk = chunks();
      if (chunk) controller.enqueue(chunk);
      else controller.close();
    },
  });
  return { stream, pulled: () => pulled };
}

function post(body: ReadableStream<Uint8Array> | string, headers: Record<string, string> = {}): Request {
  return new Request('http://localhost/x', { method: 'POST', body, headers, duplex: 'half' } as RequestInit);
}

// A node:http request stand-in: a readable stream with headers.
function nodeRequest(
  chunks: () => Buffer | null,
  headers: Record<string, string> = {},
): { req: IncomingMessage; pushed: () => number } {
  let pushed = 0;
  const req = new Readable({
    read() {
      const chunk = chunks();
      if (chunk) pushed += chunk.length;
      this.push(chunk);
    },
  }) as unknown as IncomingMessage;
  (req as { headers: Record<string, string> }).headers = headers;
  return { req, pushed: () => pushed };
}

async function refusal(
  promise: Promise<unknown>,
): Promise<{ code?: string; status?: number; details?: unknown; message?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as never;
  }
  throw new Error('expected a refusal');
}

describe('readBody (Web Request)', () => {
  it('reads a body up to the limit exactly', async () => {
    expect((await readBody(post('a'.repeat(limit)), { limit })).length).toBe(limit);
    expect((await readBody(new Request('http://localhost/x'), { limit })).length).toBe(0);
  });

  it('refuses a declared Content-Length over the limit before reading anything', async () => {
    const { stream, pulled } = streamOf(() => new Uint8Array(10));
    const error = await refusal(readBody(post(stream, { 'content-length': String(limit + 1) }), { limit }));
    expect(error).toMatchObject({ code: 'payload_too_large', status: 413, details: { limitBytes: limit } });
    expect(error.message).toBe('The request body is larger than 1024 bytes.');
    expect(pulled()).toBeLessThanOrEqual(1);
  });

  it('stops an endless chunked body at the limit', async () => {
    const { stream, pulled } = streamOf(() => new Uint8Array(100));
    const error = await refusal(readBody(post(stream), { limit }));
    expect(error).toMatchObject({ code: 'payload_too_large', status: 413 });
    expect(pulled()).toBeLessThan(20);
  });

  it('a client that goes away mid-body is a 400 cut-off, not a failing dependency', async () => {
    const aborted = Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ === 0) controller.enqueue(new Uint8Array(9));
        else controller.error(aborted);
      },
    });
    const error = await refusal(readBody(post(stream), { limit }));
    expect(error).toMatchObject({ code: 'invalid_request', status: 400, message: 'The request body was cut off.' });
  });

  it('names a MiB limit in MiB, and an edge may bring its own refusal', async () => {
    const big = await refusal(
      readBody(post('x', { 'content-length': String(2 * 1024 * 1024) }), { limit: 1024 * 1024 }),
    );
    expect(big.message).toBe('The request body is larger than 1 MiB.');
    const own = new Error('mine');
    expect(await refusal(readBody(post('a'.repeat(limit + 1)), { limit, tooLarge: () => own }))).toBe(own);
  });
});

describe('readBody (node:http)', () => {
  it('reads the whole body', async () => {
    const parts = [Buffer.from('ab'), Buffer.from('cd'), null];
    const { req } = nodeRequest(() => parts.shift() ?? null);
    expect((await readBody(req, { limit })).toString()).toBe('abcd');
  });

  it('refuses a declared Content-Length over the limit, and stops an endless body at the limit', async () => {
    const declared = nodeRequest(() => Buffer.alloc(10), { 'content-length': String(limit + 1) });
    expect(await refusal(readBody(declared.req, { limit }))).toMatchObject({ code: 'payload_too_large', status: 413 });
    expect(declared.pushed()).toBe(0);
    const endless = nodeRequest(() => Buffer.alloc(100));
    expect(await refusal(readBody(endless.req, { limit }))).toMatchObject({ code: 'payload_too_large', status: 413 });
    expect(endless.pushed()).toBeLessThan(limit + 100 * 200);
  });
});
