import { and, eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { retrievalKeys, warnings } from '@/db/schema';
import { flushRetrievalActivity, recordKeyUse } from '@/server/retrieval/activity';
import { retrievalSetup, retrieve } from '../helpers/retrieval';

beforeAll(() => getDb().then(() => undefined), 120_000);

describe('GET /api/v1/prompts/{id}: what is served', () => {
  it('serves production by default, with ETag, Cache-Control private, no-cache and Vary: Authorization', async () => {
    const s = await retrievalSetup(2);
    const reply = await retrieve(s.promptId, s.secret);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      promptId: s.promptId,
      name: s.prompt.name,
      versionId: s.ids[0],
      version: 1,
      label: 'production',
      content: s.v1.content,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    const version = await s.owner.call('GET', `${s.base}/versions/1`);
    expect(reply.body.createdAt).toBe(version.body.createdAt);
    expect(reply.body.content).toEqual(version.body.content);
    expect(reply.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(reply.headers.get('cache-control')).toBe('private, no-cache');
    expect(reply.headers.get('vary')).toBe('Authorization');
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('serves a label or an exact version (label null), and the same ETag for the same body', async () => {
    const s = await retrievalSetup(3);
    await s.owner.call('PUT', `${s.base}/labels/canary`, { body: { versionId: s.ids[2] } });
    const staging = await retrieve(s.promptId, s.secret, { query: 'label=staging' });
    expect(staging.body).toMatchObject({ versionId: s.ids[0], version: 1, label: 'staging' });
    const canary = await retrieve(s.promptId, s.secret, { query: 'label=canary' });
    expect(canary.body).toMatchObject({
      versionId: s.ids[2],
      version: 3,
      label: 'canary',
      content: { messages: [{ role: 'system', content: 'Take 3' }] },
    });
    const exact = await retrieve(s.promptId, s.secret, { query: 'version=2' });
    expect(exact.body).toMatchObject({
      versionId: s.ids[1],
      version: 2,
      label: null,
      content: { messages: [{ role: 'system', content: 'Take 2' }] },
    });
    const again = await retrieve(s.promptId, s.secret, { query: 'version=2' });
    expect(again.headers.get('etag')).toBe(exact.headers.get('etag'));
    // Same version, other label: another body, so another tag.
    const production = await retrieve(s.promptId, s.secret);
    expect(production.headers.get('etag')).not.toBe(staging.headers.get('etag'));
    expect(new Set([staging, canary, exact, production].map((r) => r.headers.get('etag'))).size).toBe(4);
  });

  it('a label move and a rollback count from the very next request', async () => {
    const s = await retrievalSetup(2);
    expect((await retrieve(s.promptId, s.secret)).body.version).toBe(1);
    const moved = await s.owner.call('PUT', `${s.base}/labels/production`, { body: { versionId: s.ids[1] } });
    expect(moved.status).toBe(200);
    expect((await retrieve(s.promptId, s.secret)).body).toMatchObject({ version: 2, versionId: s.ids[1] });
    await s.owner.call('PUT', `${s.base}/labels/production`, { body: { versionId: s.ids[0] } });
    expect((await retrieve(s.promptId, s.secret)).body).toMatchObject({ version: 1, versionId: s.ids[0] });
  });

  it('a rename changes the body and the ETag', async () => {
    const s = await retrievalSetup(1);
    const before = await retrieve(s.promptId, s.secret);
    await s.owner.call('PATCH', s.base, { body: { name: 'Renamed prompt' } });
    const after = await retrieve(s.promptId, s.secret, { headers: { 'if-none-match': before.headers.get('etag')! } });
    expect(after.status).toBe(200);
    expect(after.body.name).toBe('Renamed prompt');
    expect(after.headers.get('etag')).not.toBe(before.headers.get('etag'));
  });
});

describe('If-None-Match', () => {
  it('304 with no body and the same ETag, Cache-Control and Vary on a match: exact, weak, in a list, or *', async () => {
    const s = await retrievalSetup(1);
    const first = await retrieve(s.promptId, s.secret);
    const etag = first.headers.get('etag')!;
    for (const header of [etag, `W/${etag}`, `"nope", ${etag}`, `W/"a",W/${etag} , "b"`, '*', ` ${etag} `]) {
      const reply = await retrieve(s.promptId, s.secret, { headers: { 'if-none-match': header } });
      expect(reply.status, header).toBe(304);
      expect(reply.body).toBeNull();
      expect(reply.headers.get('etag')).toBe(etag);
      expect(reply.headers.get('cache-control')).toBe('private, no-cache');
      expect(reply.headers.get('vary')).toBe('Authorization');
    }
    for (const header of [
      '"other"',
      'W/"other", "more"',
      etag.slice(1, -1),
      `${etag.slice(0, -2)}"`,
      '',
      'garbage, ,',
    ]) {
      const reply = await retrieve(s.promptId, s.secret, { headers: { 'if-none-match': header } });
      expect(reply.status, header).toBe(200);
      expect(reply.body.versionId).toBe(s.ids[0]);
    }
  });

  it('after a label move the old ETag no longer matches: 200 with the new version', async () => {
    const s = await retrievalSetup(2);
    const etag = (await retrieve(s.promptId, s.secret)).headers.get('etag')!;
    await s.owner.call('PUT', `${s.base}/labels/production`, { body: { versionId: s.ids[1] } });
    const reply = await retrieve(s.promptId, s.secret, { headers: { 'if-none-match': etag } });
    expect(reply.status).toBe(200);
    expect(reply.body.version).toBe(2);
    const etag2 = reply.headers.get('etag')!;
    expect(etag2).not.toBe(etag);
    expect((await retrieve(s.promptId, s.secret, { headers: { 'if-none-match': etag2 } })).status).toBe(304);
  });
});

describe('activity', () => {
  it('an archived prompt is still served; each 200 and authenticated 304 counts once in one archived_prompt_used warning', async () => {
    const s = await retrievalSetup(1);
    const etag = (await retrieve(s.promptId, s.secret)).headers.get('etag')!; // active: not counted
    await flushRetrievalActivity();
    const archived = await s.owner.call('POST', `${s.base}/archive`);
    expect(archived.status).toBe(200);
    const db = await getDb();
    const warningOf = async () =>
      (
        await db
          .select()
          .from(warnings)
          .where(
            and(
              eq(warnings.organizationId, s.org.id),
              eq(warnings.kind, 'archived_prompt_used'),
              eq(warnings.subjectId, s.promptId),
            ),
          )
      )[0];
    expect(await warningOf()).toBeUndefined();

    const served = await retrieve(s.promptId, s.secret);
    expect(served.status).toBe(200);
    expect(served.body.versionId).toBe(s.ids[0]);
    expect(served.headers.get('etag')).toBe(etag);
    expect((await retrieve(s.promptId, s.secret, { headers: { 'if-none-match': etag } })).status).toBe(304);
    await Promise.all(Array.from({ length: 5 }, () => retrieve(s.promptId, s.secret, { query: 'version=1' })));
    // Refused requests are not uses of the prompt.
    expect((await retrieve(s.promptId, s.secret, { query: 'label=nope' })).status).toBe(404);
    expect((await retrieve(s.promptId, 'plr_' + 'x'.repeat(43))).status).toBe(401);
    await flushRetrievalActivity();
    const warning = await warningOf();
    expect(warning).toMatchObject({ count: 7, promptId: s.promptId, keyId: s.keyId, resolvedAt: null });

    await retrieve(s.promptId, s.secret);
    await flushRetrievalActivity();
    expect((await warningOf())!.count).toBe(8);
    const listed = await s.owner.call('GET', `/organizations/${s.org.id}/warnings`);
    if (listed.status === 200)
      expect(listed.body.items.find((w: any) => w.kind === 'archived_prompt_used')).toMatchObject({
        promptId: s.promptId,
        count: 8,
      });
  });

  it('the next read in this process sees what retrieval counted: the archived-use warning and lastUsedAt', async () => {
    const s = await retrievalSetup(1);
    expect((await s.owner.call('POST', `${s.base}/archive`)).status).toBe(200);
    await flushRetrievalActivity(); // the archive's own state settled; nothing counted yet
    expect((await s.owner.call('GET', `${s.base}/keys`)).body.items[0].lastUsedAt).toBeNull();
    expect((await retrieve(s.promptId, s.secret)).status).toBe(200);
    // No flush here: the reads write what is pending before they read.
    const listed = await s.owner.call('GET', `/organizations/${s.org.id}/warnings`);
    expect(listed.body.items).toEqual([
      expect.objectContaining({ kind: 'archived_prompt_used', promptId: s.promptId, count: 1, resolvedAt: null }),
    ]);
    expect((await retrieve(s.promptId, s.secret)).status).toBe(200);
    const keys = await s.owner.call('GET', `${s.base}/keys`);
    expect(keys.body.items[0].lastUsedAt).toEqual(expect.any(String));
    const again = await s.owner.call('GET', `/organizations/${s.org.id}/warnings`);
    expect(again.body.items[0].count).toBe(2);
  });

  it('flushes lastUsedAt without a write per request, and it never moves backwards', async () => {
    const s = await retrievalSetup(1);
    const db = await getDb();
    const lastUsed = async () =>
      (await db.select({ at: retrievalKeys.lastUsedAt }).from(retrievalKeys).where(eq(retrievalKeys.id, s.keyId)))[0]
        .at;
    expect(await lastUsed()).toBeNull();
    const before = Date.now();
    await retrieve(s.promptId, s.secret);
    await retrieve(s.promptId, s.secret);
    // Not written by the request itself.
    expect(await lastUsed()).toBeNull();
    await flushRetrievalActivity();
    const first = (await lastUsed())!;
    expect(first.getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(first.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
    const listed = await s.owner.call('GET', `${s.base}/keys`);
    expect(listed.body.items[0].lastUsedAt).toBe(first.toISOString());

    // An older use (another process flushing late) never moves it backwards.
    recordKeyUse(s.keyId, first.getTime() - 60_000);
    await flushRetrievalActivity();
    expect((await lastUsed())!.getTime()).toBe(first.getTime());
  });
});

describe('OpenAPI', () => {
  it('documents retrieve_prompt under Integration with the RetrievalKey scheme, label and version parameters, and its error codes', async () => {
    const { openApiDocument } = await import('@/server/api/router');
    const operation = (openApiDocument() as any).paths['/api/v1/prompts/{promptId}'].get;
    expect(operation).toMatchObject({
      operationId: 'retrieve_prompt',
      tags: ['Integration'],
      security: [{ RetrievalKey: [] }],
    });
    expect(operation.parameters.map((p: any) => `${p.in}:${p.name}`)).toEqual([
      'path:promptId',
      'query:label',
      'query:version',
      'header:If-None-Match',
      'header:Promptloop-Subject',
    ]);
    expect(operation['x-error-codes']).toEqual(
      expect.arrayContaining([
        'unauthorized',
        'forbidden',
        'invalid_request',
        'label_not_assigned',
        'version_not_found',
      ]),
    );
    expect(Object.keys(operation.responses)).toEqual(
      expect.arrayContaining(['200', '304', '400', '401', '403', '404', '429', '503']),
    );
  });
});
