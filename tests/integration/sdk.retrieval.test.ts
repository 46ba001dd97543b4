import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { isRetrievalPath, serveRetrieval } from '@/server/api/retrieval';
import { ingestPath, serveIngest } from '@/server/api/ingest';
import {
  AuthenticationError,
  NetworkError,
  NotFoundError,
  PermissionDeniedError,
  Promptloop,
  TraceExporter,
  newSpanId,
  newTraceId,
  type StaleInfo,
  type TraceExportError,
} from '@/sdk/src/index';
import { newOrganization, newUser, type TestUser } from '../helpers/api';
import { promptWithVersions } from '../helpers/prompts';
import { newIngestionKey, storedSpans } from '../helpers/ingestion';
import { closedPort } from '../helpers/net';
import { typescriptSnippet as ingestionSnippet } from '@/components/ingestion-keys/snippets';

// The SDK against the real handlers: the production entry's retrieval and ingest hot paths behind a
// node:http listener (as server/main.ts mounts them), on the test database.
beforeAll(() => getDb().then(() => undefined), 120_000);

type Listener = {
  url: string;
  stop: () => Promise<void>;
  requests: { path: string; status: number; ifNoneMatch?: string }[];
};

async function listen(): Promise<Listener> {
  const requests: Listener['requests'] = [];
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    res.on('finish', () =>
      requests.push({ path: req.url ?? '', status: res.statusCode, ifNoneMatch: req.headers['if-none-match'] }),
    );
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
  return { url, stop, requests };
}

async function retrievalKey(
  user: TestUser,
  organizationId: string,
  promptId: string,
): Promise<{ id: string; secret: string }> {
  const created = await user.call('POST', `/organizations/${organizationId}/prompts/${promptId}/keys`, {
    body: { name: 'sdk test' },
  });
  if (created.status !== 201) throw new Error(`create key failed: ${created.status} ${JSON.stringify(created.body)}`);
  return { id: created.body.key.id, secret: created.body.secret };
}

let listener: Listener;
let owner: TestUser;
let organizationId: string;
let fixture: Awaited<ReturnType<typeof promptWithVersions>>;
let key: { id: string; secret: string };

beforeAll(async () => {
  listener = await listen();
  owner = await newUser();
  organizationId = (await newOrganization(owner)).id;
  fixture = await promptWithVersions(owner, organizationId, 3);
  key = await retrievalKey(owner, organizationId, fixture.prompt.id);
}, 120_000);
afterAll(() => listener.stop());

const moveLabel = async (label: string, versionId: string) => {
  const moved = await owner.call('PUT', `${fixture.base}/labels/${label}`, { body: { versionId } });
  if (moved.status !== 200) throw new Error(`move label failed: ${moved.status} ${JSON.stringify(moved.body)}`);
};

describe('getPrompt against the server', () => {
  it('retrieves production by default, a label, and an exact version', async () => {
    const pl = new Promptloop({ baseUrl: listener.url, apiKey: key.secret });
    const production = await pl.getPrompt(fixture.prompt.id);
    expect(production).toMatchObject({
      promptId: fixture.prompt.id,
      name: 'Support answers',
      versionId: fixture.ids[0],
      version: 1,
      label: 'production',
      source: 'server',
      stale: false,
    });
    expect(production.content.messages).toEqual([{ role: 'system', content: 'You answer support questions.' }]);
    expect(Date.parse(production.createdAt)).not.toBeNaN();
    expect(await pl.getPrompt(fixture.prompt.id, { label: 'staging' })).toMatchObject({ version: 1, label: 'staging' });
    const v3 = await pl.getPrompt(fixture.prompt.id, { version: 3 });
    expect(v3).toMatchObject({ versionId: fixture.ids[2], version: 3, label: null });
    expect(v3.content.messages[0].content).toBe('Take 3');
    // user_message prompts: compile appends the input.
    expect(v3.compile({ input: 'Where is my order?' }).messages).toEqual([
      { role: 'system', content: 'Take 3' },
      { role: 'user', content: 'Where is my order?' },
    ]);
  });

  it('a baseUrl that already ends in /api/v1 reaches the same endpoint', async () => {
    for (const baseUrl of [`${listener.url}/api/v1`, `${listener.url}/api/v1/`]) {
      const before = listener.requests.length;
      const pl = new Promptloop({ baseUrl, apiKey: key.secret });
      expect(await pl.getPrompt(fixture.prompt.id, { version: 2 })).toMatchObject({
        versionId: fixture.ids[1],
        version: 2,
        source: 'server',
      });
      expect(listener.requests.slice(before)).toMatchObject([
        { path: `/api/v1/prompts/${fixture.prompt.id}?version=2`, status: 200 },
      ]);
    }
  });

  it('revalidates on every use: 304 reuses the body, and the call right after a label move gets the new version', async () => {
    const pl = new Promptloop({ baseUrl: listener.url, apiKey: key.secret });
    const before = listener.requests.length;
    expect(await pl.getPrompt(fixture.prompt.id, { label: 'staging' })).toMatchObject({ version: 1, source: 'server' });
    expect(await pl.getPrompt(fixture.prompt.id, { label: 'staging' })).toMatchObject({
      version: 1,
      source: 'revalidated',
    });
    const [first, second] = listener.requests.slice(before);
    expect(first.status).toBe(200);
    expect(second.status).toBe(304);
    expect(second.ifNoneMatch).toMatch(/^"/);
    await moveLabel('staging', fixture.ids[1]);
    expect(await pl.getPrompt(fixture.prompt.id, { label: 'staging' })).toMatchObject({
      versionId: fixture.ids[1],
      version: 2,
      source: 'server',
    });
    await moveLabel('staging', fixture.ids[0]);
    expect(await pl.getPrompt(fixture.prompt.id, { label: 'staging' })).toMatchObject({ version: 1, source: 'server' });
    expect(listener.requests.slice(before).map((r) => r.status)).toEqual([200, 304, 200, 200]);
  });

  it('typed errors: label_not_assigned, version_not_found, forbidden, unauthorized, and a revoked key', async () => {
    const pl = new Promptloop({ baseUrl: listener.url, apiKey: key.secret });
    const unassigned = await pl.getPrompt(fixture.prompt.id, { label: 'canary' }).catch((e: unknown) => e);
    expect(unassigned).toBeInstanceOf(NotFoundError);
    expect(unassigned).toMatchObject({
      status: 404,
      code: 'label_not_assigned',
      requestId: expect.stringMatching(/^req_/),
    });
    await expect(pl.getPrompt(fixture.prompt.id, { version: 99 })).rejects.toMatchObject({
      status: 404,
      code: 'version_not_found',
    });

    const other = await promptWithVersions(owner, organizationId, 1);
    const forbidden = await pl.getPrompt(other.prompt.id).catch((e: unknown) => e);
    expect(forbidden).toBeInstanceOf(PermissionDeniedError);
    expect(forbidden).toMatchObject({ status: 403, code: 'forbidden' });

    const stranger = new Promptloop({ baseUrl: listener.url, apiKey: `plr_${'A'.repeat(43)}` });
    const unknown = await stranger.getPrompt(fixture.prompt.id).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(AuthenticationError);
    expect(unknown).toMatchObject({ status: 401, code: 'unauthorized' });

    // A revoked key is refused on the very next call, conditional or not, and nothing stale is served.
    const own = await retrievalKey(owner, organizationId, other.prompt.id);
    const revocable = new Promptloop({ baseUrl: listener.url, apiKey: own.secret });
    expect(await revocable.getPrompt(other.prompt.id)).toMatchObject({ version: 1 });
    const revoked = await owner.call(
      'DELETE',
      `/organizations/${organizationId}/prompts/${other.prompt.id}/keys/${own.id}`,
    );
    expect(revoked.status).toBe(200);
    await expect(revocable.getPrompt(other.prompt.id)).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    expect(revocable.snapshot().prompts).toEqual({});
  });
});

describe('when the server goes away', () => {
  it('serves the cached copy as stale, and a cold start with a fallback snapshot serves the snapshot', async () => {
    const own = await listen();
    const stale: StaleInfo[] = [];
    const pl = new Promptloop({
      baseUrl: own.url,
      apiKey: key.secret,
      onStale: (info) => stale.push(info),
      timeoutMs: 2000,
    });
    const fresh = await pl.getPrompt(fixture.prompt.id, { version: 2 });
    expect(fresh).toMatchObject({ version: 2, source: 'server' });
    await own.stop();

    const served = await pl.getPrompt(fixture.prompt.id, { version: 2 });
    expect(served).toMatchObject({ versionId: fresh.versionId, stale: true, source: 'stale' });
    expect(served.error).toBeInstanceOf(NetworkError);
    expect(stale).toHaveLength(1);
    expect(stale[0]).toMatchObject({ promptId: fixture.prompt.id, selector: 'version:2', source: 'stale', version: 2 });

    // A new process with nothing cached: the snapshot written by the first client is served.
    const snapshot = JSON.parse(JSON.stringify(pl.snapshot()));
    const cold = new Promptloop({
      baseUrl: `http://127.0.0.1:${await closedPort()}`,
      apiKey: key.secret,
      fallback: snapshot,
      onStale: (info) => stale.push(info),
    });
    expect(await cold.getPrompt(fixture.prompt.id, { version: 2 })).toMatchObject({
      versionId: fresh.versionId,
      stale: true,
      source: 'fallback',
    });
    expect(stale[1]).toMatchObject({ source: 'fallback', selector: 'version:2', ageMs: null });
    // Nothing in the snapshot for this selector: the error is thrown.
    await expect(cold.getPrompt(fixture.prompt.id, { label: 'production' })).rejects.toBeInstanceOf(NetworkError);
  });
});

describe('TraceExporter against the server', () => {
  it('delivers span snapshots in batches, revisions in order, and reports a refused batch', async () => {
    const { secret } = await newIngestionKey(organizationId);
    const errors: TraceExportError[] = [];
    const exporter = new TraceExporter({ url: listener.url, ingestionKey: secret, onError: (e) => errors.push(e) });
    const traceId = newTraceId();
    const rootId = newSpanId();
    const startedAt = Date.now() - 1000;
    exporter.export({
      traceId,
      spanId: rootId,
      rootSpanId: rootId,
      revision: 0,
      name: 'handle request',
      service: 'sdk-test',
      kind: 'execution',
      status: 'running',
      startedAt,
    });
    for (let i = 0; i < 60; i++) {
      exporter.export({
        traceId,
        spanId: newSpanId(),
        rootSpanId: rootId,
        parentSpanId: rootId,
        revision: 0,
        name: `call ${i}`,
        service: 'sdk-test',
        kind: 'model',
        status: 'success',
        startedAt,
        endedAt: startedAt + 5,
      });
    }
    exporter.export({
      traceId,
      spanId: rootId,
      rootSpanId: rootId,
      revision: 1,
      name: 'handle request',
      service: 'sdk-test',
      kind: 'execution',
      status: 'success',
      startedAt,
      endedAt: Date.now(),
    });
    expect(await exporter.flush()).toBe(true);
    expect(errors).toEqual([]);
    expect(exporter.stats()).toMatchObject({ sent: 62, requests: 2 });
    const spans = await storedSpans(organizationId);
    expect(spans).toHaveLength(61);
    expect(spans.find((s) => s.spanId === rootId)).toMatchObject({ revision: 1, status: 'success' });

    // A batch the server refuses (an ingestion key it does not know) is dropped and reported.
    const refused: TraceExportError[] = [];
    const stranger = new TraceExporter({
      url: listener.url,
      ingestionKey: `plt_${'B'.repeat(43)}`,
      onError: (e) => refused.push(e),
    });
    stranger.export({
      traceId: newTraceId(),
      spanId: rootId,
      rootSpanId: rootId,
      revision: 0,
      name: 'x',
      service: 'sdk-test',
      kind: 'custom',
      status: 'running',
      startedAt,
    });
    expect(await stranger.shutdown()).toBe(true);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ status: 401, code: 'unauthorized', droppedEvents: 1 });
    await exporter.shutdown();
  });

  it('the dashboard’s ingestion key snippet, run as it is shown, delivers its span (also with url ending in /api/v1)', async () => {
    const { secret } = await newIngestionKey(organizationId);
    const dir = mkdtempSync(path.join(tmpdir(), 'promptloop-snippet-'));
    try {
      const sdk = pathToFileURL(path.resolve(import.meta.dirname, '../../sdk/src/index.ts')).href;
      for (const [url, service] of [
        [listener.url, 'snippet-root'],
        [`${listener.url}/api/v1/`, "snippet's api/v1"],
      ]) {
        const code = ingestionSnippet(url, secret, service).replace("from '@promptloop/sdk'", `from '${sdk}'`);
        const file = path.join(dir, `${service.length}.ts`);
        writeFileSync(file, code);
        await import(pathToFileURL(file).href);
        const delivered = (await storedSpans(organizationId)).filter((s) => s.service === service);
        expect(delivered).toMatchObject([
          { name: 'handle request', kind: 'execution', status: 'success', revision: 0 },
        ]);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
