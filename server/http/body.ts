import type { IncomingMessage } from 'node:http';
import { AppError, invalidRequest } from '../errors';

// The one bounded body reader of every edge (REST, ingestion, tRPC, MCP, Stripe, OAuth): a declared
// Content-Length over the limit is refused before anything is read; otherwise the body is counted
// while it arrives and reading stops as soon as it passes the limit (chunked or endless bodies
// too), so no more than `limit` bytes are ever buffered. The refusal is `payload_too_large` (413,
// Connection: close: the rest of the body is never read) unless the edge speaks another error
// language (OAuth: RFC 6749) and passes its own.

export type BodyLimit = {
  limit: number;
  // The error thrown when the body is larger than `limit`; payload_too_large by default.
  tooLarge?: () => Error;
};

const mib = 1024 * 1024;

function sizeText(bytes: number): string {
  return bytes % mib === 0 ? `${bytes / mib} MiB` : `${bytes} bytes`;
}

function payloadTooLarge(limit: number): AppError {
  return new AppError('payload_too_large', `The request body is larger than ${sizeText(limit)}.`, {
    limitBytes: limit,
  });
}

const cutOff = () => invalidRequest('The request body was cut off.');

export async function readBody(source: Request | IncomingMessage, options: BodyLimit): Promise<Buffer> {
  const { limit } = options;
  const tooLarge = options.tooLarge ?? (() => payloadTooLarge(limit));
  const isWeb = source instanceof Request;
  const declared = isWeb ? source.headers.get('content-length') : source.headers['content-length'];
  if (declared != null && Number(declared) > limit) throw tooLarge();
  const body = isWeb ? await readWebBody(source, limit) : await readNodeBody(source, limit);
  if (body === null) throw tooLarge();
  return body;
}

async function readWebBody(request: Request, limit: number): Promise<Buffer | null> {
  if (!request.body) return Buffer.alloc(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch {
      // The client went away mid-body (an abort, not a failing dependency): as on node:http below.
      throw cutOff();
    }
    const { done, value } = chunk;
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      void reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size);
}

// node:http (the production entry's ingestion hot path): the request is paused, never destroyed,
// at the limit, so the 413 can still be written before the socket goes.
function readNodeBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onCutOff);
      req.off('close', onCutOff);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.pause();
        resolve(null);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    };
    // A client that goes away mid-body gets no answer; nothing was stored.
    const onCutOff = () => {
      cleanup();
      reject(cutOff());
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onCutOff);
    req.on('close', onCutOff);
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A JSON body's text. Bytes that are not UTF-8 make it malformed JSON (RFC 8259 §8.1): `400
 * invalid_request`, never U+FFFD stored in their place. (A leading byte order mark is dropped.)
 */
export function utf8Text(body: Uint8Array): string {
  try {
    return utf8.decode(body);
  } catch {
    throw invalidRequest('The request body is not valid UTF-8.');
  }
}
