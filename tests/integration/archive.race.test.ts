import { beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { newTeam, type TestUser } from '../helpers/api';
import { promptWithVersions, writeDraft } from '../helpers/prompts';
import { holdLock } from '../helpers/row-lock';

// A write under a prompt (a label move or removal, a dataset case, a draft) that was already on its
// way when an archive took the prompt must not land after the archive answered: it waits for the
// archive and then sees it (409 invalid_state), changing nothing. Here a second connection plays the
// archive: it locks the prompt row, lets the write start, archives and commits.
// Two connections are needed, so this runs on Postgres only.
describe.skipIf(!process.env.DATABASE_URL)('writes racing an archive', () => {
  beforeAll(() => getDb().then(() => undefined), 120_000);

  // Holds the prompt row as an archive does, starts the write, archives once the write is either
  // waiting or done, and returns the write's answer.
  async function duringArchive(promptId: string, write: () => Promise<{ status: number; body: any }>) {
    const archive = await holdLock((sql) => sql`select id from prompts where id = ${promptId} for update`);
    const pending = write();
    await archive.waitForWaiters(1, pending);
    await archive.release(
      (sql) => sql`update prompts set state = 'archived', archived_at = now() where id = ${promptId}`,
    );
    return pending;
  }

  async function labelsOf(user: TestUser, base: string) {
    const listed = await user.call('GET', `${base}/labels`);
    return Object.fromEntries(listed.body.items.map((l: any) => [l.label, l.versionId]));
  }

  it(
    'a label move, a label removal, a dataset case and a draft wait for the archive and are refused',
    { timeout: 60_000 },
    async () => {
      const { org, admin } = await newTeam();
      const { base, ids, prompt } = await promptWithVersions(admin, org.id, 2);
      expect((await admin.call('PUT', `${base}/labels/candidate`, { body: { versionId: ids[1] } })).status).toBe(200);
      const labels = await labelsOf(admin, base);
      const history = (await admin.call('GET', `${base}/label-history`)).body.items.length;

      const moved = await duringArchive(prompt.id, () =>
        admin.call('PUT', `${base}/labels/production`, { body: { versionId: ids[1] } }),
      );
      expect(moved.status, JSON.stringify(moved.body)).toBe(409);
      expect(moved.body.error.code).toBe('invalid_state');
      expect(await labelsOf(admin, base)).toEqual(labels);
      expect((await admin.call('GET', `${base}/label-history`)).body.items.length).toBe(history);

      // The archive above committed; each write below races a second archive of its own prompt.
      const next = await promptWithVersions(admin, org.id, 2);
      await admin.call('PUT', `${next.base}/labels/candidate`, { body: { versionId: next.ids[1] } });
      const removed = await duringArchive(next.prompt.id, () => admin.call('DELETE', `${next.base}/labels/candidate`));
      expect(removed.status, JSON.stringify(removed.body)).toBe(409);
      expect((await labelsOf(admin, next.base)).candidate).toBe(next.ids[1]);

      const third = await promptWithVersions(admin, org.id, 1);
      const added = await duringArchive(third.prompt.id, () =>
        admin.call('POST', `${third.base}/dataset/cases`, {
          body: { revision: 0, row: { input: 'Hi', expectedOutput: '' } },
        }),
      );
      expect(added.status, JSON.stringify(added.body)).toBe(409);
      expect(added.body.error.code).toBe('invalid_state');
      const dataset = await admin.call('GET', `${third.base}/dataset`);
      expect(dataset.body.revision).toBe(0);

      const fourth = await promptWithVersions(admin, org.id, 1);
      const before = await writeDraft(admin, org.id, fourth.prompt.id, 'Draft before');
      const drafted = await duringArchive(fourth.prompt.id, () =>
        admin.call('PUT', `/organizations/${org.id}/prompts/${fourth.prompt.id}/draft`, {
          body: { content: before.content, revision: before.revision },
        }),
      );
      expect(drafted.status, JSON.stringify(drafted.body)).toBe(409);
      expect(drafted.body.error.code).toBe('invalid_state');
      const after = await admin.call('GET', `/organizations/${org.id}/prompts/${fourth.prompt.id}/draft`);
      expect(after.body.revision).toBe(before.revision);
    },
  );
});
