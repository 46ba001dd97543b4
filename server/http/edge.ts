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

// closeConnection: after a 413 the rest of the body is never read, so the socket goes once the answer is out.
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
  res.writeHead(output.status, output.headers);
  noteRequestId(res, output.headers['x-request-id']);
  if (output.closeConnection) res.end(output.body, () => req.destroy());
  else res.end(output.body);
}

export async function serveWeb(request: Request, handle: (input: EdgeInput) => Promise<EdgeOutput>): Promise<Response> {
  const output = await handle({
    method: request.method,
    header: (name) => request.headers.get(name) ?? undefined,
    readBody: (limit) => readBody(request, { limit }),
  });
  return new Response(new Uint8Array(output.body), { status: output.status, headers: output.headers });
}
