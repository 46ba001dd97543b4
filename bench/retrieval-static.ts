import { createServer } from 'node:http';

// Baseline (c) of `npm run bench -- retrieval`: a bare node:http handler answering every request with
// the same JSON body from memory (BODY: the bytes of our 200, captured by bench/retrieval.ts), with
// the same content type — what node:http serves with no database at all. Started as its own process:
// PORT and BODY from the environment.

const body = Buffer.from(process.env.BODY ?? '{}');
const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) };

const server = createServer((_req, res) => {
  res.writeHead(200, headers);
  res.end(body);
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
