import { describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { auditLog, webhookDeliveries, webhookEvents, webhooks } from '@/db/schema';
import { unseal } from '@/server/credentials/sealed';
import { disableWebhook } from '@/server/webhooks/disable';
import { emitEvent } from '@/server/webhooks/outbox';
import { newOrganization, newTeam, newUser, type TestUser } from '../helpers/api';
import { setReadOnly } from '../helpers/evals';

// The webhook endpoints' management API (API.md "Webhooks"), with the default settings: https://
// only and no private targets (tests/integration/webhooks.events.test.ts runs with both allowed).

// A public address literal: no DNS lookup, and allowed without WEBHOOK_ALLOW_PRIVATE.
const publicUrl = 'https://93.184.216.34/hooks/promptloop';
const body = { url: publicUrl, events: ['prompt.version.created', 'evaluation.completed'] };
const hooks = (orgId: string) => `/organizations/${orgId}/webhooks`;
const idemKey = () => `whk-${Math.random().toString(36).slice(2)}-${Date.now()}`;

function expectError(result: { status: number; body: any }, status: number, code: string) {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.body.error.code).toBe(code);
  expect(result.body.error.details).toBeTypeOf('object');
}

async function create(admin: TestUser, orgId: string, input: Record<string, unknown> = body) {
  const created = await admin.call('POST', hooks(orgId), { body: input });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body as { webhook: any; secret: string };
}

async function rowsOf(organizationId: string) {
  const db = await getDb();
  return {
    webhooks: await db.select().from(webhooks).where(eq(webhooks.organizationId, organizationId)),
    deliveries: await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.organizationId, organizationId)),
    events: await db.select().from(webhookEvents).where(eq(webhookEvents.organizationId, organizationId)),
  };
}

async function auditOps(organizationId: string) {
  const rows = await (
    await getDb()
  )
    .select()
    .from(auditLog)
    .where(and(eq(auditLog.organizationId, organizationId), eq(auditLog.targetType, 'webhook')));
  return rows.map((r) => r.operation).sort();
}

// An event the endpoint subscribes to, written the way a change writes it (at a given time, so
// that lists have a known order).
async function emitted(organizationId: string, data: unknown = { n: 1 }, at = new Date()) {
  const [deliveryId] = await emitEvent(
    { db: await getDb() },
    { organizationId, type: 'evaluation.completed', data, at },
  );
  return deliveryId;
}
const secondsAgo = (s: number) => new Date(Date.now() - s * 1000);

describe('webhooks: create, list, get', () => {
  it('creates an endpoint with a whsec_ secret shown once and stored sealed', async () => {
    const { org, admin } = await newTeam();
    const created = await admin.call('POST', hooks(org.id), { body: { ...body, description: 'Slack relay' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { webhook, secret } = created.body;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(webhook).toEqual({
      id: expect.stringMatching(/^whk_[0-9a-z]{26}$/),
      url: publicUrl,
      events: body.events,
      enabled: true,
      description: 'Slack relay',
      createdAt: expect.any(String),
      disabledReason: null,
    });
    expect(new Date(webhook.createdAt).toISOString()).toBe(webhook.createdAt);

    const [row] = (await rowsOf(org.id)).webhooks;
    expect(unseal('webhook-secrets', row.secretSealed)).toBe(secret);
    expect(JSON.stringify(row)).not.toContain(secret.slice(6));
    expect(row.createdBy).toBe(admin.id);

    expect((await admin.call('GET', `${hooks(org.id)}/${webhook.id}`)).body).toEqual(webhook);
    const listed = await admin.call('GET', hooks(org.id));
    expect(listed.body).toEqual({ items: [webhook], nextCursor: null });
    expect(JSON.stringify(listed.body)).not.toContain(secret);
    expect(await auditOps(org.id)).toEqual(['webhook.create']);
  });

  it('lists newest first, paged', async () => {
    const { org, admin } = await newTeam();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await create(admin, org.id)).webhook.id);
    const first = await admin.call('GET', hooks(org.id), { query: 'limit=2' });
    expect(first.body.items.map((w: any) => w.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await admin.call('GET', hooks(org.id), { query: `limit=2&cursor=${first.body.nextCursor}` });
    expect(second.body).toEqual({ items: [expect.objectContaining({ id: ids[0] })], nextCursor: null });
    expectError(await admin.call('GET', hooks(org.id), { query: 'cursor=nonsense' }), 400, 'invalid_request');
  });

  it('an idempotent replay of create is 409 secret_unavailable with details.webhook, and no second endpoint', async () => {
    const { org, admin } = await newTeam();
    const key = idemKey();
    const first = await admin.call('POST', hooks(org.id), { body, headers: { 'idempotency-key': key } });
    expect(first.status).toBe(201);
    const replay = await admin.call('POST', hooks(org.id), { body, headers: { 'idempotency-key': key } });
    expectError(replay, 409, 'secret_unavailable');
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body.error.details).toEqual({ webhook: first.body.webhook });
    expect(JSON.stringify(replay.body)).not.toContain(first.body.secret);
    expect((await rowsOf(org.id)).webhooks).toHaveLength(1);
    expect(await auditOps(org.id)).toEqual(['webhook.create']);

    // Changed since: the replay shows the endpoint as it is now; deleted since: as it was created.
    const id = first.body.webhook.id;
    const disabled = await admin.call('PATCH', `${hooks(org.id)}/${id}`, { body: { enabled: false } });
    expect(disabled.status, JSON.stringify(disabled.body)).toBe(200);
    const later = await admin.call('POST', hooks(org.id), { body, headers: { 'idempotency-key': key } });
    expectError(later, 409, 'secret_unavailable');
    expect(later.body.error.details).toEqual({ webhook: disabled.body });
    expect((await admin.call('DELETE', `${hooks(org.id)}/${id}`)).status).toBe(204);
    const gone = await admin.call('POST', hooks(org.id), { body, headers: { 'idempotency-key': key } });
    expectError(gone, 409, 'secret_unavailable');
    expect(gone.body.error.details).toEqual({ webhook: first.body.webhook });
  });

  it.each([
    ['missing url', { events: body.events }, 'url'],
    ['empty url', { ...body, url: '' }, 'url'],
    ['url over 2,000 characters', { ...body, url: `https://93.184.216.34/${'a'.repeat(2000)}` }, 'url'],
    ['no events', { ...body, events: [] }, 'events'],
    ['11 events', { ...body, events: Array(11).fill('warning.opened') }, 'events'],
    ['a repeated event', { ...body, events: ['warning.opened', 'warning.opened'] }, 'events'],
    ['webhook.test (not subscribable)', { ...body, events: ['webhook.test'] }, 'events.0'],
    ['an unknown event', { ...body, events: ['prompt.deleted'] }, 'events.0'],
    ['description over 500 characters', { ...body, description: 'd'.repeat(501) }, 'description'],
    ['an empty description', { ...body, description: '' }, 'description'],
    ['an unknown field', { ...body, secret: 'whsec_mine' }, 'secret'],
  ])('%s → 400 invalid_request and nothing created', async (_label, input, path) => {
    const { org, admin } = await newTeam();
    const result = await admin.call('POST', hooks(org.id), { body: input });
    expectError(result, 400, 'invalid_request');
    expect(result.body.error.details.issues.map((i: any) => i.path)).toContain(path);
    expect((await rowsOf(org.id)).webhooks).toHaveLength(0);
    expect(await auditOps(org.id)).toEqual([]);
  });

  it('accepts 2,000-character urls, 500-character descriptions and all five event types', async () => {
    const { org, admin } = await newTeam();
    const url = `https://93.184.216.34/${'a'.repeat(2000 - 'https://93.184.216.34/'.length)}`;
    const events = [
      'prompt.version.created',
      'prompt.label.moved',
      'evaluation.completed',
      'evaluation.failed',
      'warning.opened',
    ];
    const { webhook } = await create(admin, org.id, { url, events, description: 'd'.repeat(500) });
    expect(webhook).toMatchObject({ url, events, description: 'd'.repeat(500) });
  });

  it.each([
    [
      'http:// without WEBHOOK_ALLOW_HTTP',
      'http://93.184.216.34/hook',
      /^Use an https:\/\/ URL \(http:\/\/ is not allowed/,
    ],
    ['another scheme', 'ftp://93.184.216.34/hook', /^Use an https:\/\/ URL\.$/],
    ['a WebSocket URL', 'ws://93.184.216.34/hook', /^Use an https:\/\/ URL\.$/],
    ['not a URL', 'example.com/hook', /absolute URL/],
    ['no host after the scheme (https:///x would post to host "x")', 'https:///hook', /with a host after "\/\/"/],
    ['one slash after the scheme', 'https:/93.184.216.34/hook', /with a host after "\/\/"/],
    ['a backslash for the slashes', 'https:\\\\93.184.216.34/hook', /with a host after "\/\/"/],
    ['a raw space', 'https://93.184.216.34/my hook', /spaces or control characters/],
    ['a newline', 'https://93.184.216.34/hook\nX-Injected: 1', /spaces or control characters/],
    ['credentials in the URL', 'https://user:pw@93.184.216.34/hook', /user name or password/],
    ['localhost (it resolves to a loopback address)', 'https://localhost/hook', /loopback/],
    ['127.0.0.1', 'https://127.0.0.1:8443/hook', /loopback/],
    ['a 10.x address', 'https://10.1.2.3/hook', /private/],
    ['a 192.168.x address', 'https://192.168.0.10/hook', /private/],
    ['[::1]', 'https://[::1]/hook', /loopback/],
    ['an IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/hook', /loopback/],
    ['the metadata address 169.254.169.254', 'https://169.254.169.254/latest/meta-data', /link-local/],
    ['0.0.0.0', 'https://0.0.0.0/hook', /unspecified/],
    ['a name under localhost (RFC 6761), resolved or not', 'https://hooks.localhost/x', /loopback/],
    ['localhost with a trailing dot', 'https://LOCALHOST./x', /loopback/],
    ['a NAT64 loopback', 'https://[64:ff9b::7f00:1]/x', /loopback/],
    ['a NAT64 private address', 'https://[64:ff9b::a00:1]/x', /private/],
    ['a 6to4 loopback', 'https://[2002:7f00:1::]/x', /loopback/],
    ['a 6to4 private address', 'https://[2002:c0a8:101::1]/x', /private/],
    ['the benchmarking range', 'https://198.18.0.1/x', /reserved/],
    ['port 0', 'https://93.184.216.34:0/x', /Port 0/],
  ])('refuses %s with 400 invalid_request on url, at create and at update', async (_label, url, message) => {
    const { org, admin } = await newTeam();
    const created = await admin.call('POST', hooks(org.id), { body: { ...body, url } });
    expectError(created, 400, 'invalid_request');
    expect(created.body.error.details.issues).toEqual([{ path: 'url', message: expect.stringMatching(message) }]);
    expect((await rowsOf(org.id)).webhooks).toHaveLength(0);

    const { webhook } = await create(admin, org.id);
    const updated = await admin.call('PATCH', `${hooks(org.id)}/${webhook.id}`, { body: { url } });
    expectError(updated, 400, 'invalid_request');
    expect(updated.body.error.details.issues).toEqual([{ path: 'url', message: expect.stringMatching(message) }]);
    expect((await rowsOf(org.id)).webhooks[0].url).toBe(publicUrl);
    expect(await auditOps(org.id)).toEqual(['webhook.create']);
  });

  it('a url is stored trimmed; events given as one string are told only that a list is expected', async () => {
    const { org, admin } = await newTeam();
    const { webhook } = await create(admin, org.id, { ...body, url: `  ${publicUrl}\n` });
    expect(webhook.url).toBe(publicUrl);
    expect((await rowsOf(org.id)).webhooks[0].url).toBe(publicUrl);

    const blank = await admin.call('POST', hooks(org.id), { body: { ...body, url: '   ' } });
    expectError(blank, 400, 'invalid_request');
    const single = await admin.call('POST', hooks(org.id), { body: { ...body, events: 'prompt.version.created' } });
    expectError(single, 400, 'invalid_request');
    expect(single.body.error.details.issues).toEqual([
      { path: 'events', message: expect.stringMatching(/expected array/) },
    ]);
    expect((await rowsOf(org.id)).webhooks).toHaveLength(1);
  });

  it('a host that does not resolve (yet) is accepted: only an address can be refused, and each delivery looks again', async () => {
    const { org, admin } = await newTeam();
    const url = 'https://no-such-host.invalid/hook';
    const result = await admin.call('POST', hooks(org.id), { body: { ...body, url } });
    expect(result.status).toBe(201);
    expect((await rowsOf(org.id)).webhooks.map((w) => w.url)).toEqual([url]);
  });

  it('unknown, malformed and other organizations’ ids are 404 not_found', async () => {
    const { org, admin } = await newTeam();
    const other = await newTeam();
    const theirs = (await create(other.admin, other.org.id)).webhook;
    for (const id of ['whk_00000000000000000000000000', 'nonsense', theirs.id]) {
      expectError(await admin.call('GET', `${hooks(org.id)}/${id}`), 404, 'not_found');
      expectError(await admin.call('PATCH', `${hooks(org.id)}/${id}`, { body: { enabled: false } }), 404, 'not_found');
      expectError(await admin.call('DELETE', `${hooks(org.id)}/${id}`), 404, 'not_found');
      expectError(await admin.call('POST', `${hooks(org.id)}/${id}/test`), 404, 'not_found');
      expectError(await admin.call('GET', `${hooks(org.id)}/${id}/deliveries`), 404, 'not_found');
    }
    // Their organization is not ours: 404 for the organization itself.
    expectError(await admin.call('GET', hooks(other.org.id)), 404, 'not_found');
    expectError(await admin.call('GET', `${hooks(other.org.id)}/${theirs.id}`), 404, 'not_found');
    const theirRows = await rowsOf(other.org.id);
    expect(theirRows.webhooks).toHaveLength(1);
    expect(theirRows.webhooks[0].enabled).toBe(true);
    expect(theirRows.deliveries).toHaveLength(0);
  });
});

describe('webhooks: update', () => {
  it('changes url, events and description; null clears the description; equal values change nothing', async () => {
    const { org, admin } = await newTeam();
    const { webhook } = await create(admin, org.id, { ...body, description: 'old' });
    const path = `${hooks(org.id)}/${webhook.id}`;
    const updated = await admin.call('PATCH', path, {
      body: { url: 'https://93.184.216.35/v2', events: ['warning.opened'], description: null },
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body).toEqual({
      ...webhook,
      url: 'https://93.184.216.35/v2',
      events: ['warning.opened'],
      description: null,
    });
    expect((await admin.call('GET', path)).body).toEqual(updated.body);
    const same = await admin.call('PATCH', path, { body: { url: 'https://93.184.216.35/v2', enabled: true } });
    expect(same.body).toEqual(updated.body);
    // An empty description is refused (null clears it) and changes nothing.
    const empty = await admin.call('PATCH', path, { body: { description: '' } });
    expectError(empty, 400, 'invalid_request');
    expect(empty.body.error.details.issues).toEqual([expect.objectContaining({ path: 'description' })]);
    expect((await admin.call('GET', path)).body).toEqual(updated.body);
    expect(await auditOps(org.id)).toEqual(['webhook.create', 'webhook.update']);
  });

  it('disabling fails pending deliveries and stops new ones; re-enabling clears disabledReason and sends nothing missed', async () => {
    const { org, admin } = await newTeam();
    const { webhook } = await create(admin, org.id);
    const path = `${hooks(org.id)}/${webhook.id}`;
    const pending = await emitted(org.id);

    const disabled = await admin.call('PATCH', path, { body: { enabled: false } });
    expect(disabled.status).toBe(200);
    expect(disabled.body).toMatchObject({ enabled: false, disabledReason: null });
    let rows = await rowsOf(org.id);
    expect(rows.deliveries).toEqual([
      expect.objectContaining({ id: pending, status: 'failed', nextAttemptAt: null, lastError: expect.any(String) }),
    ]);
    // While disabled, events find no endpoint.
    expect(await emitted(org.id)).toBeUndefined();

    // The worker disables with a reason (a 410, or 24 hours of failures); an admin re-enables.
    const db = await getDb();
    await db.update(webhooks).set({ enabled: true }).where(eq(webhooks.id, webhook.id));
    await disableWebhook({ db }, webhook.id, 'The endpoint answered 410 Gone.');
    await db.update(webhooks).set({ failingSince: new Date() }).where(eq(webhooks.id, webhook.id));
    expect((await admin.call('GET', path)).body.disabledReason).toBe('The endpoint answered 410 Gone.');
    const enabled = await admin.call('PATCH', path, { body: { enabled: true } });
    expect(enabled.body).toEqual({ ...webhook, enabled: true, disabledReason: null });
    rows = await rowsOf(org.id);
    expect(rows.webhooks[0].failingSince).toBeNull();
    expect(rows.deliveries.map((d) => d.status)).toEqual(['failed']);
    expect(await auditOps(org.id)).toEqual(['webhook.create', 'webhook.update', 'webhook.update']);
  });

  it.each([
    ['an unknown field', { secret: 'x' }, 'secret'],
    ['enabled not a boolean', { enabled: 'yes' }, 'enabled'],
    ['no events', { events: [] }, 'events'],
    ['url not a string', { url: 3 }, 'url'],
  ])('%s → 400 invalid_request, nothing changed', async (_label, input, path) => {
    const { org, admin } = await newTeam();
    const { webhook } = await create(admin, org.id);
    const result = await admin.call('PATCH', `${hooks(org.id)}/${webhook.id}`, { body: input });
    expectError(result, 400, 'invalid_request');
    expect(result.body.error.details.issues.map((i: any) => i.path)).toContain(path);
    expect((await admin.call('GET', `${hooks(org.id)}/${webhook.id}`)).body).toEqual(webhook);
  });
});

describe('webhooks: delete', () => {
  it('204; the endpoint, its deliveries and events nobody else needs are gone', async () => {
    const { org, admin } = await newTeam();
    const { webhook } = await create(admin, org.id);
    const kept = (await create(admin, org.id)).webhook;
    await emitted(org.id); // to both
    const db = await getDb();
    const [own] = await emitEvent({ db }, { organizationId: org.id, type: 'webhook.test', data: {} }, [webhook.id]);
    expect(own).toBeDefined();

    const deleted = await admin.call('DELETE', `${hooks(org.id)}/${webhook.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeNull();
    const rows = await rowsOf(org.id);
    expect(rows.webhooks.map((w) => w.id)).toEqual([kept.id]);
    expect(rows.deliveries.map((d) => d.webhookId)).toEqual([kept.id]);
    // The shared event stays for the other endpoint; the test event went with its only delivery.
    expect(rows.events.map((e) => e.type)).toEqual(['evaluation.completed']);
    expectError(await admin.call('GET', `${hooks(org.id)}/${webhook.id}`), 404, 'not_found');
    expectError(await admin.call('DELETE', `${hooks(org.id)}/${webhook.id}`), 404, 'not_found');
    expect(await auditOps(org.id)).toEqual(['webhook.create', 'webhook.create', 'webhook.delete']);
  });
});

describe('webhooks: test, deliveries, redeliver', () => {
  it('POST …/test → 202 { deliveryId }: a pending webhook.test delivery whose data is { webhookId }', async () => {
    const { org, admin } = await newTeam();
    const { webhook } = await create(admin, org.id, { url: publicUrl, events: ['warning.opened'] });
    const tested = await admin.call('POST', `${hooks(org.id)}/${webhook.id}/test`);
    expect(tested.status, JSON.stringify(tested.body)).toBe(202);
    expect(tested.body).toEqual({ deliveryId: expect.stringMatching(/^whd_[0-9a-z]{26}$/) });

    const detail = await admin.call('GET', `${hooks(org.id)}/${webhook.id}/deliveries/${tested.body.deliveryId}`);
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({
      id: tested.body.deliveryId,
      eventId: expect.stringMatching(/^evt_[0-9a-z]{26}$/),
      type: 'webhook.test',
      status: 'pending',
      attempts: 0,
      lastStatusCode: null,
      lastError: null,
      deliveredAt: null,
      lastAttemptAt: null,
      responseExcerpt: null,
    });
    const payload = JSON.parse(detail.body.payload);
    expect(payload).toEqual({
      type: 'webhook.test',
      timestamp: expect.any(String),
      organizationId: org.id,
      data: { webhookId: webhook.id },
    });
    expect(new Date(payload.timestamp).toISOString()).toBe(payload.timestamp);
    expect(await auditOps(org.id)).toEqual(['webhook.create', 'webhook.test']);
  });

  it('test and redeliver on a disabled endpoint → 409 invalid_state; nothing written', async () => {
    const { org, admin } = await newTeam();
    const { webhook } = await create(admin, org.id);
    const delivery = await emitted(org.id);
    await admin.call('PATCH', `${hooks(org.id)}/${webhook.id}`, { body: { enabled: false } });
    const before = await rowsOf(org.id);
    const tested = await admin.call('POST', `${hooks(org.id)}/${webhook.id}/test`);
    expectError(tested, 409, 'invalid_state');
    expect(tested.body.error.details.state).toBe('disabled');
    expectError(
      await admin.call('POST', `${hooks(org.id)}/${webhook.id}/deliveries/${delivery}/redeliver`),
      409,
      'invalid_state',
    );
    expect(await rowsOf(org.id)).toEqual(before);
    expect(await auditOps(org.id)).toEqual(['webhook.create', 'webhook.update']);
  });

  it('lists deliveries newest first, paged; a delivered one has no nextAttemptAt or lastError', async () => {
    const { org, admin } = await newTeam();
    const { webhook } = await create(admin, org.id);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await emitted(org.id, { n: i }, secondsAgo(10 - i)));
    const db = await getDb();
    const deliveredAt = new Date();
    await db
      .update(webhookDeliveries)
      .set({
        status: 'delivered',
        attempts: 2,
        lastStatusCode: 204,
        lastError: 'first attempt: 503',
        deliveredAt,
        lastAttemptAt: deliveredAt,
        lastResponseExcerpt: 'ok',
      })
      .where(eq(webhookDeliveries.id, ids[0]));

    const path = `${hooks(org.id)}/${webhook.id}/deliveries`;
    const first = await admin.call('GET', path, { query: 'limit=2' });
    expect(first.status).toBe(200);
    expect(first.body.items.map((d: any) => d.id)).toEqual([ids[2], ids[1]]);
    const second = await admin.call('GET', path, { query: `limit=2&cursor=${first.body.nextCursor}` });
    expect(second.body.nextCursor).toBeNull();
    expect(second.body.items).toEqual([
      {
        id: ids[0],
        eventId: expect.stringMatching(/^evt_/),
        type: 'evaluation.completed',
        status: 'delivered',
        attempts: 2,
        lastStatusCode: 204,
        lastError: null,
        nextAttemptAt: null,
        deliveredAt: deliveredAt.toISOString(),
        createdAt: expect.any(String),
        lastAttemptAt: deliveredAt.toISOString(),
      },
    ]);
    expect(Object.keys(first.body.items[0]).sort()).toEqual(Object.keys(second.body.items[0]).sort());
    expect(first.body.items[0]).toMatchObject({ status: 'pending', nextAttemptAt: expect.any(String) });
    const detail = await admin.call('GET', `${path}/${ids[0]}`);
    expect(detail.body).toEqual({
      ...second.body.items[0],
      payload: expect.any(String),
      responseExcerpt: 'ok',
    });
    expect(JSON.parse(detail.body.payload).data).toEqual({ n: 0 });
    expectError(await admin.call('GET', path, { query: 'cursor=bad' }), 400, 'invalid_request');
    expectError(await admin.call('GET', path, { query: 'limit=0' }), 400, 'invalid_request');
  });

  it('redeliver → 202 with a new pending delivery of the same event, due now; the old one keeps its history', async () => {
    const { org, admin } = await newTeam();
    const { webhook } = await create(admin, org.id);
    const original = await emitted(org.id, { n: 1 }, secondsAgo(60));
    const db = await getDb();
    await db
      .update(webhookDeliveries)
      .set({ status: 'failed', attempts: 8, lastStatusCode: 500, lastError: 'HTTP 500', nextAttemptAt: null })
      .where(eq(webhookDeliveries.id, original));
    const path = `${hooks(org.id)}/${webhook.id}/deliveries`;
    const redelivered = await admin.call('POST', `${path}/${original}/redeliver`);
    expect(redelivered.status, JSON.stringify(redelivered.body)).toBe(202);
    const deliveryId = redelivered.body.deliveryId;
    expect(deliveryId).toMatch(/^whd_/);
    expect(deliveryId).not.toBe(original);

    const listed = (await admin.call('GET', path)).body.items;
    expect(listed.map((d: any) => d.id)).toEqual([deliveryId, original]);
    expect(listed[0]).toMatchObject({
      eventId: listed[1].eventId,
      type: 'evaluation.completed',
      status: 'pending',
      attempts: 0,
      lastStatusCode: null,
      lastError: null,
    });
    expect(new Date(listed[0].nextAttemptAt).getTime()).toBeLessThanOrEqual(Date.now());
    expect(listed[1]).toMatchObject({ status: 'failed', attempts: 8, lastError: 'HTTP 500' });
    expect((await rowsOf(org.id)).events).toHaveLength(1);
    expect(await auditOps(org.id)).toEqual(['webhook.create', 'webhook.redeliver']);
  });

  it('a delivery of another endpoint, or unknown, is 404 for detail and redeliver', async () => {
    const { org, admin } = await newTeam();
    const { webhook } = await create(admin, org.id);
    const other = (await create(admin, org.id, { url: publicUrl, events: ['warning.opened'] })).webhook;
    const delivery = await emitted(org.id); // to `webhook` only
    for (const id of [delivery, 'whd_00000000000000000000000000', 'nope']) {
      const path = `${hooks(org.id)}/${other.id}/deliveries/${id}`;
      expectError(await admin.call('GET', path), 404, 'not_found');
      expectError(await admin.call('POST', `${path}/redeliver`), 404, 'not_found');
    }
    expect((await rowsOf(org.id)).deliveries).toHaveLength(1);
    expect((await admin.call('GET', `${hooks(org.id)}/${webhook.id}/deliveries/${delivery}`)).status).toBe(200);
  });
});

describe('webhooks: who may', () => {
  it('editors and viewers get 403 admin_required on every route; nothing changes', async () => {
    const { org, admin, editor, viewer } = await newTeam();
    const { webhook } = await create(admin, org.id);
    const delivery = await emitted(org.id);
    const before = await rowsOf(org.id);
    const base = `${hooks(org.id)}/${webhook.id}`;
    const calls: [string, string, unknown?][] = [
      ['GET', hooks(org.id)],
      ['POST', hooks(org.id), body],
      ['GET', base],
      ['PATCH', base, { enabled: false }],
      ['DELETE', base],
      ['POST', `${base}/test`],
      ['GET', `${base}/deliveries`],
      ['GET', `${base}/deliveries/${delivery}`],
      ['POST', `${base}/deliveries/${delivery}/redeliver`],
    ];
    for (const user of [editor, viewer])
      for (const [method, path, input] of calls)
        expectError(await user.call(method, path, { body: input }), 403, 'admin_required');
    expect(await rowsOf(org.id)).toEqual(before);
    expect(await auditOps(org.id)).toEqual(['webhook.create']);
  });

  it('a non-member gets 404 not_found', async () => {
    const { org } = await newTeam();
    const outsider = await newUser();
    await newOrganization(outsider);
    expectError(await outsider.call('GET', hooks(org.id)), 404, 'not_found');
    expectError(await outsider.call('POST', hooks(org.id), { body }), 404, 'not_found');
    expect((await rowsOf(org.id)).webhooks).toHaveLength(0);
  });

  it('a read-only organization: reads answer, writes are 403 read_only and change nothing', async () => {
    const { org, admin } = await newTeam();
    const { webhook } = await create(admin, org.id);
    const delivery = await emitted(org.id);
    await setReadOnly(org.id, true);
    const before = await rowsOf(org.id);
    const base = `${hooks(org.id)}/${webhook.id}`;
    expect((await admin.call('GET', hooks(org.id))).status).toBe(200);
    expect((await admin.call('GET', base)).status).toBe(200);
    expect((await admin.call('GET', `${base}/deliveries`)).status).toBe(200);
    expect((await admin.call('GET', `${base}/deliveries/${delivery}`)).status).toBe(200);
    expectError(await admin.call('POST', hooks(org.id), { body }), 403, 'read_only');
    expectError(await admin.call('PATCH', base, { body: { enabled: false } }), 403, 'read_only');
    expectError(await admin.call('DELETE', base), 403, 'read_only');
    expectError(await admin.call('POST', `${base}/test`), 403, 'read_only');
    expectError(await admin.call('POST', `${base}/deliveries/${delivery}/redeliver`), 403, 'read_only');
    expect(await rowsOf(org.id)).toEqual(before);
    expect(await auditOps(org.id)).toEqual(['webhook.create']);
  });
});
