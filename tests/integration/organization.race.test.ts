import { beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { promptLabelHistory, webhookDeliveries } from '@/db/schema';
import { deleteOrganization } from '@/server/orgs/service';
import { newTeam, type TestUser } from '../helpers/api';
import { promptWithVersions } from '../helpers/prompts';
import { holdLock, settleOrder } from '../helpers/row-lock';
import { inEdgeTransaction } from '../helpers/transaction';

// Writes already under way when an organization is deleted, a member removed or a webhook deleted:
// the other side waits for them (no write lands after it answered, no deadlock, no 500). A second
// connection holds the label row, so that a label move is caught halfway (after its authorization,
// before its write). Two connections are needed, so this runs on Postgres only.
describe.skipIf(!process.env.DATABASE_URL)('writes racing organization changes', () => {
  beforeAll(() => getDb().then(() => undefined), 120_000);

  const holdLabel = (promptId: string) =>
    holdLock(
      (sql) => sql`select 1 from prompt_labels where prompt_id = ${promptId} and label = 'production' for update`,
    );

  async function deletionToken(admin: TestUser, organizationId: string): Promise<string> {
    const link = await admin.call('POST', `/organizations/${organizationId}/deletion-link`);
    expect(link.status).toBe(200);
    return new URL(link.body.url).searchParams.get('token')!;
  }

  it('removing a member waits for that member’s write under way, which lands before the removal answers', async () => {
    const { org, admin, editor } = await newTeam();
    const { base, ids, prompt } = await promptWithVersions(admin, org.id, 2);
    const label = await holdLabel(prompt.id);
    const move = editor.call('PUT', `${base}/labels/production`, { body: { versionId: ids[1] } });
    await label.waitForWaiters(1, move);
    const removal = admin.call('DELETE', `/organizations/${org.id}/members/${editor.id}`);
    await label.waitForWaiters(2, removal);
    const order = settleOrder({ move, removal });
    await label.release();
    expect(await order).toEqual(['move', 'removal']);
    expect((await move).status).toBe(200);
    expect((await removal).status).toBe(204);
    // Once the removal has answered, the member is refused.
    expect((await editor.call('PUT', `${base}/labels/production`, { body: { versionId: ids[0] } })).status).toBe(404);
  });

  it('deleting the organization waits for a write under way, then deletes; no deadlock, no 500', async () => {
    const { org, admin, editor } = await newTeam();
    const { base, ids, prompt } = await promptWithVersions(admin, org.id, 2);
    const token = await deletionToken(admin, org.id);
    const ctx = { db: await getDb(), actor: { userId: admin.id, clientId: 'dashboard', human: true } };
    const label = await holdLabel(prompt.id);
    const move = editor.call('PUT', `${base}/labels/production`, { body: { versionId: ids[1] } });
    await label.waitForWaiters(1, move);
    const deletion = inEdgeTransaction(ctx, (tx) => deleteOrganization(tx, org.id, { token, confirmName: org.name }));
    await label.waitForWaiters(2, deletion);
    const order = settleOrder({ move, deletion });
    await label.release();
    expect(await order).toEqual(['move', 'deletion']);
    expect((await move).status).toBe(200);
    await deletion;
    expect((await admin.call('GET', `/organizations/${org.id}`)).status).toBe(404);
    const db = await getDb();
    expect(await db.select().from(promptLabelHistory).where(eq(promptLabelHistory.promptId, prompt.id))).toEqual([]);
  });

  it('a webhook deleted while a move emits its event: the move lands, with no delivery to the deleted endpoint', async () => {
    const { org, admin } = await newTeam();
    const { base, ids } = await promptWithVersions(admin, org.id, 2);
    const created = await admin.call('POST', `/organizations/${org.id}/webhooks`, {
      body: { url: 'https://93.184.216.34/hooks/race', events: ['prompt.label.moved'] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const webhookId = created.body.webhook.id;
    // The deletion has begun (its row is locked) but not committed when the move looks for endpoints.
    const deletion = await holdLock((sql) => sql`delete from webhook_deliveries where webhook_id = ${webhookId}`);
    await deletion.sql`delete from webhooks where id = ${webhookId}`;
    const move = admin.call('PUT', `${base}/labels/production`, { body: { versionId: ids[1] } });
    await deletion.waitForWaiters(1, move);
    await deletion.release();
    const moved = await move;
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    const db = await getDb();
    expect(await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, webhookId))).toEqual([]);
  });

  it('label history is stamped in the order the moves commit', async () => {
    const { org, admin } = await newTeam();
    const { base, ids, prompt } = await promptWithVersions(admin, org.id, 2);
    const label = await holdLabel(prompt.id);
    const move = admin.call('PUT', `${base}/labels/production`, { body: { versionId: ids[1] } });
    await label.waitForWaiters(1, move);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const released = Date.now();
    await label.release();
    expect((await move).status).toBe(200);
    const history = await admin.call('GET', `${base}/label-history`, { query: 'label=production' });
    const newest = history.body.items[0];
    expect(newest.toVersionId).toBe(ids[1]);
    expect(Date.parse(newest.at)).toBeGreaterThanOrEqual(released - 5);
  });
});
