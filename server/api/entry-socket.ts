import {
  createServer,
  STATUS_CODES,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { Duplex } from 'node:stream';
import { AppError, invalidRequest } from '../errors';
import { otlpEncodingOf, statusAnswer } from '../otlp/response';
import { errorBody, errorHeaders, newRequestId } from './http';
import { isOtlpTracesPath } from './otlp';

// What the production server (server/main.ts, every role) answers on the socket when there is no
// request to hand to a handler: Node's parser refused the bytes ('clientError'), or the method is
// CONNECT. A real HTTP response with the API's error envelope, then the connection closes.

// `OPTIONS *` and CONNECT ask about the server as a whole: these are the methods it serves on its paths.
export const serverMethods = 'GET, HEAD, POST, PUT, PATCH, DELETE';

// The refusal's body: the API's error envelope, or on the OTLP path a google.rpc.Status encoded
// like the request (API.md "OTLP trace ingestion": failures there never carry our envelope).
function envelope(error: AppError, req?: IncomingMessage): { body: string | Buffer; headers: Record<string, string> } {
  const requestId = newRequestId();
  if (req && isOtlpTracesPath((req.url ?? '').split('?', 1)[0])) {
    const answer = statusAnswer(otlpEncodingOf(req.headers['content-type']) ?? 'json', error.status, error.message);
    return {
      body: answer.body,
      headers: {
        'content-type': answer.contentType,
        'content-length': String(answer.body.length),
        'cache-control': 'no-store',
        'x-request-id': requestId,
        ...errorHeaders(error),
      },
    };
  }
  const body = JSON.stringify(errorBody(error, requestId));
  return {
    body,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
      'cache-control': 'no-store',
      'x-request-id': requestId,
      ...errorHeaders(error),
    },
  };
}

// A complete HTTP response written straight to a socket (no request object exists), then closed.
function answerSocket(socket: Duplex, error: AppError): void {
  const { body, headers } = envelope(error);
  const head = Object.entries({ ...headers, connection: 'close' })
    .map(([name, value]) => `${name}: ${value}`)
    .join('\r\n');
  socket.end(`HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n${head}\r\n\r\n${body}`);
}

// Node's parser refused the request ('clientError'): too large headers are 431, a request that
// took too long 408, a chunk extension too large 413, anything else malformed 400; each with the
// envelope, then the connection closes. A reset connection, or one whose response has started, is
// only closed.
function onClientError(error: Error & { code?: string }, socket: Duplex): void {
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const refusals: Record<string, AppError> = {
    HPE_HEADER_OVERFLOW: new AppError('headers_too_large', 'The request headers are larger than 16 KiB.'),
    ERR_HTTP_REQUEST_TIMEOUT: new AppError('request_timeout', 'The request was not received in time.'),
    HPE_CHUNK_EXTENSIONS_OVERFLOW: new AppError('payload_too_large', 'The chunk extensions are too large.'),
  };
  answerSocket(socket, refusals[error.code ?? ''] ?? invalidRequest('The request is not valid HTTP/1.1.'));
}

// CONNECT asks the server to act as a proxy: it is not one.
function onConnect(_req: IncomingMessage, socket: Duplex): void {
  answerSocket(
    socket,
    new AppError(
      'method_not_allowed',
      'CONNECT is not served: this server is not a proxy.',
      {},
      { allow: serverMethods },
    ),
  );
}

// Installs the guard's listeners on the production server.
function guardServer(server: Server): void {
  server.on('clientError', onClientError);
  server.on('connect', onConnect);
}

/**
 * How long a client may take: its headers within 30 s, its whole request (an 8 MiB import at
 * ~70 KB/s) within 120 s, else `408 request_timeout` and the connection closes. Node's defaults
 * (60 s and 300 s) let a client that trickles a body hold a connection for five minutes.
 * `connectionsCheckingInterval` is how often Node looks (tests shorten all three).
 */
export const serverTimeouts = { headersTimeout: 30_000, requestTimeout: 120_000, connectionsCheckingInterval: 5_000 };

// Headers a request may carry once. Node keeps the first of repeated Authorization headers and
// joins repeated custom ones with ", " (two Promptloop-Subject headers became another subject): a
// request carrying two is ambiguous, so it is refused rather than read one way or the other.
const singleHeaders: Record<string, string> = {
  host: 'Host', // RFC 9112 section 3.2: more than one Host is a 400
  authorization: 'Authorization',
  'promptloop-subject': 'Promptloop-Subject',
  'idempotency-key': 'Idempotency-Key',
};

function repeatedHeader(req: IncomingMessage): string | null {
  const raw = req.rawHeaders;
  let seen: string[] | null = null;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    if (name.length !== 4 && name.length !== 13 && name.length !== 15 && name.length !== 18) continue;
    const lower = name.toLowerCase();
    if (!(lower in singleHeaders)) continue;
    if (seen?.includes(lower)) return singleHeaders[lower];
    (seen ??= []).push(lower);
  }
  return null;
}

// A refusal answered on the request's own response (no body for a HEAD), before any handler runs.
export function answerRequest(req: IncomingMessage, res: ServerResponse, error: AppError): void {
  const { body, headers } = envelope(error, req);
  res.writeHead(error.status, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
}

function refuseRepeatedHeader(req: IncomingMessage, res: ServerResponse, name: string): void {
  req.resume();
  answerRequest(
    req,
    res,
    invalidRequest(`Send one ${name} header.`, [
      { path: `headers.${name.toLowerCase()}`, message: 'Given more than once.' },
    ]),
  );
}

/** The production HTTP server of every role: the guard's listeners and the timeouts above. */
export function createGuardedServer(handler: RequestListener, timeouts = serverTimeouts): Server {
  // Node answers an HTTP/1.1 request without Host with a bare 400 (no body): it is answered here, in
  // the error envelope, instead.
  const server = createServer({ ...timeouts, requireHostHeader: false }, (req, res) => {
    if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor === 1) {
      req.resume();
      answerRequest(
        req,
        res,
        invalidRequest('Send a Host header (HTTP/1.1 requires it).', [{ path: 'headers.host', message: 'Required.' }]),
      );
      return;
    }
    const repeated = repeatedHeader(req);
    if (repeated === null) handler(req, res);
    else refuseRepeatedHeader(req, res, repeated);
  });
  guardServer(server);
  // Longer than the 60 s idle timeout of common load balancers, so that they close first.
  server.keepAliveTimeout = 65_000;
  return server;
}
