import { createGunzip } from 'node:zlib';
import { AppError } from '../errors';

// Content-Encoding: gzip with a limit on the decompressed size. node:zlib inflates the body in
// chunks of `chunkBytes` and this reader counts them as they come: past the limit the inflater is
// destroyed, so a gzip bomb (a few KiB that inflate to GiBs) never costs more than the limit plus
// one chunk of memory.

const mib = 1024 * 1024;
export const inflateChunkBytes = 64 * 1024;

function sizeText(bytes: number): string {
  return bytes % mib === 0 ? `${bytes / mib} MiB` : `${bytes} bytes`;
}

/**
 * The gunzipped body, or 413 payload_too_large (details: limitBytes, and inflatedBytes, what had
 * been inflated when reading stopped) once it passes `limit` bytes, or 400 invalid_request when it
 * is not gzip (corrupt, truncated, empty).
 */
export function gunzipBounded(body: Buffer, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const gunzip = createGunzip({ chunkSize: inflateChunkBytes });
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    gunzip.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > limit) {
        settled = true;
        gunzip.destroy();
        reject(
          new AppError('payload_too_large', `The request body is larger than ${sizeText(limit)} once decompressed.`, {
            limitBytes: limit,
            inflatedBytes: size,
          }),
        );
        return;
      }
      chunks.push(chunk);
    });
    gunzip.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(Buffer.concat(chunks, size));
    });
    gunzip.on('error', () => {
      if (settled) return;
      settled = true;
      reject(new AppError('invalid_request', 'The request body is not valid gzip (Content-Encoding: gzip).'));
    });
    gunzip.end(body);
  });
}
