import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import type PgBoss from 'pg-boss';
import { Webhook } from 'standardwebhooks';
import { getDatabase, getDb } from '@/db/client';
import { organizations, webhookDeliveries, webhookEvents, webhooks } from '@/db/schema';
import { runInTransaction } from '@/server/context';
import { seal } from '@/server/credentials/sealed';
import { startBoss } from '@/server/evals/engine/boss';
import { newId } from '@/server/ids';
import { raiseWarning } from '@/server/warnings/service';
import type { WebhookEventType } from '@/server/webhooks/schemas';
import { emitEvent } from '@/server/webhooks/outbox';
import { startWebhookWorker, type WorkerSettings } from '@/server/webhooks/worker';

// Fixtures for the webhook delivery tests: organizations, endpoints and events written directly
// (an endpoint row with its sealed secret; events through the outbox's emitEvent in a transaction,
// as a service does), a real local receiver (node:http) that records every request, and the real
// worker (pg-boss on the test database).

export const testPolicy = () => ({ allowHttp: true, allowPrivate: true });

export async function deliveryOrganization(): Promise<string> {
  const db = await getDb();
  const id = newId('org');
  await db.insert(organizations).values({ id, name: `Hooks ${id.slice(-6)}`, createdBy: 'test' });
  return id;
}

export const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

export async function createWebhookRow(options: {
  organizationId: string;
  url: string;
  events?: WebhookEventType[];
  secret?: string;
}): Promise<{ id: string; secret: string }> {
  const db = await getDb();
  const id = newId('whk');
  const secret = options.secret ?? newSecret();
  await db.insert(webhooks).values({
    id,
    organizationId: options.organizationId,
    url: options.url,
    events: options.events ?? ['prompt.version.created'],
    secretSealed: seal('webhook-secrets', secret),
    createdBy: 'test',
  });
  return { id, secret };
}

/** Emits one event in its own committed transaction; its id (the `webhook-id`) and delivery ids. */
export async function emit(
  organizationId: string,
  data: unknown,
  type: WebhookEventType = 'prompt.version.created',
): Promise<{ eventId: string; deliveryIds: string[] }> {
  const db = await getDb();
  const deliveryIds = await runInTransaction(db, (tx, afterCommit) =>
    emitEvent({ db: tx, afterCommit }, { organizationId, type, data }),
  );
  const [row] = deliveryIds.length
    ? await db
        .select({ eventId: webhookDeliveries.eventId })
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.id, deliveryIds[0]))
    : [];
  return { eventId: row?.eventId ?? '', deliveryIds };
}

export async function deliveryRow(id: string) {
  const db = await getDb();
  const [row] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id));
  return row;
}

export async function webhookRow(id: string) {
  const db = await getDb();
  const [row] = await db.select().from(webhooks).where(eq(webhooks.id, id));
  return row;
}

export async function eventRow(id: string) {
  const db = await getDb();
  const [row] = await db.select().from(webhookEvents).where(eq(webhookEvents.id, id));
  return row;
}

export type Received = {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
  // Settles when the client closes the request's connection or the exchange ends.
  closed: Promise<void>;
};

export type Receiver = {
  url: string;
  port: number;
  requests: Received[];
  // How to answer; default 200 "ok". The n-th request (0-based) overall.
  answer: (req: Received, res: ServerResponse, n: number) => void;
  close: () => Promise<void>;
};

export async function startReceiver(answer?: Receiver['answer']): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    port: 0,
    requests: [],
    answer: answer ?? ((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok')),
    close: async () => {},
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const closed = new Promise<void>((resolve) => res.once('close', () => resolve()));
      const received: Received = {
        path: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
        closed,
      };
      const n = receiver.requests.push(received) - 1;
      receiver.answer(received, res, n);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}`;
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return receiver;
}

const header = (r: Received, name: string) => String(r.headers[name] ?? '');

/** Verifies one request with the official package (the timestamp within its 5-minute tolerance). */
export function verified(r: Received, secret: string): unknown {
  return new Webhook(secret).verify(r.body, {
    'webhook-id': header(r, 'webhook-id'),
    'webhook-timestamp': header(r, 'webhook-timestamp'),
    'webhook-signature': header(r, 'webhook-signature'),
  });
}

/** The signature the official package computes for the request's own id and timestamp (a test clock far from now). */
export function expectedSignature(r: Received, secret: string): string {
  return new Webhook(secret).sign(
    header(r, 'webhook-id'),
    new Date(Number(header(r, 'webhook-timestamp')) * 1000),
    r.body,
  );
}

export async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A clock the test moves by hand (starts now). */
export function testClock(): { now: () => Date; advance: (ms: number) => void } {
  let offset = 0;
  return { now: () => new Date(Date.now() + offset), advance: (ms) => (offset += ms) };
}

let boss: PgBoss | undefined;

/** This test file's pg-boss on its database (stopped by stopDeliveryBoss). */
export async function deliveryBoss(): Promise<PgBoss> {
  boss ??= await startBoss(await getDatabase(), process.env.DATABASE_URL || undefined);
  return boss;
}

/** The real worker on this file's database. */
export async function startDeliveryWorker(settings: Partial<WorkerSettings> = {}) {
  return startWebhookWorker({
    database: await getDatabase(),
    boss: await deliveryBoss(),
    raiseWarning,
    settings: { policy: testPolicy, sweepMs: 100, jitter: 0, ...settings },
  });
}

export async function stopDeliveryBoss(): Promise<void> {
  await boss?.stop({ graceful: false, close: true, wait: true });
  boss = undefined;
}
