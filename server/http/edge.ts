import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody } from './body';
import { noteRequestId } from '../log';

// The two entries of a hot-path handler (the ingestion paths): node:http in production, with no Web
// Request in between, and a Web Request in Next's catch-all (`next dev`) and in-process tests. A
// handler reads its request through EdgeInput and answers with an EdgeOutput; these adapters are
// the only code that knows which entry it came through.

export type EdgeInput = {
  method: string;
  // The query string as sent, with its `?` ('' without one): these paths take no parameters.
  query: string;
  header: (name: string) => string | undefined;
  // The whole body, or payload_too_large as soon as it passes `limit` bytes (the rest is never read).
  readBody: (limit: number) => Promise<Buffer>;
};

// closeConnection: after a 413 the rest of the body was not read: it is drained (below), then the
// connection closes (the answer says Connection: close).
export type EdgeOutput = { status: number; headers: Record<string, string>; body: Buffer; closeConnection: boolean };

export async function serveNode(
  req: IncomingMessage,
  res: ServerResponse,
  handle: (input: EdgeInput) => Promise<EdgeOutput>,
): Promise<void> {
  const url = req.url ?? '';
  const at = url.indexOf('?');
  const output = await handle({
    method: req.method ?? 'GET',
    query: at === -1 ? '' : url.slice(at),
    header: (name) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value.join(', ') : value;
    },
    readBody: (limit) => readBody(req, { limit }),
  });
  output.headers['content-length'] = String(output.body.length);
  if (output.closeConnection) {
    // Node closes a `Connection: close` socket as soon as the response ends, while the client may
    // still be sending the rest of its body: the client then reads a reset, not the 413 (and an
    // OTLP exporter resends the same body). So the whole answer is written first, the rest of the
    // body is read and dropped, and only then does the response end and the connection close.
    res.writeHead(output.status, output.headers);
    noteRequestId(res, output.headers['x-request-id']);
    res.write(output.body);
    drainRest(req, () => res.end());
    return;
  }
  res.writeHead(output.status, output.headers);
  noteRequestId(res, output.headers['x-request-id']);
  res.end(output.body);
}

// How much of a refused body is read and dropped, and for how long, before the connection is cut.
const drainLimits = { bytes: 64 * 1024 * 1024, ms: 10_000 };

/**
 * Reads and drops the rest of a request body the handler refused (at most drainLimits), then calls
 * `done`; past the limits the connection is destroyed instead.
 */
function drainRest(req: IncomingMessage, done: () => void): void {
  if (req.complete) return done();
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > drainLimits.bytes) {
    done();
    req.destroy();
    return;
  }
  let drained = 0;
  let finished = false;
  const finish = (cut: boolean) => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    req.off('data', onData);
    done();
    if (cut) req.destroy();
  };
  const onData = (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > drainLimits.bytes) finish(true);
  };
  const timer = setTimeout(() => finish(true), drainLimits.ms);
  timer.unref();
  req.on('data', onData);
  req.once('end', () => finish(false));
  req.once('close', () => finish(false));
  req.resume();
}

export async function serveWeb(request: Request, handle: (input: EdgeInput) => Promise<EdgeOutput>): Promise<Response> {
  const output = await handle({
    method: request.method,
    query: new URL(request.url).search,
    header: (name) => request.headers.get(name) ?? undefined,
    readBody: (limit) => readBody(request, { limit }),
  });
  return new Response(new Uint8Array(output.body), { status: output.status, headers: output.headers });
}
