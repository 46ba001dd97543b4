import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { promptVersions } from '@/db/schema';
import { newOrganization, newTeam, newUser } from '../helpers/api';
import { activePrompt, createPrompt, writeDraft } from '../helpers/prompts';

function expectError(result: { status: number; body: any }, status: number, code: string) {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.body.error.code).toBe(code);
}

describe('save version errors', () => {
  it('setup prompt: 409 invalid_state with details.state setup', async () => {
    const { org, editor } = await newTeam();
    const prompt = await createPrompt(editor, org.id);
    const draft = await writeDraft(editor, org.id, prompt.id, 'Setup text');
    const saved = await editor.call('POST', `/organizations/${org.id}/prompts/${prompt.id}/versions`, {
      body: { draftRevision: draft.revision },
    });
    expectError(saved, 409, 'invalid_state');
    expect(saved.body.error.details).toEqual({ state: 'setup' });
  });

  it('archived prompt: 409 invalid_state with details.state archived', async () => {
    const { org, admin } = await newTeam();
    const { prompt, base } = await activePrompt(admin, org.id);
    const draft = await writeDraft(admin, org.id, prompt.id, 'Later');
    expect((await admin.call('POST', `${base}/archive`)).status).toBe(200);
    const saved = await admin.call('POST', `${base}/versions`, { body: { draftRevision: draft.revision } });
    expectError(saved, 409, 'invalid_state');
    expect(saved.body.error.details).toEqual({ state: 'archived' });
  });

  it('stale or future draftRevision: 409 draft_conflict with details.currentRevision, nothing saved', async () => {
    const { org, admin } = await newTeam();
    const { prompt, base } = await activePrompt(admin, org.id);
    const first = await writeDraft(admin, org.id, prompt.id, 'A');
    const second = await writeDraft(admin, org.id, prompt.id, 'B');
    expect(second.revision).toBe(first.revision + 1);
    const stale = await admin.call('POST', `${base}/versions`, { body: { draftRevision: first.revision } });
    expectError(stale, 409, 'draft_conflict');
    expect(stale.body.error.details).toEqual({ currentRevision: second.revision });
    const ahead = await admin.call('POST', `${base}/versions`, { body: { draftRevision: 99 } });
    expectError(ahead, 409, 'draft_conflict');
    const db = await getDb();
    expect(await db.select().from(promptVersions).where(eq(promptVersions.promptId, prompt.id))).toHaveLength(1);
  });

  it('viewer 403, another organization 404, bad bodies 400', async () => {
    const { org, admin, viewer } = await newTeam();
    const { base, prompt } = await activePrompt(admin, org.id);
    expectError(await viewer.call('POST', `${base}/versions`, { body: { draftRevision: 0 } }), 403, 'forbidden');

    const stranger = await newUser();
    const elsewhere = await newOrganization(stranger);
    expectError(await stranger.call('POST', `${base}/versions`, { body: { draftRevision: 0 } }), 404, 'not_found');
    expectError(await stranger.call('GET', `${base}/versions`), 404, 'not_found');
    expectError(
      await stranger.call('GET', `/organizations/${elsewhere.id}/prompts/${prompt.id}/versions`),
      404,
      'not_found',
    );
    expectError(
      await stranger.call('GET', `/organizations/${elsewhere.id}/prompts/${prompt.id}/versions/1`),
      404,
      'not_found',
    );

    for (const body of [
      {},
      { draftRevision: -1 },
      { draftRevision: 1.5 },
      { draftRevision: '1' },
      { draftRevision: 1, extra: true },
    ]) {
      expectError(await admin.call('POST', `${base}/versions`, { body }), 400, 'invalid_request');
    }
    const dup = await admin.call('POST', `${base}/versions`, {
      rawBody: '{"draftRevision":1,"draftRevision":1}',
      headers: { 'content-type': 'application/json' },
    });
    expectError(dup, 400, 'invalid_request');
  });
});

describe('list and get version errors', () => {
  it('strict query: unknown, duplicated, empty, out of range, bad cursor → 400', async () => {
    const { org, admin } = await newTeam();
    const { base } = await activePrompt(admin, org.id);
    for (const query of [
      'limit=0',
      'limit=101',
      'limit=abc',
      'limit=',
      'limit=2&limit=3',
      'sort=asc',
      'cursor=notacursor',
      `cursor=${Buffer.from('["x"]').toString('base64url')}`,
      // A number the version column cannot hold: refused as a cursor, with its path.
      `cursor=${Buffer.from('[99999999999]').toString('base64url')}`,
    ]) {
      const refused = await admin.call('GET', `${base}/versions`, { query });
      expectError(refused, 400, 'invalid_request');
      expect(refused.body.error.details.issues?.length, query).toBeGreaterThan(0);
    }
    expect((await admin.call('GET', `${base}/versions`, { query: 'limit=100' })).status).toBe(200);
  });

  it('a version number must be an integer ≥ 1 (400); an absent one is 404', async () => {
    const { org, admin } = await newTeam();
    const { base } = await activePrompt(admin, org.id);
    for (const number of ['0', '-1', '1.5', 'abc', '01', '99999999999']) {
      expectError(await admin.call('GET', `${base}/versions/${number}`), 400, 'invalid_request');
    }
    expectError(await admin.call('GET', `${base}/versions/2`), 404, 'not_found');
    expectError(await admin.call('GET', `${base}/versions/2147483647`), 404, 'not_found');
  });

  it('a setup prompt has an empty version list', async () => {
    const { org, admin } = await newTeam();
    const prompt = await createPrompt(admin, org.id);
    const list = await admin.call('GET', `/organizations/${org.id}/prompts/${prompt.id}/versions`);
    expect(list.body).toEqual({ items: [], nextCursor: null });
    expectError(await admin.call('GET', `/organizations/${org.id}/prompts/${prompt.id}/versions/1`), 404, 'not_found');
  });
});
