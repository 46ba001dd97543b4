import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody } from './body';
import { noteRequestId } from '../log';

// The two entries of a hot-path handler (the ingestion paths): node:http in production, with no Web
// Request in between, and a Web Request in Next's catch-all (`next dev`) and in-process tests. A
// handler reads its request through EdgeInput and answers with an EdgeOutput; these adapters are
// the only code that knows which entry it came through.

export type EdgeInput = {
  method: string;
  header: (name: string) => string | undefined;
  // The whole body, or payload_too_large as soon as it passes `limit` bytes (the rest is never read).
  readBody: (limit: number) => Promise<Buffer>;
};

// closeConnection: after a 413 the rest of the body was not read: it is drained (below), then the
// connection may carry the next request.
export type EdgeOutput = { status: number; headers: Record<string, string>; body: Buffer; closeConnection: boolean };

export async function serveNode(
  req: IncomingMessage,
  res: ServerResponse,
  handle: (input: EdgeInput) => Promise<EdgeOutput>,
): Promise<void> {
  const output = await handle({
    method: req.method ?? 'GET',
    header: (name) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value.join(', ') : value;
    },
    readBody: (limit) => readBody(req, { limit }),
  });
  output.headers['content-length'] = String(output.body.length);
  if (output.closeConnection) {
    // Node closes a `Connection: close` socket as soon as the answer is written, while the client is
    // still sending the rest of its body: the client then sees a reset, not the 413 (and an OTLP
    // exporter resends the same body). So the connection stays open while the rest is drained.
    delete output.headers.connection;
    res.writeHead(output.status, output.headers);
    noteRequestId(res, output.headers['x-request-id']);
    res.end(output.body);
    drainRest(req);
    return;
  }
  res.writeHead(output.status, output.headers);
  noteRequestId(res, output.headers['x-request-id']);
  res.end(output.body);
}

// How much of a refused body is read and dropped, and for how long, before the connection is cut.
const drainLimits = { bytes: 64 * 1024 * 1024, ms: 10_000 };

/**
 * Reads and drops the rest of a request body the handler refused (at most drainLimits), so that
 * the client, still sending, gets to read the answer; past the limits the connection is destroyed.
 */
function drainRest(req: IncomingMessage): void {
  if (req.complete) return;
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > drainLimits.bytes) {
    req.socket.destroySoon();
    return;
  }
  let drained = 0;
  const stop = () => {
    clearTimeout(timer);
    req.off('data', onData);
    req.destroy();
  };
  const onData = (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > drainLimits.bytes) stop();
  };
  const timer = setTimeout(stop, drainLimits.ms);
  timer.unref();
  req.on('data', onData);
  req.once('end', () => {
    clearTimeout(timer);
    req.off('data', onData);
  });
  req.once('close', () => clearTimeout(timer));
  req.resume();
}

export async function serveWeb(request: Request, handle: (input: EdgeInput) => Promise<EdgeOutput>): Promise<Response> {
  const output = await handle({
    method: request.method,
    header: (name) => request.headers.get(name) ?? undefined,
    readBody: (limit) => readBody(request, { limit }),
  });
  return new Response(new Uint8Array(output.body), { status: output.status, headers: output.headers });
}
