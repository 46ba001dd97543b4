import { spawn, type ChildProcess } from 'node:child_process';
import type { ServerResponse } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedDatabase } from '../helpers/evals-engine';
import {
  createWebhookRow,
  deliveryOrganization,
  deliveryRow,
  emit,
  startReceiver,
  verified,
  waitFor,
  type Receiver,
} from '../helpers/webhook-delivery';

// A worker process killed with SIGKILL while its attempts are in flight loses no event: once the
// attempts' lease has run out, the next worker (the real `--role=worker` process) sends them again
// with the same webhook-id, and sends what was emitted while no worker ran.
//
// Postgres only: on PGlite the database is embedded in the test process, so no second process can
// open it (the PGlite suite covers the same claim and lease code in webhooks.delivery.test.ts).

const root = path.resolve(import.meta.dirname, '../..');
const testServer = Boolean(process.env.DATABASE_URL);
const children = new Set<ChildProcess>();
let dropDatabase: () => Promise<void> = async () => {};
let receiver: Receiver | undefined;

// Both processes must open the webhook secrets sealed by this one.
const sealingSecret = 'webhooks-kill-test-sealing-secret';

function spawnWorker(args: string[], env: Record<string, string> = {}): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: process.env.DATABASE_URL,
      OAUTH_KEY_SECRET: sealingSecret,
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve(child.exitCode) : child.once('exit', resolve),
  );

beforeAll(async () => {
  dropDatabase = await isolatedDatabase();
  process.env.OAUTH_KEY_SECRET = sealingSecret;
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await receiver?.close();
  delete process.env.OAUTH_KEY_SECRET;
  await dropDatabase();
});

describe.skipIf(!testServer)('webhook worker process: killed mid-delivery', () => {
  it('a worker killed with SIGKILL mid-attempt loses nothing: the next worker delivers every event, same webhook-id', async () => {
    let holding = true;
    const held: ServerResponse[] = [];
    const rx = await startReceiver((_req, res) => {
      if (holding) held.push(res);
      else res.writeHead(200).end('ok');
    });
    receiver = rx;
    const organizationId = await deliveryOrganization();
    const hook = await createWebhookRow({ organizationId, url: `${rx.url}/kill` });

    // 1. A worker (a 2 s lease) takes five deliveries and posts them; the receiver holds every request.
    const first = spawnWorker(['tests/helpers/webhook-worker-process.ts'], { WEBHOOK_TEST_LEASE_MS: '2000' });
    const before = [];
    for (let i = 0; i < 5; i++) before.push(await emit(organizationId, { before: i }));
    await waitFor('five requests in flight', () => rx.requests.length === 5, 60_000);
    for (const e of before)
      expect(await deliveryRow(e.deliveryIds[0])).toMatchObject({ status: 'pending', attempts: 1 });

    // 2. Killed mid-attempt; two more events while no worker runs.
    first.kill('SIGKILL');
    await exited(first);
    const during = [await emit(organizationId, { during: 0 }), await emit(organizationId, { during: 1 })];
    for (const res of held) res.destroy();
    holding = false;

    // 3. The real worker role takes over once the leases end.
    const second = spawnWorker(['server/main.ts', '--role=worker']);
    const all = [...before, ...during];
    await waitFor(
      'every event delivered',
      async () =>
        (await Promise.all(all.map((e) => deliveryRow(e.deliveryIds[0])))).every((r) => r.status === 'delivered'),
      60_000,
    );

    for (const e of before) expect(await deliveryRow(e.deliveryIds[0])).toMatchObject({ attempts: 2, lastError: null });
    for (const e of during) expect(await deliveryRow(e.deliveryIds[0])).toMatchObject({ attempts: 1 });
    const heldIds = rx.requests.slice(0, 5).map((r) => r.headers['webhook-id']);
    const answeredIds = rx.requests.slice(5).map((r) => r.headers['webhook-id']);
    expect(heldIds.sort()).toEqual(before.map((e) => e.eventId).sort());
    expect(answeredIds.sort()).toEqual(all.map((e) => e.eventId).sort());
    for (const r of rx.requests) verified(r, hook.secret);

    // SIGTERM stops the worker role cleanly.
    second.kill('SIGTERM');
    expect(await exited(second)).toBe(0);
  }, 120_000);
});
