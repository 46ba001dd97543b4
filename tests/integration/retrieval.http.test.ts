import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { retrievalKeys, warnings } from '@/db/schema';
import { startRetrievalEntry } from '../helpers/retrieval-entry';
import { retrievalSetup } from '../helpers/retrieval';

beforeAll(() => getDb().then(() => undefined), 120_000);

// Over real HTTP against the production entry's hot-path table (`--role=retrieval`). Its flush
// intervals are set far out, so what reaches the database got there through the shutdown flush.
describe.skipIf(!process.env.DATABASE_URL)('GET /api/v1/prompts/{id} on the production entry', () => {
  let entry: Awaited<ReturnType<typeof startRetrievalEntry>>;
  beforeAll(async () => {
    entry = await startRetrievalEntry({
      RETRIEVAL_LAST_USED_FLUSH_MS: '600000',
      RETRIEVAL_ACTIVITY_FLUSH_MS: '600000',
    });
  }, 120_000);
  afterAll(async () => {
    await entry?.stop();
  });

  const get = (path: string, init: RequestInit = {}) => fetch(`${entry.url}${path}`, init);

  it('200 with the body, ETag, Cache-Control, Vary and Content-Length; 304 with no body', async () => {
    const s = await retrievalSetup(2);
    const auth = { authorization: `Bearer ${s.secret}` };
    const reply = await get(`/api/v1/prompts/${s.promptId}`, { headers: auth });
    expect(reply.status).toBe(200);
    const text = await reply.text();
    expect(reply.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(JSON.parse(text)).toMatchObject({
      promptId: s.promptId,
      versionId: s.ids[0],
      version: 1,
      label: 'production',
      content: s.v1.content,
    });
    expect(reply.headers.get('cache-control')).toBe('private, no-cache');
    expect(reply.headers.get('vary')).toBe('Authorization');
    const etag = reply.headers.get('etag')!;
    const again = await get(`/api/v1/prompts/${s.promptId}/`, { headers: { ...auth, 'if-none-match': `W/${etag}` } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.headers.get('vary')).toBe('Authorization');
    const exact = await get(`/api/v1/prompts/${s.promptId}?version=2`, { headers: auth });
    expect(await exact.json()).toMatchObject({ version: 2, label: null });
  });

  it('errors in order: 401, 403, 400, 404, with the error envelope and no-store', async () => {
    const s = await retrievalSetup(1);
    const auth = { authorization: `Bearer ${s.secret}` };
    const cases: [string, RequestInit, number, string][] = [
      [`/api/v1/prompts/${s.promptId}`, {}, 401, 'unauthorized'],
      [`/api/v1/prompts/prm_other?label=X`, { headers: { authorization: 'Bearer plr_nope' } }, 401, 'unauthorized'],
      [`/api/v1/prompts/prm_other?label=X`, { headers: auth }, 403, 'forbidden'],
      [`/api/v1/prompts/%E0%A4%A`, { headers: auth }, 403, 'forbidden'],
      [`/api/v1/prompts/${s.promptId}?label=a&version=1`, { headers: auth }, 400, 'invalid_request'],
      [`/api/v1/prompts/${s.promptId}?label=%00`, { headers: auth }, 400, 'invalid_request'],
      [`/api/v1/prompts/${s.promptId}?label=nope`, { headers: auth }, 404, 'label_not_assigned'],
      [`/api/v1/prompts/${s.promptId}?version=7`, { headers: auth }, 404, 'version_not_found'],
      [`/api/v1/prompts/${s.promptId}`, { method: 'POST', headers: auth }, 405, 'method_not_allowed'],
    ];
    for (const [path, init, status, code] of cases) {
      const reply = await get(path, init);
      expect(reply.status, path).toBe(status);
      expect(reply.headers.get('cache-control')).toBe('no-store');
      expect((await reply.json()).error).toMatchObject({
        code,
        requestId: expect.stringMatching(/^req_/),
        details: expect.any(Object),
      });
    }
  });

  it('this role serves retrieval only: every other path is 404', async () => {
    for (const other of [
      '/',
      '/api/v1/organizations',
      '/api/v1/openapi.json',
      '/api/v1/traces',
      '/api/v1/prompts',
      '/api/v1/prompts/x/y',
    ]) {
      const reply = await get(other);
      expect(reply.status, other).toBe(404);
      expect((await reply.json()).error.code).toBe('not_found');
    }
  });

  it('lastUsedAt and archived use recorded in memory are written by the shutdown flush', async () => {
    const s = await retrievalSetup(1);
    expect((await s.owner.call('POST', `${s.base}/archive`)).status).toBe(200);
    const auth = { authorization: `Bearer ${s.secret}` };
    const first = await get(`/api/v1/prompts/${s.promptId}`, { headers: auth });
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag')!;
    expect((await get(`/api/v1/prompts/${s.promptId}`, { headers: { ...auth, 'if-none-match': etag } })).status).toBe(
      304,
    );
    expect((await get(`/api/v1/prompts/${s.promptId}?version=1`, { headers: auth })).status).toBe(200);
    const db = await getDb();
    const key = async () => (await db.select().from(retrievalKeys).where(eq(retrievalKeys.id, s.keyId)))[0];
    const warning = async () =>
      (
        await db
          .select()
          .from(warnings)
          .where(and(eq(warnings.kind, 'archived_prompt_used'), eq(warnings.subjectId, s.promptId)))
      )[0];
    expect((await key()).lastUsedAt).toBeNull();
    expect(await warning()).toBeUndefined();
    expect(await entry.stop()).toBe(0);
    expect((await key()).lastUsedAt).not.toBeNull();
    expect(await warning()).toMatchObject({
      count: 3,
      organizationId: s.org.id,
      promptId: s.promptId,
      resolvedAt: null,
    });
  });
});
