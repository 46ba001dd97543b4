import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
import { exportJWK, generateKeyPair } from 'jose';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { migrate, openDatabase } from '../db/client';

declare module 'vitest' {
  export interface ProvidedContext {
    testEnv: Record<string, string>;
    issuerPrivateJwk: string;
    cliBundle: string;
  }
}

let issuerServer: Server | undefined;
let dropDatabase: (() => Promise<void>) | undefined;

// A fresh database on the real server per run; in-memory PGlite (one per test process) when none
// is given, each loaded from one migrated copy made here (tests/setup.ts): a new PGlite's initdb
// and the migrations would otherwise take seconds in every test file.
async function prepareDatabase(): Promise<Record<string, string>> {
  const baseUrl = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL;
  if (!baseUrl) {
    const database = await openDatabase({ dataDir: 'memory://' });
    await migrate(database);
    const dump = await (database.db as unknown as { $client: PGlite }).$client.dumpDataDir('none');
    await database.close();
    const dir = mkdtempSync(path.join(tmpdir(), 'promptloop-pglite-'));
    const template = path.join(dir, 'migrated.tar');
    writeFileSync(template, Buffer.from(await dump.arrayBuffer()));
    dropDatabase = async () => rmSync(dir, { recursive: true, force: true });
    return { PGLITE_DATA_DIR: 'memory://', DATABASE_URL: '', TEST_PGLITE_TEMPLATE: template };
  }
  const name = `promptloop_test_${Date.now()}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = postgres(baseUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  await admin.end();
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ url: url.toString(), max: 2 });
  await migrate(database);
  await database.close();
  dropDatabase = async () => {
    const cleanup = postgres(baseUrl, { max: 1, onnotice: () => {} });
    await cleanup.unsafe(`drop database if exists "${name}" with (force)`);
    await cleanup.end();
  };
  return { DATABASE_URL: url.toString() };
}

// A local OAuth issuer: its JWKS is served over real HTTP, tokens are signed in the tests.
async function startIssuer(): Promise<{ env: Record<string, string>; privateJwk: string }> {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: 'test-key', alg: 'ES256', use: 'sig' };
  const privateJwk = JSON.stringify({ ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'ES256' });
  issuerServer = createServer((req, res) => {
    if (req.url === '/jwks') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ keys: [jwk] }));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => issuerServer!.listen(0, '127.0.0.1', resolve));
  const { port } = issuerServer.address() as AddressInfo;
  const issuer = `http://127.0.0.1:${port}`;
  return {
    env: {
      OAUTH_ISSUER: issuer,
      OAUTH_JWKS_URL: `${issuer}/jwks`,
      APP_URL: 'http://localhost:3999',
      OAUTH_AUDIENCE: 'http://localhost:3999/api/v1',
    },
    privateJwk,
  };
}

// The CLI the tests run: the installable bundle (cli/build.mjs) built once per run from the current
// source into a directory of this run's own, so that `npm pack` rebuilding cli/dist in
// tests/integration/cli.package.test.ts never rewrites it under a running test. Starting the bundle
// takes a third of the time that compiling the TypeScript through tsx on every command does, and it
// is what users install; bin/promptloop.mjs (the repository's own `npx promptloop`) is run by
// e2e/cli.spec.ts and tests/integration/cli.imports.test.ts.
async function buildCliBundle(): Promise<{ outfile: string; remove: () => void }> {
  const { buildCli } = (await import(pathToFileURL(path.join(import.meta.dirname, '../cli/build.mjs')).href)) as {
    buildCli: (options: { outfile: string }) => Promise<{ outfile: string }>;
  };
  const dir = mkdtempSync(path.join(tmpdir(), 'promptloop-cli-bundle-'));
  const { outfile } = await buildCli({ outfile: path.join(dir, 'promptloop.mjs') });
  return { outfile, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export default async function setup(project: TestProject) {
  const [databaseEnv, issuer, cli] = await Promise.all([prepareDatabase(), startIssuer(), buildCliBundle()]);
  project.provide('testEnv', { ...databaseEnv, ...issuer.env });
  project.provide('issuerPrivateJwk', issuer.privateJwk);
  project.provide('cliBundle', cli.outfile);
  return async () => {
    await new Promise((resolve) => issuerServer?.close(resolve));
    await dropDatabase?.();
    cli.remove();
  };
}
