import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inEdgeTransaction } from '../helpers/transaction';
import { getDb } from '@/db/client';
import { ingestionKeys, retrievalKeys, warnings } from '@/db/schema';
import { runWarningChecks, resolveQuietArchivedUse } from '@/server/warnings/checks';
import { checkUnusedKeys } from '@/server/warnings/key-unused';
import { dismissWarning, raiseWarning } from '@/server/warnings/service';
import { newTeam, type TestUser } from '../helpers/api';
import { activePrompt } from '../helpers/prompts';
import { isolatedDatabase } from '../helpers/evals-engine';

// The checks sweep every organization (resolveQuietArchivedUse resolves an archived-use warning of any
// prompt without a live key): on the test server this file gets a database of its own, so that it
// never resolves or raises the warnings of files running beside it.
let dropDatabase: () => Promise<void> = async () => {};
beforeAll(async () => {
  dropDatabase = await isolatedDatabase();
}, 120_000);
afterAll(() => dropDatabase());

// Keys are backdated relative to a fixed `now` close to the real clock, so keys that other test
// files create at the same time are never old enough to be touched by these runs.
const now = new Date(Math.floor(Date.now() / 1000) * 1000);
const ago = (days: number, hours = 0) => new Date(now.getTime() - days * 86_400_000 - hours * 3_600_000);
const later = (hours: number) => new Date(now.getTime() + hours * 3_600_000);

async function retrievalKey(
  user: TestUser,
  orgId: string,
  promptId: string,
  name: string,
  times: { createdAt: Date; lastUsedAt?: Date | null },
) {
  const created = await user.call('POST', `/organizations/${orgId}/prompts/${promptId}/keys`, { body: { name } });
  if (created.status !== 201) throw new Error(JSON.stringify(created.body));
  await (await getDb()).update(retrievalKeys).set(times).where(eq(retrievalKeys.id, created.body.key.id));
  return created.body.key.id as string;
}

async function ingestionKey(
  user: TestUser,
  orgId: string,
  name: string,
  times: { createdAt: Date; lastUsedAt?: Date | null },
) {
  const created = await user.call('POST', `/organizations/${orgId}/ingestion-keys`, {
    body: { name, application: 'app', environment: 'prod' },
  });
  if (created.status !== 201) throw new Error(JSON.stringify(created.body));
  await (await getDb()).update(ingestionKeys).set(times).where(eq(ingestionKeys.id, created.body.key.id));
  return created.body.key.id as string;
}

async function warningOf(orgId: string, subjectId: string) {
  const rows = await (
    await getDb()
  )
    .select()
    .from(warnings)
    .where(and(eq(warnings.organizationId, orgId), eq(warnings.subjectId, subjectId)));
  return rows[0] ?? null;
}

describe('key_unused', () => {
  it('raises for retrieval and ingestion keys never used within 7 days or unused for 30; never counts one idle stretch twice', async () => {
    const { org, admin } = await newTeam();
    const { prompt } = await activePrompt(admin, org.id);
    const fresh = await retrievalKey(admin, org.id, prompt.id, 'almost a week', { createdAt: ago(7, -1) });
    const never = await retrievalKey(admin, org.id, prompt.id, 'never used', { createdAt: ago(8) });
    const idle = await retrievalKey(admin, org.id, prompt.id, 'idle', { createdAt: ago(90), lastUsedAt: ago(31) });
    const recent = await retrievalKey(admin, org.id, prompt.id, 'recent', { createdAt: ago(90), lastUsedAt: ago(29) });
    const ingestNever = await ingestionKey(admin, org.id, 'collector', { createdAt: ago(8) });
    const ingestIdle = await ingestionKey(admin, org.id, 'old collector', { createdAt: ago(90), lastUsedAt: ago(40) });
    const revoked = await ingestionKey(admin, org.id, 'revoked', { createdAt: ago(90) });
    expect((await admin.call('DELETE', `/organizations/${org.id}/ingestion-keys/${revoked}`)).status).toBe(200);

    const first = await checkUnusedKeys(await getDb(), now);
    expect(first.raised).toBeGreaterThanOrEqual(4);
    expect(await warningOf(org.id, fresh)).toBeNull();
    expect(await warningOf(org.id, recent)).toBeNull();
    expect(await warningOf(org.id, revoked)).toBeNull();
    expect(await warningOf(org.id, never)).toMatchObject({
      kind: 'key_unused',
      keyId: never,
      promptId: prompt.id,
      count: 1,
      resolvedAt: null,
      lastOccurrenceId: 'never',
      message: expect.stringMatching(
        /^Retrieval key “never used” \(plr_.+…\) has never been used since it was created on \d{4}-\d\d-\d\d\./,
      ),
      details: expect.objectContaining({ keyType: 'retrieval', keyName: 'never used', lastUsedAt: null }),
    });
    expect((await warningOf(org.id, never))!.lastSeenAt.toISOString()).toBe(now.toISOString());
    expect(await warningOf(org.id, idle)).toMatchObject({
      count: 1,
      message: expect.stringContaining(`has not been used since ${ago(31).toISOString().slice(0, 10)}`),
    });
    expect(await warningOf(org.id, ingestNever)).toMatchObject({
      keyId: ingestNever,
      promptId: null,
      details: expect.objectContaining({ keyType: 'ingestion' }),
    });
    expect(await warningOf(org.id, ingestIdle)).toMatchObject({
      count: 1,
      details: expect.objectContaining({ keyType: 'ingestion', lastUsedAt: ago(40).toISOString() }),
    });

    // Later runs see the same idle stretches: nothing is counted again.
    await checkUnusedKeys(await getDb(), later(1));
    expect(await warningOf(org.id, never)).toMatchObject({ count: 1, resolvedAt: null });
    expect((await warningOf(org.id, never))!.lastSeenAt.toISOString()).toBe(now.toISOString());
    // The almost-a-week key crosses its 7 days two hours later.
    await checkUnusedKeys(await getDb(), later(2));
    expect(await warningOf(org.id, fresh)).toMatchObject({ count: 1, resolvedAt: null });
  });

  it('resolves when the key is used again or revoked, and reopens (count 2) when it falls idle again', async () => {
    const { org, admin } = await newTeam();
    const { prompt } = await activePrompt(admin, org.id);
    const used = await retrievalKey(admin, org.id, prompt.id, 'used again', { createdAt: ago(10) });
    const revoked = await retrievalKey(admin, org.id, prompt.id, 'revoked', { createdAt: ago(10) });
    const ingest = await ingestionKey(admin, org.id, 'collector', { createdAt: ago(10) });
    const db = await getDb();
    await checkUnusedKeys(db, now);
    for (const id of [used, revoked, ingest])
      expect(await warningOf(org.id, id)).toMatchObject({ resolvedAt: null, count: 1 });

    await db.update(retrievalKeys).set({ lastUsedAt: now }).where(eq(retrievalKeys.id, used));
    await db.update(ingestionKeys).set({ lastUsedAt: now }).where(eq(ingestionKeys.id, ingest));
    expect((await admin.call('DELETE', `/organizations/${org.id}/prompts/${prompt.id}/keys/${revoked}`)).status).toBe(
      200,
    );
    const run = await checkUnusedKeys(db, later(1));
    expect(run.resolved).toBeGreaterThanOrEqual(3);
    for (const id of [used, revoked, ingest])
      expect((await warningOf(org.id, id))!.resolvedAt?.toISOString()).toBe(later(1).toISOString());

    // Unused for 30 days since that use (backdated rather than moving the clock, so other files' new
    // keys stay untouched): a new idle stretch, so the same warning reopens and counts it.
    await db
      .update(retrievalKeys)
      .set({ lastUsedAt: ago(31) })
      .where(eq(retrievalKeys.id, used));
    await db
      .update(ingestionKeys)
      .set({ lastUsedAt: ago(31) })
      .where(eq(ingestionKeys.id, ingest));
    await checkUnusedKeys(db, later(2));
    expect(await warningOf(org.id, used)).toMatchObject({
      count: 2,
      resolvedAt: null,
      lastOccurrenceId: `idle-since:${ago(31).getTime()}`,
    });
    expect(await warningOf(org.id, ingest)).toMatchObject({ count: 2, resolvedAt: null });
    expect(await warningOf(org.id, revoked)).toMatchObject({ count: 1, resolvedAt: expect.any(Date) });
  });

  it('a dismissed warning stays dismissed while the key stays idle', async () => {
    const { org, admin } = await newTeam();
    const key = await ingestionKey(admin, org.id, 'spare', { createdAt: ago(10) });
    const db = await getDb();
    await checkUnusedKeys(db, now);
    const warning = await warningOf(org.id, key);
    await inEdgeTransaction({ db, actor: { userId: admin.id, clientId: 'dashboard', human: true } }, (ctx) =>
      dismissWarning(ctx, { organizationId: org.id, warningId: warning!.id }),
    );
    await checkUnusedKeys(db, later(1));
    expect((await warningOf(org.id, key))!.resolvedAt).not.toBeNull();
    expect((await warningOf(org.id, key))!.count).toBe(1);
  });
});

describe('archived_prompt_used resolution', () => {
  it('resolves after 7 quiet days, or at once when the prompt has no unrevoked key; stays open otherwise', async () => {
    const { org, admin } = await newTeam();
    const db = await getDb();
    const quiet = await activePrompt(admin, org.id);
    const busy = await activePrompt(admin, org.id);
    const keyless = await activePrompt(admin, org.id);
    await retrievalKey(admin, org.id, quiet.prompt.id, 'k', { createdAt: now });
    await retrievalKey(admin, org.id, busy.prompt.id, 'k', { createdAt: now });
    const raise = (promptId: string, at: Date) =>
      raiseWarning(db, {
        organizationId: org.id,
        kind: 'archived_prompt_used',
        subjectId: promptId,
        promptId,
        message: 'Archived prompt retrieved.',
        at,
      });
    await raise(quiet.prompt.id, ago(7, 1));
    await raise(busy.prompt.id, ago(1));
    await raise(keyless.prompt.id, now);
    const result = await runWarningChecks(db, now);
    expect(result.archivedUseResolved).toBeGreaterThanOrEqual(2);
    expect((await warningOf(org.id, quiet.prompt.id))!.resolvedAt?.toISOString()).toBe(now.toISOString());
    expect((await warningOf(org.id, keyless.prompt.id))!.resolvedAt).not.toBeNull();
    expect((await warningOf(org.id, busy.prompt.id))!.resolvedAt).toBeNull();
    expect(await resolveQuietArchivedUse(db, now)).toBe(0);
  });
});
