import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { organizations } from '@/db/schema';
import { limits } from '@/server/credentials/attempts';
import { caller, rejection } from '../helpers/trpc';

async function editorWithPrompt() {
  const profile = await (
    await caller(null)
  ).account.signUp({ email: `pgl-${randomUUID()}@example.test`, password: 'river-stone-42' });
  const trpc = await caller(profile.id);
  const org = await trpc.organizations.create({ name: 'Playground limits' });
  const prompt = await trpc.prompts.create({ organizationId: org.id, name: 'Limited prompt' });
  return { trpc, org, ids: { organizationId: org.id, promptId: prompt.id } };
}

async function drain(iterable: AsyncIterable<unknown>) {
  const events: unknown[] = [];
  for await (const event of iterable) events.push(event);
  return events;
}

const run = { content: { messages: [], inputType: 'user_message' as const }, input: 'hello there' };

describe('playground limits', () => {
  it('a read-only organization refuses runs with 403 read_only', async () => {
    const { trpc, org, ids } = await editorWithPrompt();
    const db = await getDb();
    await db.update(organizations).set({ readOnly: true }).where(eq(organizations.id, org.id));
    const refused = await rejection(trpc.playground.run({ ...ids, ...run }));
    expect(refused.code).toBe('FORBIDDEN');
    expect(refused.cause.code).toBe('read_only');
    await db.update(organizations).set({ readOnly: false }).where(eq(organizations.id, org.id));
    expect((await drain(await trpc.playground.run({ ...ids, ...run }))).at(-1)).toMatchObject({
      type: 'done',
      output: 'hello there',
    });
  });

  it('each user has a rate: past it, 429 rate_limited with Retry-After; other users are unaffected', async () => {
    const { trpc, ids } = await editorWithPrompt();
    for (let i = 0; i < limits.playgroundRunsPerUser.limit; i++)
      await drain(await trpc.playground.run({ ...ids, ...run }));
    const limited = await rejection(trpc.playground.run({ ...ids, ...run }));
    expect(limited.code).toBe('TOO_MANY_REQUESTS');
    expect(limited.cause.code).toBe('rate_limited');
    expect(Number(limited.cause.headers['retry-after'])).toBeGreaterThan(0);

    const other = await editorWithPrompt();
    expect((await drain(await other.trpc.playground.run({ ...other.ids, ...run }))).at(-1)).toMatchObject({
      type: 'done',
    });
  });
});
