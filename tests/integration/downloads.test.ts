import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { downloadNames, serveDownload } from '@/server/api/downloads';
import { clientPackages, packClients } from '../../scripts/pack-clients.mjs';
import { sendResponse, toRequest } from '../helpers/node-http';

// The CLI and the SDK as a user without a checkout gets them: packed as every build packs them
// (scripts/pack-clients.mjs), served at /downloads (server/api/downloads.ts) over real HTTP, and
// installed by npm from that URL, exactly as the dashboard's snippets say.

const run = promisify(execFile);
const scratch = mkdtempSync(path.join(os.tmpdir(), 'promptloop-downloads-'));
const packed = path.join(scratch, 'downloads');
// npm with its own cache and its registry pointed at this test's server, which knows no package:
// the tarballs install from their URL alone, needing nothing from a registry.
const npmEnv = () => ({
  PATH: process.env.PATH ?? '',
  NODE_ENV: 'production' as const,
  HOME: scratch,
  npm_config_cache: path.join(scratch, 'npm-cache'),
  npm_config_registry: `${origin}/no-registry/`,
  npm_config_update_notifier: 'false',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
});

let server: Server;
let origin: string;

beforeAll(async () => {
  packClients(packed);
  server = createServer((req, res) => {
    const request = toRequest(req, origin);
    const name = new URL(request.url).pathname.replace(/^\/downloads\//, '');
    void serveDownload(request, decodeURIComponent(name), packed).then((response) => sendResponse(res, response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 120_000);
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  rmSync(scratch, { recursive: true, force: true });
});

describe('/downloads', () => {
  it('serves what the build packs, under the names the snippets use', () => {
    expect([...downloadNames].sort()).toEqual(Object.keys(clientPackages).sort());
  });

  it('answers each tarball with its ETag, 304 when it is unchanged, headers only for HEAD', async () => {
    for (const name of downloadNames) {
      const response = await fetch(`${origin}/downloads/${name}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/gzip');
      const bytes = new Uint8Array(await response.arrayBuffer());
      expect([bytes[0], bytes[1]]).toEqual([0x1f, 0x8b]);
      expect(Number(response.headers.get('content-length'))).toBe(bytes.length);
      const etag = response.headers.get('etag')!;
      expect(etag).toMatch(/^"[\w-]+"$/);
      const again = await fetch(`${origin}/downloads/${name}`, { headers: { 'if-none-match': etag } });
      expect(again.status).toBe(304);
      const head = await fetch(`${origin}/downloads/${name}`, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers.get('etag')).toBe(etag);
    }
  });

  it.each(['promptloop.tgz', '..%2Fpackage.json', '..%2F..%2Fpackage.json', '%2Fetc%2Fpasswd'])(
    'anything else is 404 not_found: %s',
    async (name) => {
      const response = await fetch(`${origin}/downloads/${name}`);
      expect(response.status).toBe(404);
      expect((await response.json()).error.code).toBe('not_found');
    },
  );

  it('says when the tarballs have not been packed on this server', async () => {
    const response = await serveDownload(
      new Request(`${origin}/downloads/promptloop-cli.tgz`),
      'promptloop-cli.tgz',
      path.join(scratch, 'never-packed'),
    );
    expect(response.status).toBe(404);
    expect((await response.json()).error.message).toMatch(/npm run build/);
  });

  it('a name holding U+0000 or a lone surrogate is 400, never echoed; another unknown name is 404', async () => {
    for (const name of ['promptloop-cli.tgz\u0000', '\ud800.tgz']) {
      const response = await serveDownload(
        new Request(`${origin}/downloads/x`),
        name,
        path.join(scratch, 'never-packed'),
      );
      expect(response.status).toBe(400);
      const body = await response.json();
      expect(body.error.code).toBe('invalid_request');
      expect(JSON.stringify(body)).not.toContain('\\u0000');
    }
    const unknown = await serveDownload(
      new Request(`${origin}/downloads/x`),
      'other.tgz',
      path.join(scratch, 'never-packed'),
    );
    expect(unknown.status).toBe(404);
  });

  it('npm installs the CLI from the URL the snippets give, and it runs', async () => {
    const prefix = path.join(scratch, 'global');
    await run('npm', ['install', '-g', '--prefix', prefix, `${origin}/downloads/promptloop-cli.tgz`], {
      env: npmEnv(),
    });
    const { stdout } = await run(path.join(prefix, 'bin', 'promptloop'), ['--version'], { env: npmEnv() });
    expect(stdout.trim()).toMatch(/^promptloop \d+\.\d+\.\d+$/);
  }, 120_000);

  it('npm installs the SDK from its URL into a project, and it imports', async () => {
    const project = path.join(scratch, 'project');
    await run('mkdir', ['-p', project]);
    await run('npm', ['init', '-y'], { cwd: project, env: npmEnv() });
    await run('npm', ['install', `${origin}/downloads/promptloop-sdk.tgz`], { cwd: project, env: npmEnv() });
    const { stdout } = await run(
      process.execPath,
      ['--input-type=module', '-e', "const sdk = await import('@promptloop/sdk'); console.log(typeof sdk.Promptloop);"],
      { cwd: project, env: npmEnv() },
    );
    expect(stdout.trim()).toBe('function');
  }, 120_000);
});
