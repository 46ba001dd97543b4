import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isRetrievalPath, serveRetrieval } from '@/server/api/retrieval';
import { ingestPath, serveIngest } from '@/server/api/ingest';

// The production entry's retrieval and ingest hot paths behind a node:http listener (as
// server/main.ts mounts them), on the test database, recording what each request carried.

export type RecordedRequest = { path: string; status: number; headers: IncomingHttpHeaders };

export type SdkListener = { url: string; requests: RecordedRequest[]; stop: () => Promise<void> };

export async function listenForSdk(): Promise<SdkListener> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    res.on('finish', () => requests.push({ path: req.url ?? '', status: res.statusCode, headers: req.headers }));
    if (isRetrievalPath(path)) return void serveRetrieval(req, res);
    if (path === ingestPath) return void serveIngest(req, res);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const stop = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return { url, requests, stop };
}
