import { beforeAll, describe, expect, it } from 'vitest';
import { getDatabase, getDb, openDatabase, setDatabase } from '@/db/client';
import { newSecret } from '@/server/ids';
import { newIngestion } from '../helpers/ingestion';
import { closedPort } from '../helpers/net';
import { createPrompt } from '../helpers/prompts';
import { newRetrievalKey, retrievalSetup, retrieve } from '../helpers/retrieval';

beforeAll(() => getDb().then(() => undefined), 120_000);

function expectError(reply: { status: number; headers: Headers; body: any }, status: number, code: string) {
  expect(reply.status).toBe(status);
  expect(reply.body.error).toMatchObject({
    code,
    message: expect.any(String),
    details: expect.any(Object),
    requestId: expect.stringMatching(/^req_/),
  });
  expect(reply.headers.get('cache-control')).toBe('no-store');
  expect(reply.headers.get('etag')).toBeNull();
}

describe('401: authentication comes first', () => {
  it('no credential: WWW-Authenticate: Bearer', async () => {
    const s = await retrievalSetup(1);
    const reply = await retrieve(s.promptId, null);
    expectError(reply, 401, 'unauthorized');
    expect(reply.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('malformed, unknown, or another kind of credential: error="invalid_token"', async () => {
    const s = await retrievalSetup(1);
    const ingestion = await newIngestion();
    const presented = [
      `Bearer ${newSecret('plr_')}`, // well-formed, unknown
      `Bearer ${s.secret.slice(0, -1)}`,
      `Bearer ${s.secret}x`,
      `Basic ${Buffer.from(`x:${s.secret}`).toString('base64')}`,
      `${s.secret}`,
      `Bearer ${ingestion.secret}`,
      `Bearer ${s.owner.token}`,
      `Bearer plr_${'0'.repeat(43)}`,
    ];
    for (const authorization of presented) {
      const reply = await retrieve(s.promptId, null, { headers: { authorization } });
      expectError(reply, 401, 'unauthorized');
      expect(reply.headers.get('www-authenticate'), authorization).toBe('Bearer error="invalid_token"');
    }
    // The secret in the query string never counts.
    expectError(await retrieve(s.promptId, null, { query: `key=${s.secret}` }), 401, 'unauthorized');
  });

  it('a revoked key is refused at once, conditional requests included, and before any other check', async () => {
    const s = await retrievalSetup(1);
    const ok = await retrieve(s.promptId, s.secret);
    const etag = ok.headers.get('etag')!;
    const revoked = await s.owner.call('DELETE', `${s.base}/keys/${s.keyId}`);
    expect(revoked.status).toBe(200);
    expectError(await retrieve(s.promptId, s.secret), 401, 'unauthorized');
    expectError(await retrieve(s.promptId, s.secret, { headers: { 'if-none-match': etag } }), 401, 'unauthorized');
    expectError(await retrieve(s.promptId, s.secret, { headers: { 'if-none-match': '*' } }), 401, 'unauthorized');
    expectError(await retrieve('prm_other', s.secret, { query: 'label=A&version=0' }), 401, 'unauthorized');
    // Another key of the same prompt keeps working.
    const other = await newRetrievalKey(s.owner.call, s.base, 'second');
    expect((await retrieve(s.promptId, other.secret)).status).toBe(200);
  });
});

describe('403: a key works for its own prompt only', () => {
  it('another prompt id (existing, missing or malformed) is 403, before parameters and before If-None-Match', async () => {
    const s = await retrievalSetup(1);
    const sibling = await createPrompt(s.owner, s.org.id, 'Sibling');
    const etag = (await retrieve(s.promptId, s.secret)).headers.get('etag')!;
    for (const id of [
      sibling.id,
      'prm_00000000000000000000000000',
      'nope',
      encodeURIComponent('prm_x\u0000'),
      '%E0%A4%A',
      s.promptId.toUpperCase(),
    ]) {
      expectError(await retrieve(id, s.secret), 403, 'forbidden');
    }
    expectError(await retrieve(sibling.id, s.secret, { query: 'label=A&version=0&x=1' }), 403, 'forbidden');
    expectError(await retrieve(sibling.id, s.secret, { headers: { 'if-none-match': etag } }), 403, 'forbidden');
    expectError(await retrieve(sibling.id, s.secret, { headers: { 'if-none-match': '*' } }), 403, 'forbidden');
  });
});

describe('400: strict parameters, after authentication', () => {
  it('both selectors, unknown, duplicate or empty parameters, bad labels and versions, poison strings', async () => {
    const s = await retrievalSetup(2);
    const bad: [string, string][] = [
      ['label=production&version=1', 'version'],
      ['version=1&label=production', 'version'],
      ['lable=production', 'lable'],
      ['limit=1', 'limit'],
      ['label=production&label=staging', 'label'],
      ['version=1&version=1', 'version'],
      ['label=', 'label'],
      ['label', 'label'],
      ['version=', 'version'],
      ['label=Production', 'label'],
      ['label=-prod', 'label'],
      ['label=prod-', 'label'],
      ['label=prod_1', 'label'],
      [`label=${'a'.repeat(65)}`, 'label'],
      ['label=prod%20uction', 'label'],
      ['version=0', 'version'],
      ['version=-1', 'version'],
      ['version=1.5', 'version'],
      ['version=1e3', 'version'],
      ['version=01', 'version'],
      ['version=abc', 'version'],
      ['version=%201', 'version'],
      ['version=99999999999', 'version'],
      ['version=2147483648', 'version'],
      ['label=prod%00', 'label'],
      ['version=1%00', 'version'],
      ['label=%ED%A0%80', 'label'],
      ['label=%E0%A4%A', 'label'],
      ['%00=1', ''],
    ];
    for (const [query, path] of bad) {
      const reply = await retrieve(s.promptId, s.secret, { query });
      expectError(reply, 400, 'invalid_request');
      expect(
        reply.body.error.details.issues.map((i: any) => i.path),
        query,
      ).toContain(path);
    }
    // The widest valid label and version are fine (404 when nothing is there).
    expectError(await retrieve(s.promptId, s.secret, { query: `label=${'a'.repeat(64)}` }), 404, 'label_not_assigned');
    expectError(await retrieve(s.promptId, s.secret, { query: 'version=2147483647' }), 404, 'version_not_found');
  });
});

describe('404: never a fallback', () => {
  it('an unassigned or removed label is label_not_assigned; a missing version is version_not_found', async () => {
    const s = await retrievalSetup(2);
    expectError(await retrieve(s.promptId, s.secret, { query: 'label=canary' }), 404, 'label_not_assigned');
    expect((await s.owner.call('PUT', `${s.base}/labels/canary`, { body: { versionId: s.ids[1] } })).status).toBe(200);
    expect((await retrieve(s.promptId, s.secret, { query: 'label=canary' })).body.version).toBe(2);
    expect((await s.owner.call('DELETE', `${s.base}/labels/canary`)).status).toBe(204);
    const removed = await retrieve(s.promptId, s.secret, { query: 'label=canary' });
    expectError(removed, 404, 'label_not_assigned');
    expect(removed.body.error.details).toEqual({ label: 'canary' });
    const missing = await retrieve(s.promptId, s.secret, { query: 'version=3' });
    expectError(missing, 404, 'version_not_found');
    expect(missing.body.error.details).toEqual({ version: 3 });
    // A label name that was never used and a conditional request on it: still 404, never 304.
    expectError(
      await retrieve(s.promptId, s.secret, { query: 'label=canary', headers: { 'if-none-match': '*' } }),
      404,
      'label_not_assigned',
    );
  });

  it('a prompt still in setup has no production version: label_not_assigned', async () => {
    const s = await retrievalSetup(1);
    const setup = await createPrompt(s.owner, s.org.id, 'In setup');
    const base = `/organizations/${s.org.id}/prompts/${setup.id}`;
    const created = await s.owner.call('POST', `${base}/keys`, { body: { name: 'early' } });
    if (created.status !== 201) return; // keys may require an active prompt
    expectError(await retrieve(setup.id, created.body.secret), 404, 'label_not_assigned');
    expectError(await retrieve(setup.id, created.body.secret, { query: 'version=1' }), 404, 'version_not_found');
  });
});

describe('other statuses', () => {
  it('other methods are 405 with Allow: GET, HEAD; HEAD answers as GET does', async () => {
    const s = await retrievalSetup(1);
    const { call } = await import('../helpers/api');
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const reply = await call(method, `/prompts/${s.promptId}`, { token: s.secret });
      expect(reply.status, method).toBe(405);
      expect(reply.headers.get('allow')).toBe('GET, HEAD');
    }
    const get = await call('GET', `/prompts/${s.promptId}`, { token: s.secret });
    const head = await call('HEAD', `/prompts/${s.promptId}`, { token: s.secret });
    expect(head.status).toBe(200);
    expect(head.headers.get('etag')).toBe(get.headers.get('etag'));
    expect((await call('HEAD', `/prompts/${s.promptId}`, { token: 'plr_wrong' })).status).toBe(401);
  });

  it('a database that cannot be reached is 503 unavailable with Retry-After, never a 500', async () => {
    const s = await retrievalSetup(1);
    const real = getDatabase();
    await real;
    const broken = await openDatabase({ url: `postgres://postgres@127.0.0.1:${await closedPort()}/none`, max: 1 });
    setDatabase(Promise.resolve(broken));
    try {
      const reply = await retrieve(s.promptId, s.secret);
      expectError(reply, 503, 'unavailable');
      expect(reply.headers.get('retry-after')).toMatch(/^\d+$/);
    } finally {
      setDatabase(real);
      await broken.close();
    }
    expect((await retrieve(s.promptId, s.secret)).status).toBe(200);
  });
});
