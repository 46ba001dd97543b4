import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTeam } from '../helpers/api';
import { saveVersion } from '../helpers/evals';
import { isolatedDatabase } from '../helpers/evals-engine';
import { activePrompt } from '../helpers/prompts';
import {
  startDeliveryWorker,
  startReceiver,
  stopDeliveryBoss,
  verified,
  waitFor,
  type Receiver,
} from '../helpers/webhook-delivery';

// Endpoints made through the management API, events from real changes, delivered by the worker to a
// local receiver and verified with the secret the API showed once (API.md "Webhooks").

// Local targets (http://127.0.0.1): both settings on, before any config() read.
process.env.WEBHOOK_ALLOW_HTTP = 'true';
process.env.WEBHOOK_ALLOW_PRIVATE = 'true';

let dropDatabase: () => Promise<void> = async () => {};
const receivers: Receiver[] = [];
let worker: { stop(): Promise<void> } | undefined;

beforeAll(async () => {
  dropDatabase = await isolatedDatabase();
  worker = await startDeliveryWorker();
});

afterAll(async () => {
  await worker?.stop();
  await stopDeliveryBoss();
  for (const r of receivers) await r.close();
  await dropDatabase();
});

async function receiver(answer?: Receiver['answer']) {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
}

describe('webhooks end to end (management API → worker → receiver)', () => {
  it('sends the test event, a new version and a redelivery, signed with the secret shown at creation', async () => {
    const rx = await receiver();
    const { org, admin, editor } = await newTeam();
    const hooks = `/organizations/${org.id}/webhooks`;
    const created = await admin.call('POST', hooks, {
      body: { url: `${rx.url}/e2e`, events: ['prompt.version.created'] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { webhook, secret } = created.body as { webhook: { id: string }; secret: string };
    const deliveries = `${hooks}/${webhook.id}/deliveries`;
    const listed = async () => (await admin.call('GET', deliveries)).body.items as any[];

    const test = await admin.call('POST', `${hooks}/${webhook.id}/test`);
    expect(test.status).toBe(202);
    await waitFor('the test event', async () => (await listed()).some((d) => d.status === 'delivered'));
    const testEvent = verified(rx.requests[0], secret) as { type: string; data: unknown };
    expect(testEvent).toMatchObject({ type: 'webhook.test', organizationId: org.id, data: { webhookId: webhook.id } });

    const { prompt, base } = await activePrompt(editor, org.id);
    const v2 = await saveVersion(editor, org.id, prompt.id, 'A second version.');
    await waitFor('the version events', () =>
      rx.requests.some((r) => (JSON.parse(r.body) as { data: { id: string } }).data.id === v2.id),
    );
    const versionRequest = rx.requests.find((r) => JSON.parse(r.body).data.id === v2.id)!;
    expect(verified(versionRequest, secret)).toEqual({
      type: 'prompt.version.created',
      timestamp: expect.any(String),
      organizationId: org.id,
      data: (await editor.call('GET', `${base}/versions/${v2.number}`)).body,
    });

    const items = await listed();
    const original = items.find((d) => d.eventId === versionRequest.headers['webhook-id'])!;
    expect(original).toMatchObject({
      type: 'prompt.version.created',
      status: 'delivered',
      attempts: 1,
      lastStatusCode: 200,
      lastError: null,
      nextAttemptAt: null,
    });
    const again = await admin.call('POST', `${deliveries}/${original.id}/redeliver`);
    expect(again.status).toBe(202);
    await waitFor(
      'the redelivery',
      async () => (await listed()).find((d) => d.id === again.body.deliveryId)?.status === 'delivered',
    );
    const copies = rx.requests.filter((r) => r.headers['webhook-id'] === original.eventId);
    expect(copies).toHaveLength(2);
    expect(copies[1].body).toBe(copies[0].body);
    for (const r of rx.requests) verified(r, secret);
  });

  it('a 410 disables the endpoint at once; its webhook_failing warning reaches a warning.opened subscriber', async () => {
    const gone = await receiver((_req, res) => res.writeHead(410).end());
    const watcher = await receiver();
    const { org, admin } = await newTeam();
    const hooks = `/organizations/${org.id}/webhooks`;
    const target = (
      await admin.call('POST', hooks, { body: { url: `${gone.url}/gone`, events: ['prompt.version.created'] } })
    ).body as { webhook: { id: string } };
    const watching = (
      await admin.call('POST', hooks, { body: { url: `${watcher.url}/warnings`, events: ['warning.opened'] } })
    ).body as { secret: string };

    expect((await admin.call('POST', `${hooks}/${target.webhook.id}/test`)).status).toBe(202);
    await waitFor('the warning event', () => watcher.requests.length > 0);
    const event = verified(watcher.requests[0], watching.secret) as { type: string; data: any };
    expect(event.type).toBe('warning.opened');
    expect(event.data).toMatchObject({ kind: 'webhook_failing', subjectId: target.webhook.id, resolvedAt: null });

    const read = await admin.call('GET', `${hooks}/${target.webhook.id}`);
    expect(read.body).toMatchObject({ enabled: false, disabledReason: 'The endpoint answered 410 Gone.' });
    const [delivery] = (await admin.call('GET', `${hooks}/${target.webhook.id}/deliveries`)).body.items;
    expect(delivery).toMatchObject({ status: 'failed', attempts: 1, lastStatusCode: 410, nextAttemptAt: null });
    const warnings = await admin.call('GET', `/organizations/${org.id}/warnings?kind=webhook_failing`);
    expect(warnings.body.items).toEqual([expect.objectContaining({ subjectId: target.webhook.id, resolvedAt: null })]);

    // Turning it back on resolves the warning.
    const enabled = await admin.call('PATCH', `${hooks}/${target.webhook.id}`, { body: { enabled: true } });
    expect(enabled.body).toMatchObject({ enabled: true, disabledReason: null });
    const after = await admin.call('GET', `/organizations/${org.id}/warnings?kind=webhook_failing&state=all`);
    expect(after.body.items).toEqual([
      expect.objectContaining({ subjectId: target.webhook.id, resolvedAt: expect.any(String) }),
    ]);
  });
});
