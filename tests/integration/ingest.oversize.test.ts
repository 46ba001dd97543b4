import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveIngest } from '@/server/api/ingest';
import { serveOtlp } from '@/server/api/otlp';
import { createGuardedServer } from '@/server/api/entry-socket';
import { newIngestion, storedSpans } from '../helpers/ingestion';

// The ingestion hot paths as production serves them (node:http, server/http/edge.ts serveNode): a
// body over the limit is answered 413 and the client, still sending, reads that answer. Before,
// the socket closed as soon as the 413 was written and clients such as fetch (undici) and the
// OpenTelemetry exporters saw a connection reset most of the time, and resent the same body.

let server: Server;
let url: string;
let ingestion: Awaited<ReturnType<typeof newIngestion>>;

beforeAll(async () => {
  ingestion = await newIngestion();
  server = createGuardedServer((req, res) => {
    if (req.url?.startsWith('/api/v1/otel/v1/traces')) return void serveOtlp(req, res);
    return void serveIngest(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server?.close(resolve)));

const mib = 1024 * 1024;
const run = promisify(execFile);

describe('a body over the ingestion limit', () => {
  it.each([
    ['native, 1 MiB + 1', '/api/v1/traces', 'application/json', mib + 1],
    ['native, 2 MiB', '/api/v1/traces', 'application/json', 2 * mib],
    ['OTLP, 4 MiB + 1', '/api/v1/otel/v1/traces', 'application/x-protobuf', 4 * mib + 1],
    ['OTLP, 5 MiB', '/api/v1/otel/v1/traces', 'application/x-protobuf', 5 * mib],
    ['native, 24 MiB', '/api/v1/traces', 'application/json', 24 * mib],
    ['OTLP, 32 MiB', '/api/v1/otel/v1/traces', 'application/x-protobuf', 32 * mib],
    // Streamed, without Content-Length: cut off at the limit as it arrives.
    ['OTLP, 6 MiB streamed', '/api/v1/otel/v1/traces', 'application/x-protobuf', -6 * mib],
    ['native, 3 MiB streamed', '/api/v1/traces', 'application/json', -3 * mib],
  ])('%s: every try reads the 413, none a reset', async (_name, path, type, size) => {
    // The client in a process of its own, as a real one: in this process the server's close and
    // the client's writes would take turns on one event loop, which hides the race.
    const script = `
      const size = ${Math.abs(size)};
      const streamed = ${size < 0};
      const chunk = new Uint8Array(64 * 1024).fill(0x20);
      const body = () => streamed
        ? new ReadableStream({ start(c) { for (let n = 0; n < size; n += chunk.length) c.enqueue(chunk); c.close(); } })
        : Buffer.alloc(size, 0x20);
      const answers = [];
      for (let i = 0; i < 6; i++)
        answers.push(await fetch(process.env.TARGET, {
          method: 'POST',
          headers: { 'content-type': '${type}', authorization: 'Bearer ' + process.env.SECRET },
          body: body(),
          duplex: 'half',
        }).then(
          async (response) => response.status + ' ' + ((await response.arrayBuffer()).byteLength > 0),
          (error) => error.cause?.code ?? String(error),
        ));
      console.log(JSON.stringify(answers));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      env: { NODE_ENV: 'test', PATH: process.env.PATH, TARGET: `${url}${path}`, SECRET: ingestion.secret },
    });
    expect(JSON.parse(stdout)).toEqual(Array(6).fill('413 true'));
    expect(await storedSpans(ingestion.organizationId)).toEqual([]);
  });

  it('a chunked body over the limit, too, and the next request is served', async () => {
    const endless = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 40; i++) controller.enqueue(new Uint8Array(64 * 1024).fill(0x20));
        controller.close();
      },
    });
    const response = await fetch(`${url}/api/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ingestion.secret}` },
      body: endless,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
    await response.arrayBuffer();
    const next = await fetch(`${url}/api/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ingestion.secret}` },
      body: '{}',
    });
    expect(next.status).toBe(400);
  });
});
