import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { AppError, invalidRequest } from '../errors';
import { stringProblem } from '../input-hygiene';
import { errorResponse, newRequestId } from './http';

// The CLI's and the SDK's npm tarballs, served by the app so that a user without a Promptloop
// checkout installs them from the server they use: `npm install -g <app>/downloads/promptloop-cli.tgz`.
// scripts/pack-clients.mjs packs them into .next/downloads with every build (the same names).

export const downloadNames = ['promptloop-cli.tgz', 'promptloop-sdk.tgz'] as const;

const downloadsDir = () => path.join(process.cwd(), '.next', 'downloads');

// The file's bytes and ETag, read again only when the file changes (a rebuild repacks it).
const cache = new Map<string, { mtimeMs: number; bytes: Buffer; etag: string }>();

async function load(dir: string, name: string): Promise<{ bytes: Buffer; etag: string } | null> {
  const file = path.join(dir, name);
  const info = await stat(file).catch(() => null);
  if (!info?.isFile()) return null;
  const cached = cache.get(file);
  if (cached && cached.mtimeMs === info.mtimeMs) return cached;
  const bytes = await readFile(file);
  const entry = {
    mtimeMs: info.mtimeMs,
    bytes,
    etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"`,
  };
  cache.set(file, entry);
  return entry;
}

/** GET or HEAD /downloads/{name}: the tarball, 304 for a matching If-None-Match, 404 otherwise. */
export async function serveDownload(request: Request, name: string, dir = downloadsDir()): Promise<Response> {
  const requestId = newRequestId();
  // A name holding U+0000 or a lone surrogate is refused as on every surface (API.md), never echoed.
  const problem = stringProblem(name);
  if (problem)
    return errorResponse(
      invalidRequest('The download name is not valid.', [{ path: 'file', message: problem }]),
      requestId,
    );
  const known = (downloadNames as readonly string[]).includes(name);
  const found = known ? await load(dir, name) : null;
  if (!found)
    return errorResponse(
      new AppError(
        'not_found',
        known
          ? `${name} has not been packed on this server: run npm run build (or npm start) in its checkout.`
          : `There is no download named "${name}". Downloads: ${downloadNames.join(', ')}.`,
      ),
      requestId,
    );
  const headers = {
    etag: found.etag,
    // Revalidated every five minutes: a rebuild's new tarball is picked up soon after.
    'cache-control': 'public, max-age=300',
    'x-request-id': requestId,
  };
  const match = request.headers.get('if-none-match');
  if (match && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === found.etag))
    return new Response(null, { status: 304, headers });
  return new Response(request.method === 'HEAD' ? null : new Uint8Array(found.bytes), {
    status: 200,
    headers: {
      ...headers,
      'content-type': 'application/gzip',
      'content-length': String(found.bytes.length),
      'content-disposition': `attachment; filename="${name}"`,
    },
  });
}
