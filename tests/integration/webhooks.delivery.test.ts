import type { ServerResponse } from 'node:http';
import { eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { webhookDeliveries } from '@/db/schema';
import { runInTransaction } from '@/server/context';
import { newId } from '@/server/ids';
import { raiseWarning } from '@/server/warnings/service';
import { attemptDefaults, attemptDelivery, type AttemptSettings } from '@/server/webhooks/attempt';
import { disableWebhook } from '@/server/webhooks/disable';
import { emitEvent } from '@/server/webhooks/outbox';
import { startWebhookSender } from '@/server/webhooks/worker';
import { resolveTarget, type Resolver } from '@/server/webhooks/targets';
import { isolatedDatabase } from '../helpers/evals-engine';
import {
  createWebhookRow,
  deliveryBoss,
  deliveryOrganization,
  deliveryRow,
  emit,
  eventRow,
  expectedSignature,
  newSecret,
  startDeliveryWorker,
  startReceiver,
  stopDeliveryBoss,
  testClock,
  testPolicy,
  verified,
  waitFor,
  webhookRow,
  type Receiver,
} from '../helpers/webhook-delivery';
import { warningRow } from '../helpers/warnings';

// Webhook delivery (API.md "Webhooks"): the real worker (pg-boss on the test database) posting to a
// real local receiver, every request checked with the official standardwebhooks package. Clocks
// and schedules are injected; nothing waits for real minutes.

let dropDatabase: () => Promise<void> = async () => {};
const receivers: Receiver[] = [];
const workers: { stop(): Promise<void> }[] = [];

async function receiver(answer?: Receiver['answer']): Promise<Receiver> {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
}

async function worker(settings: Parameters<typeof startDeliveryWorker>[0] = {}) {
  const w = await startDeliveryWorker(settings);
  workers.push(w);
  return w;
}

// One attempt straight through attemptDelivery (the worker's own step), with test settings.
function attemptSettings(settings: Partial<AttemptSettings> = {}): AttemptSettings {
  return { ...attemptDefaults, policy: testPolicy, jitter: 0, raiseWarning, ...settings };
}

const held: ServerResponse[] = [];
const hold = (_req: unknown, res: ServerResponse) => void held.push(res);

const openWarning = (organizationId: string, subjectId: string) =>
  warningRow(organizationId, 'webhook_failing', subjectId);

beforeAll(async () => {
  dropDatabase = await isolatedDatabase();
});

afterEach(async () => {
  for (const w of workers.splice(0)) await w.stop();
  for (const res of held.splice(0)) res.destroy();
  // Nothing of this test is due for the next one's worker.
  const db = await getDb();
  await db.execute(
    sql`update webhook_deliveries set status = 'failed', next_attempt_at = null where status = 'pending'`,
  );
});

afterAll(async () => {
  await stopDeliveryBoss();
  for (const r of receivers) await r.close();
  await dropDatabase();
});

describe('webhook delivery', () => {
  it('posts a committed event once, signed per Standard Webhooks; an event of a rolled-back transaction is never sent', async () => {
    const rx = await receiver();
    const organizationId = await deliveryOrganization();
    const hook = await createWebhookRow({ organizationId, url: `${rx.url}/hooks/promptloop?team=a` });
    await worker();

    const db = await getDb();
    let rolledBack: string[] = [];
    await expect(
      runInTransaction(db, async (tx, afterCommit) => {
        rolledBack = await emitEvent(
          { db: tx, afterCommit },
          { organizationId, type: 'prompt.version.created', data: { marker: 'rolled back' } },
        );
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(rolledBack).toHaveLength(1);
    expect(await deliveryRow(rolledBack[0])).toBeUndefined();

    const { eventId, deliveryIds } = await emit(organizationId, { marker: 'committed' });
    await waitFor('the delivery', async () => (await deliveryRow(deliveryIds[0])).status === 'delivered');

    expect(rx.requests).toHaveLength(1);
    const [request] = rx.requests;
    expect(request.path).toBe('/hooks/promptloop?team=a');
    expect(request.headers['webhook-id']).toBe(eventId);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['user-agent']).toBe('Promptloop-Webhooks/1');
    expect(request.body).toBe((await eventRow(eventId)).payload);
    expect(verified(request, hook.secret)).toEqual({
      type: 'prompt.version.created',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      organizationId,
      data: { marker: 'committed' },
    });
    expect(() => verified(request, newSecret())).toThrow();

    const row = await deliveryRow(deliveryIds[0]);
    expect(row).toMatchObject({
      status: 'delivered',
      attempts: 1,
      lastStatusCode: 200,
      lastError: null,
      nextAttemptAt: null,
      lastResponseExcerpt: 'ok',
    });
    expect(row.deliveredAt).toBeInstanceOf(Date);
    expect(rx.requests.some((r) => r.body.includes('rolled back'))).toBe(false);
  });

  it('delivers every event to every subscribed endpoint at least once (here exactly once), in any order', async () => {
    const rx = await receiver();
    const organizationId = await deliveryOrganization();
    const a = await createWebhookRow({ organizationId, url: `${rx.url}/a` });
    const b = await createWebhookRow({
      organizationId,
      url: `${rx.url}/b`,
      events: ['prompt.version.created', 'evaluation.completed'],
    });
    await worker();
    const versions = [];
    for (let i = 0; i < 20; i++) versions.push(await emit(organizationId, { i }));
    const completed = await emit(organizationId, { evaluation: 1 }, 'evaluation.completed');
    expect(versions.every((e) => e.deliveryIds.length === 2)).toBe(true);
    expect(completed.deliveryIds).toHaveLength(1);
    const all = [...versions.flatMap((e) => e.deliveryIds), ...completed.deliveryIds];
    await waitFor('every delivery', async () =>
      (await Promise.all(all.map(deliveryRow))).every((row) => row.status === 'delivered'),
    );

    const idsAt = (path: string) => rx.requests.filter((r) => r.path === path).map((r) => r.headers['webhook-id']);
    expect(idsAt('/a').sort()).toEqual(versions.map((e) => e.eventId).sort());
    expect(idsAt('/b').sort()).toEqual([...versions, completed].map((e) => e.eventId).sort());
    for (const r of rx.requests) verified(r, r.path === '/a' ? a.secret : b.secret);
    for (const row of await Promise.all(all.map(deliveryRow))) expect(row.attempts).toBe(1);
  });

  it('the sweep finds deliveries no doorbell announced, also when they are more than one page', async () => {
    const rx = await receiver();
    const organizationId = await deliveryOrganization();
    await createWebhookRow({ organizationId, url: `${rx.url}/swept` });
    // Emitted while no worker runs: nothing rings; the sweep's pages are 5 deliveries.
    const events = [];
    for (let i = 0; i < 12; i++) events.push(await emit(organizationId, { i }));
    await worker({ sweepLimit: 5, sweepMs: 50 });
    const ids = events.flatMap((e) => e.deliveryIds);
    await waitFor('every delivery', async () =>
      (await Promise.all(ids.map(deliveryRow))).every((row) => row.status === 'delivered'),
    );
    expect(rx.requests.map((r) => r.headers['webhook-id']).sort()).toEqual(events.map((e) => e.eventId).sort());
  });

  it('a process without a worker (the web role) queues a pg-boss job that a worker picks up', async () => {
    const rx = await receiver();
    const organizationId = await deliveryOrganization();
    await createWebhookRow({ organizationId, url: `${rx.url}/queued` });
    // A worker whose sweep never comes round again: only the job can bring the delivery to it.
    await worker({ sweepMs: 3_600_000, pollMs: 100 });
    const sender = await startWebhookSender(await deliveryBoss());
    try {
      const { deliveryIds } = await emit(organizationId, { queued: true });
      await waitFor('the delivery', async () => (await deliveryRow(deliveryIds[0])).status === 'delivered');
    } finally {
      await sender.stop();
    }
  });

  it('retries a 5xx with backoff: the same webhook-id, a new timestamp and signature; a 2xx clears failingSince', async () => {
    const rx = await receiver((_req, res, n) =>
      n === 0 ? res.writeHead(503).end('try later') : res.writeHead(204).end(),
    );
    const organizationId = await deliveryOrganization();
    const hook = await createWebhookRow({ organizationId, url: `${rx.url}/flaky` });
    const clock = testClock();
    await worker({ now: clock.now });
    const { eventId, deliveryIds } = await emit(organizationId, { retry: true });

    await waitFor('the first attempt', async () => (await deliveryRow(deliveryIds[0])).attempts === 1);
    await waitFor('its outcome', async () => (await deliveryRow(deliveryIds[0])).lastStatusCode === 503);
    const failed = await deliveryRow(deliveryIds[0]);
    expect(failed).toMatchObject({
      status: 'pending',
      lastError: 'The endpoint answered 503.',
      lastResponseExcerpt: 'try later',
    });
    // The first delay of the schedule, without jitter here.
    expect(failed.nextAttemptAt!.getTime() - failed.lastAttemptAt!.getTime()).toBeGreaterThanOrEqual(5_000);
    expect(failed.nextAttemptAt!.getTime() - failed.lastAttemptAt!.getTime()).toBeLessThan(5_000 + 1_000);
    expect((await webhookRow(hook.id)).failingSince).toBeInstanceOf(Date);
    expect(rx.requests).toHaveLength(1);

    clock.advance(6_000);
    await waitFor('the retry', async () => (await deliveryRow(deliveryIds[0])).status === 'delivered');
    expect(await deliveryRow(deliveryIds[0])).toMatchObject({
      attempts: 2,
      lastStatusCode: 204,
      lastError: null,
      nextAttemptAt: null,
      lastResponseExcerpt: '',
    });
    expect((await webhookRow(hook.id)).failingSince).toBeNull();
    const [first, second] = rx.requests;
    expect(first.headers['webhook-id']).toBe(eventId);
    expect(second.headers['webhook-id']).toBe(eventId);
    expect(Number(second.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(
      Number(first.headers['webhook-timestamp']) + 5,
    );
    expect(second.headers['webhook-signature']).not.toBe(first.headers['webhook-signature']);
    expect(second.body).toBe(first.body);
    verified(first, hook.secret);
    verified(second, hook.secret);
  });

  it('sends a redelivery (a new delivery row of the same event) with the same webhook-id', async () => {
    const rx = await receiver();
    const organizationId = await deliveryOrganization();
    const hook = await createWebhookRow({ organizationId, url: `${rx.url}/again` });
    await worker();
    const { eventId, deliveryIds } = await emit(organizationId, { again: true });
    await waitFor('the delivery', async () => (await deliveryRow(deliveryIds[0])).status === 'delivered');
    const db = await getDb();
    const again = newId('whd');
    await db.insert(webhookDeliveries).values({
      id: again,
      organizationId,
      webhookId: hook.id,
      eventId,
      type: 'prompt.version.created',
      nextAttemptAt: new Date(),
    });
    await waitFor('the redelivery', async () => (await deliveryRow(again)).status === 'delivered');
    expect(rx.requests.map((r) => r.headers['webhook-id'])).toEqual([eventId, eventId]);
    for (const r of rx.requests) verified(r, hook.secret);
  });

  it('gives up on an endpoint that does not answer within the timeout, and drops the connection', async () => {
    const rx = await receiver(hold);
    const organizationId = await deliveryOrganization();
    await createWebhookRow({ organizationId, url: `${rx.url}/silent` });
    await worker({ timeoutMs: 300 });
    const { deliveryIds } = await emit(organizationId, { silent: true });
    await waitFor('the timed-out attempt', async () => (await deliveryRow(deliveryIds[0])).lastError !== null);
    const row = await deliveryRow(deliveryIds[0]);
    expect(row).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastStatusCode: null,
      lastError: 'No answer within 0.3 s.',
      lastResponseExcerpt: null,
    });
    expect(row.nextAttemptAt!.getTime()).toBeGreaterThan(row.lastAttemptAt!.getTime());
    await rx.requests[0].closed;
    expect(rx.requests).toHaveLength(1);
  });

  it('keeps 10 s as the default timeout', () => {
    expect(attemptDefaults.timeoutMs).toBe(10_000);
  });

  it('does not follow a redirect: a 3xx is a failed attempt', async () => {
    const rx = await receiver((req, res) =>
      req.path === '/moved'
        ? res.writeHead(302, { location: `http://127.0.0.1:${rx.port}/elsewhere` }).end()
        : res.writeHead(200).end('followed'),
    );
    const organizationId = await deliveryOrganization();
    await createWebhookRow({ organizationId, url: `${rx.url}/moved` });
    await worker();
    const { deliveryIds } = await emit(organizationId, { moved: true });
    await waitFor('the attempt', async () => (await deliveryRow(deliveryIds[0])).lastStatusCode !== null);
    const row = await deliveryRow(deliveryIds[0]);
    expect(row).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: 302 });
    expect(row.lastError).toContain('redirects are not followed');
    expect(row.lastError).toContain('/elsewhere');
    expect(rx.requests.map((r) => r.path)).toEqual(['/moved']);
  });

  it('reads at most 4 KiB of the answer, then stops reading', async () => {
    const total = 64 * 1024 * 1024;
    let written = 0;
    const rx = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const pump = () => {
        while (written < total && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        if (written >= total) res.end();
      };
      pump();
    });
    const organizationId = await deliveryOrganization();
    await createWebhookRow({ organizationId, url: `${rx.url}/huge` });
    await worker();
    const { deliveryIds } = await emit(organizationId, { huge: true });
    await waitFor('the delivery', async () => (await deliveryRow(deliveryIds[0])).status === 'delivered');
    const row = await deliveryRow(deliveryIds[0]);
    expect(row.lastResponseExcerpt).toBe('a'.repeat(4096));
    await rx.requests[0].closed;
    expect(written).toBeLessThan(total);
  });

  it('a 410 Gone fails the delivery and disables the webhook at once (its other pending deliveries fail too)', async () => {
    const rx = await receiver((_req, res) => res.writeHead(410).end('gone'));
    const organizationId = await deliveryOrganization();
    const hook = await createWebhookRow({ organizationId, url: `${rx.url}/gone` });
    const later = await emit(organizationId, { later: true });
    const db = await getDb();
    await db
      .update(webhookDeliveries)
      .set({ nextAttemptAt: new Date(Date.now() + 3_600_000) })
      .where(eq(webhookDeliveries.id, later.deliveryIds[0]));
    const now = await emit(organizationId, { now: true });
    await worker();
    await waitFor('the attempt', async () => (await deliveryRow(now.deliveryIds[0])).status === 'failed');

    expect(await deliveryRow(now.deliveryIds[0])).toMatchObject({
      attempts: 1,
      lastStatusCode: 410,
      lastError: 'The endpoint answered 410 Gone.',
      nextAttemptAt: null,
      deliveredAt: null,
    });
    expect(await webhookRow(hook.id)).toMatchObject({
      enabled: false,
      disabledReason: 'The endpoint answered 410 Gone.',
      failingSince: null,
    });
    expect(await deliveryRow(later.deliveryIds[0])).toMatchObject({ status: 'failed', attempts: 0 });
    expect((await deliveryRow(later.deliveryIds[0])).lastError).toContain('disabled');
    expect(await openWarning(organizationId, hook.id)).toMatchObject({ resolvedAt: null });
    expect(rx.requests.map((r) => r.headers['webhook-id'])).toEqual([now.eventId]);
    // A disabled endpoint receives nothing new.
    expect((await emit(organizationId, { after: true })).deliveryIds).toEqual([]);
  });

  it('after 24 hours of failures the webhook is disabled and the warning webhook_failing opens (injected clock)', async () => {
    const rx = await receiver((_req, res) => res.writeHead(500).end('down'));
    const organizationId = await deliveryOrganization();
    const hook = await createWebhookRow({ organizationId, url: `${rx.url}/down` });
    const clock = testClock();
    const settings = attemptSettings({ now: clock.now });
    const { eventId, deliveryIds } = await emit(organizationId, { down: true });
    const db = await getDb();

    expect(await attemptDelivery(db, deliveryIds[0], settings)).toBe('retry');
    const first = await deliveryRow(deliveryIds[0]);
    const failingSince = (await webhookRow(hook.id)).failingSince!;
    expect(failingSince.getTime()).toBe(first.lastAttemptAt!.getTime());
    // Not due before its time.
    expect(await attemptDelivery(db, deliveryIds[0], settings)).toBe('not_due');

    clock.advance(23 * 3_600_000);
    expect(await attemptDelivery(db, deliveryIds[0], settings)).toBe('retry');
    expect(await deliveryRow(deliveryIds[0])).toMatchObject({ status: 'pending', attempts: 2, lastStatusCode: 500 });
    expect(await webhookRow(hook.id)).toMatchObject({ enabled: true, failingSince });
    expect(await openWarning(organizationId, hook.id)).toBeUndefined();

    clock.advance(2 * 3_600_000);
    expect(await attemptDelivery(db, deliveryIds[0], settings)).toBe('disabled');
    expect(await deliveryRow(deliveryIds[0])).toMatchObject({
      status: 'failed',
      attempts: 3,
      lastStatusCode: 500,
      lastError: 'The endpoint answered 500.',
      nextAttemptAt: null,
    });
    const disabled = await webhookRow(hook.id);
    expect(disabled.enabled).toBe(false);
    expect(disabled.disabledReason).toContain('failed for more than 24 hours');
    expect(disabled.disabledReason).toContain(failingSince.toISOString());
    const warning = await openWarning(organizationId, hook.id);
    expect(warning).toMatchObject({ kind: 'webhook_failing', subjectId: hook.id, resolvedAt: null });
    expect(warning.message).toContain(`${rx.url}/down`);
    expect(warning.details).toMatchObject({ webhookId: hook.id, lastStatusCode: 500 });

    expect(rx.requests).toHaveLength(3);
    for (const r of rx.requests) {
      expect(r.headers['webhook-id']).toBe(eventId);
      // Signed at the test clock's time (hours ahead, beyond the package's tolerance for now).
      expect(r.headers['webhook-signature']).toBe(expectedSignature(r, hook.secret));
    }
  });

  it('follows the default schedule (5 s, 1 min, 5 min, 30 min, 2 h, 6 h, 12 h, 12 h, up to 10% later) for over 24 hours', async () => {
    const rx = await receiver((_req, res) => res.writeHead(500).end());
    const organizationId = await deliveryOrganization();
    const hook = await createWebhookRow({ organizationId, url: `${rx.url}/schedule` });
    const clock = testClock();
    const settings = attemptSettings({ now: clock.now, jitter: 0.1, random: () => 0.5 });
    const { deliveryIds } = await emit(organizationId, { schedule: true });
    const db = await getDb();
    const delays: number[] = [];
    let outcome = await attemptDelivery(db, deliveryIds[0], settings);
    while (outcome === 'retry') {
      const row = await deliveryRow(deliveryIds[0]);
      delays.push(row.nextAttemptAt!.getTime() - row.lastAttemptAt!.getTime());
      clock.advance(row.nextAttemptAt!.getTime() - clock.now().getTime());
      outcome = await attemptDelivery(db, deliveryIds[0], settings);
    }
    const minute = 60_000;
    const hour = 60 * minute;
    const schedule = [5_000, minute, 5 * minute, 30 * minute, 2 * hour, 6 * hour, 12 * hour, 12 * hour];
    // Counted from the end of the failed attempt (its POST took a few milliseconds of the clock).
    expect(delays).toHaveLength(schedule.length);
    schedule.forEach((ms, i) => {
      expect(delays[i]).toBeGreaterThanOrEqual(ms * 1.05);
      expect(delays[i]).toBeLessThan(ms * 1.05 + 2_000);
    });
    expect(delays.reduce((a, b) => a + b, 0)).toBeGreaterThan(24 * hour);
    // The ninth attempt comes after 24 hours of failures: the webhook is disabled with it.
    expect(outcome).toBe('disabled');
    expect(await deliveryRow(deliveryIds[0])).toMatchObject({ status: 'failed', attempts: 9 });
    expect((await webhookRow(hook.id)).enabled).toBe(false);
    expect(rx.requests).toHaveLength(9);
  });

  it('fails a delivery whose schedule is exhausted, without disabling an endpoint failing for less than 24 hours', async () => {
    const rx = await receiver((_req, res) => res.writeHead(502).end());
    const organizationId = await deliveryOrganization();
    const hook = await createWebhookRow({ organizationId, url: `${rx.url}/bad` });
    await worker({ retryDelaysMs: [0, 0] });
    const { deliveryIds } = await emit(organizationId, { bad: true });
    await waitFor('the last attempt', async () => (await deliveryRow(deliveryIds[0])).status === 'failed');
    expect(await deliveryRow(deliveryIds[0])).toMatchObject({ attempts: 3, lastStatusCode: 502, nextAttemptAt: null });
    expect(await webhookRow(hook.id)).toMatchObject({ enabled: true, disabledReason: null });
    expect((await webhookRow(hook.id)).failingSince).toBeInstanceOf(Date);
    expect(await openWarning(organizationId, hook.id)).toBeUndefined();
    expect(rx.requests).toHaveLength(3);
  });

  it('two attempts at the same delivery at once: one posts, the other finds it claimed', async () => {
    const rx = await receiver();
    const organizationId = await deliveryOrganization();
    await createWebhookRow({ organizationId, url: `${rx.url}/once` });
    const { deliveryIds } = await emit(organizationId, { once: true });
    const db = await getDb();
    const outcomes = await Promise.all([
      attemptDelivery(db, deliveryIds[0], attemptSettings()),
      attemptDelivery(db, deliveryIds[0], attemptSettings()),
    ]);
    expect(outcomes.sort()).toEqual(['delivered', 'not_due']);
    expect(rx.requests).toHaveLength(1);
    expect(await deliveryRow(deliveryIds[0])).toMatchObject({ status: 'delivered', attempts: 1 });
  });

  it('two workers on one database post each delivery once', async () => {
    const rx = await receiver();
    const organizationId = await deliveryOrganization();
    await createWebhookRow({ organizationId, url: `${rx.url}/pair` });
    await worker({ concurrency: 4 });
    await worker({ concurrency: 4 });
    const events = [];
    for (let i = 0; i < 30; i++) events.push(await emit(organizationId, { i }));
    const ids = events.flatMap((e) => e.deliveryIds);
    await waitFor('every delivery', async () =>
      (await Promise.all(ids.map(deliveryRow))).every((row) => row.status === 'delivered'),
    );
    expect(rx.requests.map((r) => r.headers['webhook-id']).sort()).toEqual(events.map((e) => e.eventId).sort());
    for (const row of await Promise.all(ids.map(deliveryRow))) expect(row.attempts).toBe(1);
  });

  it('a webhook disabled while its attempt is in flight stays disabled: the late 2xx is not recorded', async () => {
    const rx = await receiver(hold);
    const organizationId = await deliveryOrganization();
    const hook = await createWebhookRow({ organizationId, url: `${rx.url}/slow` });
    const { deliveryIds } = await emit(organizationId, { slow: true });
    const db = await getDb();
    const outcome = attemptDelivery(db, deliveryIds[0], attemptSettings());
    await waitFor('the request', () => held.length === 1);
    await disableWebhook({ db }, hook.id, null);
    held[0].writeHead(200).end('late');
    expect(await outcome).toBe('stale');
    expect(await deliveryRow(deliveryIds[0])).toMatchObject({ status: 'failed', deliveredAt: null, attempts: 1 });
    expect(await webhookRow(hook.id)).toMatchObject({ enabled: false, disabledReason: null });
  });

  it('a delivery of a disabled webhook is failed, not sent', async () => {
    const rx = await receiver();
    const organizationId = await deliveryOrganization();
    const hook = await createWebhookRow({ organizationId, url: `${rx.url}/off` });
    const { deliveryIds } = await emit(organizationId, { off: true });
    const db = await getDb();
    // Disabled without failing its deliveries (as if written in the same instant).
    await db.execute(sql`update webhooks set enabled = false where id = ${hook.id}`);
    expect(await attemptDelivery(db, deliveryIds[0], attemptSettings())).toBe('not_due');
    expect(await deliveryRow(deliveryIds[0])).toMatchObject({
      status: 'failed',
      attempts: 0,
      lastError: 'Not sent: the webhook is disabled.',
    });
    expect(rx.requests).toHaveLength(0);
  });

  it('stopping the worker lets the attempt in flight finish', async () => {
    const rx = await receiver(hold);
    const organizationId = await deliveryOrganization();
    await createWebhookRow({ organizationId, url: `${rx.url}/finish` });
    const w = await startDeliveryWorker();
    const { deliveryIds } = await emit(organizationId, { finish: true });
    await waitFor('the request', () => held.length === 1);
    const stopped = w.stop();
    held[0].writeHead(200).end('done');
    await stopped;
    expect(await deliveryRow(deliveryIds[0])).toMatchObject({ status: 'delivered', attempts: 1 });
  });
});

describe('webhook targets at delivery time (SSRF)', () => {
  const publicAddress = '93.184.216.34';

  it('refuses a loopback target without WEBHOOK_ALLOW_PRIVATE, and http:// without WEBHOOK_ALLOW_HTTP', async () => {
    const rx = await receiver();
    const organizationId = await deliveryOrganization();
    const hook = await createWebhookRow({ organizationId, url: `${rx.url}/private` });
    const { deliveryIds } = await emit(organizationId, { ssrf: 1 });
    const db = await getDb();
    const noPrivate = attemptSettings({ policy: () => ({ allowHttp: true, allowPrivate: false }) });
    expect(await attemptDelivery(db, deliveryIds[0], noPrivate)).toBe('retry');
    const row = await deliveryRow(deliveryIds[0]);
    expect(row).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: null });
    expect(row.lastError).toMatch(/^Not sent: .*127\.0\.0\.1, a loopback address/);
    expect((await webhookRow(hook.id)).failingSince).toBeInstanceOf(Date);

    await db.update(webhookDeliveries).set({ nextAttemptAt: new Date() }).where(eq(webhookDeliveries.id, row.id));
    const noHttp = attemptSettings({ policy: () => ({ allowHttp: false, allowPrivate: true }) });
    expect(await attemptDelivery(db, deliveryIds[0], noHttp)).toBe('retry');
    expect((await deliveryRow(deliveryIds[0])).lastError).toContain('Use an https:// URL');
    expect(rx.requests).toHaveLength(0);
  });

  it('checks DNS again at delivery: a name that now resolves to a private address is refused (rebinding)', async () => {
    const rx = await receiver();
    const organizationId = await deliveryOrganization();
    const url = `http://hooks.rebinding.test:${rx.port}/rebind`;
    let answer = publicAddress;
    const resolve: Resolver = async () => [{ address: answer, family: 4 }];
    const policy = () => ({ allowHttp: true, allowPrivate: false });
    // When the endpoint is saved, the name is public.
    await expect(resolveTarget(new URL(url), policy(), resolve)).resolves.toEqual([
      { address: publicAddress, family: 4 },
    ]);
    await createWebhookRow({ organizationId, url });
    const { deliveryIds } = await emit(organizationId, { rebind: true });
    answer = '127.0.0.1';
    const db = await getDb();
    expect(await attemptDelivery(db, deliveryIds[0], attemptSettings({ policy, resolve }))).toBe('retry');
    expect((await deliveryRow(deliveryIds[0])).lastError).toContain(
      'The host "hooks.rebinding.test" resolves to 127.0.0.1, a loopback address',
    );
    expect(rx.requests).toHaveLength(0);

    // One private answer among several refuses the name too.
    await db
      .update(webhookDeliveries)
      .set({ nextAttemptAt: new Date() })
      .where(eq(webhookDeliveries.id, deliveryIds[0]));
    const mixed: Resolver = async () => [
      { address: publicAddress, family: 4 },
      { address: '10.0.0.7', family: 4 },
    ];
    expect(await attemptDelivery(db, deliveryIds[0], attemptSettings({ policy, resolve: mixed }))).toBe('retry');
    expect((await deliveryRow(deliveryIds[0])).lastError).toContain('10.0.0.7, a private address');
    expect(rx.requests).toHaveLength(0);
  });

  it('a name that resolves nowhere is not sent, and the attempt says why (it was accepted when saved)', async () => {
    const rx = await receiver();
    const organizationId = await deliveryOrganization();
    await createWebhookRow({ organizationId, url: `http://hooks.nowhere.test:${rx.port}/gone` });
    const { deliveryIds } = await emit(organizationId, { nowhere: true });
    const resolve: Resolver = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND hooks.nowhere.test'), { code: 'ENOTFOUND' });
    };
    const policy = () => ({ allowHttp: true, allowPrivate: false });
    const db = await getDb();
    expect(await attemptDelivery(db, deliveryIds[0], attemptSettings({ policy, resolve }))).toBe('retry');
    expect((await deliveryRow(deliveryIds[0])).lastError).toBe(
      'Not sent: The host "hooks.nowhere.test" could not be resolved.',
    );
    expect(rx.requests).toHaveLength(0);
  });

  it('connects to the vetted address only, with the host name kept in the request', async () => {
    const rx = await receiver();
    const organizationId = await deliveryOrganization();
    // The name exists nowhere but in the injected resolver: the connection uses the vetted address.
    const hook = await createWebhookRow({ organizationId, url: `http://hooks.pinned.test:${rx.port}/pinned` });
    const { deliveryIds } = await emit(organizationId, { pinned: true });
    const resolve: Resolver = async (host) =>
      host === 'hooks.pinned.test' ? [{ address: '127.0.0.1', family: 4 }] : [];
    const db = await getDb();
    expect(await attemptDelivery(db, deliveryIds[0], attemptSettings({ resolve }))).toBe('delivered');
    expect(rx.requests).toHaveLength(1);
    expect(rx.requests[0].headers.host).toBe(`hooks.pinned.test:${rx.port}`);
    verified(rx.requests[0], hook.secret);
  });
});
