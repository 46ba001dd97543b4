import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Webhook } from 'standardwebhooks';
import { migrate, openDatabase, type Db } from '../db/client';
import { organizations, webhookDeliveries, webhookEvents, webhooks } from '../db/schema';
import { runInTransaction } from '../server/context';
import { seal } from '../server/credentials/sealed';
import { startBoss } from '../server/evals/engine/boss';
import { newId } from '../server/ids';
import { raiseWarning } from '../server/warnings/service';
import { postWebhook } from '../server/webhooks/deliver';
import { emitEvent } from '../server/webhooks/outbox';
import { signedHeaders } from '../server/webhooks/signing';
import { systemResolver } from '../server/webhooks/targets';
import { startWebhookWorker } from '../server/webhooks/worker';
import { percentile, withFreshDatabase } from './fresh-database';

// Webhook delivery (`npm run -s bench -- webhooks`): events emitted in their own transactions on a
// fresh Postgres database, delivered by the real worker (pg-boss, claim, signed POST, outcome) in
// this process — the all-in-one role, where the outbox's doorbell rings in-process — to a local
// receiver that verifies every request with the standardwebhooks package. The baseline, in the same
// run: a plain loop POSTing the same signed bodies to the same receiver through the same HTTP code
// (postWebhook: target checks, keep-alive, 4 KiB read) with the same concurrency, no database.
// 1. Drain: BENCH_WEBHOOK_BACKLOG events committed while no worker runs, then a worker starts:
//    deliveries/s from its start to the last receipt, against the plain loop's POSTs/s.
// 2. Live burst: BENCH_WEBHOOK_EVENTS events from 8 concurrent emitters while the worker runs:
//    commits/s, deliveries/s and commit-to-receipt latency (the emitters are the limit here).
// 3. Paced: BENCH_WEBHOOK_RATE events/s for BENCH_WEBHOOK_SECONDS; commit-to-receipt latency
//    p50/p95/p99, against the plain POST's latency at the same pace.

const backlogEvents = Number(process.env.BENCH_WEBHOOK_BACKLOG ?? 2000);
const burstEvents = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 1000);
const pacedRate = Number(process.env.BENCH_WEBHOOK_RATE ?? 50);
const pacedSeconds = Number(process.env.BENCH_WEBHOOK_SECONDS ?? 10);
const emitters = 8;
const concurrency = Number(process.env.BENCH_WEBHOOK_CONCURRENCY ?? 16);
// Guards against an order-of-magnitude regression (measured 0.07–0.11× on the shared 2-core machine:
// each delivery is two statements and a share of pg-boss's, the plain loop none; docs/performance.md).
const targets = { drainRatio: 0.05, pacedP99Ms: 250 };

type Receipts = Map<string, number>; // webhook-id → performance.now() at receipt

async function startReceiver(secret: string): Promise<{
  url: string;
  receipts: () => Receipts;
  reset: () => void;
  invalid: () => number;
  duplicates: () => number;
  close: () => Promise<void>;
}> {
  const verifier = new Webhook(secret);
  let receipts: Receipts = new Map();
  let invalid = 0;
  let duplicates = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      const id = String(req.headers['webhook-id']);
      try {
        verifier.verify(Buffer.concat(chunks).toString('utf8'), req.headers as Record<string, string>);
      } catch {
        invalid++;
      }
      if (receipts.has(id)) duplicates++;
      else receipts.set(id, at);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    receipts: () => receipts,
    reset: () => {
      receipts = new Map();
      invalid = 0;
      duplicates = 0;
    },
    invalid: () => invalid,
    duplicates: () => duplicates,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function waitFor(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

// Emits one event in its own transaction; its id (the webhook-id) and the time of its commit.
async function emitOne(db: Db, organizationId: string, n: number): Promise<{ id: string; committedAt: number }> {
  const { id } = await runInTransaction(db, async (tx, afterCommit) => {
    const [deliveryId] = await emitEvent(
      { db: tx, afterCommit },
      { organizationId, type: 'prompt.version.created', data: { n, padding: 'x'.repeat(400) } },
    );
    return { id: deliveryId };
  });
  return { id, committedAt: performance.now() };
}

const ms = (v: number) => v.toFixed(1);
const latencyLine = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return `p50 ${ms(percentile(sorted, 50))} / p95 ${ms(percentile(sorted, 95))} / p99 ${ms(percentile(sorted, 99))} ms`;
};

export function main(): Promise<boolean> {
  return withFreshDatabase(run);
}

type Emitted = { id: string; committedAt: number };

// `count` events from `emitters` concurrent emitters, each in its own transaction.
async function emitMany(db: Db, organizationId: string, count: number): Promise<Emitted[]> {
  const emitted: Emitted[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: emitters }, async () => {
      while (next < count) emitted.push(await emitOne(db, organizationId, next++));
    }),
  );
  return emitted;
}

async function run(databaseUrl: string): Promise<boolean> {
  const database = await openDatabase({ url: databaseUrl, max: 10 });
  await migrate(database);
  const db = database.db;
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const receiver = await startReceiver(secret);
  const boss = await startBoss(database, databaseUrl);
  const policy = () => ({ allowHttp: true, allowPrivate: true });
  const startWorker = () => startWebhookWorker({ database, boss, raiseWarning, settings: { policy, concurrency } });
  let worker = await startWorker();
  let clean = true;
  const checkClean = () => (clean &&= receiver.invalid() === 0 && receiver.duplicates() === 0);
  try {
    const organizationId = newId('org');
    await db.insert(organizations).values({ id: organizationId, name: 'Bench', createdBy: 'bench' });
    await db.insert(webhooks).values({
      id: newId('whk'),
      organizationId,
      url: receiver.url,
      events: ['prompt.version.created'],
      secretSealed: seal('webhook-secrets', secret),
      createdBy: 'bench',
    });
    // Delivery id → event id (the webhook-id the receiver keys on), and the stored payloads.
    const eventIds = async (emitted: Emitted[]) => {
      const rows = await db
        .select({ id: webhookDeliveries.id, eventId: webhookDeliveries.eventId })
        .from(webhookDeliveries);
      const byDelivery = new Map(rows.map((r) => [r.id, r.eventId]));
      return emitted.map((e) => byDelivery.get(e.id)!);
    };
    const payloads = async (ids: string[]) => {
      const rows = await db.select({ id: webhookEvents.id, payload: webhookEvents.payload }).from(webhookEvents);
      const byId = new Map(rows.map((r) => [r.id, r.payload]));
      return ids.map((id) => ({ id, payload: byId.get(id)! }));
    };
    const plainPost = (event: { id: string; payload: string }) =>
      postWebhook(receiver.url, signedHeaders(secret, event.id, new Date(), event.payload), event.payload, {
        policy: policy(),
        resolve: systemResolver,
        timeoutMs: 10_000,
      });
    // The plain loop over `bodies` with the worker's concurrency: POSTs/s.
    const plainLoop = async (bodies: { id: string; payload: string }[]) => {
      const started = performance.now();
      let cursor = 0;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (cursor < bodies.length) {
            const result = await plainPost(bodies[cursor++]);
            if (result.error) throw new Error(`plain POST failed: ${result.error}`);
          }
        }),
      );
      return bodies.length / ((performance.now() - started) / 1000);
    };

    console.log(
      `Webhook delivery benchmark: drain of ${backlogEvents} events, live burst of ${burstEvents} (${emitters} emitters), then ${pacedRate}/s for ${pacedSeconds} s; worker concurrency ${concurrency}; receiver on loopback verifying every signature`,
    );
    // Warm-up: connections, prepared plans, pg-boss's first fetches.
    for (let i = 0; i < 100; i++) await emitOne(db, organizationId, -i);
    await waitFor('the warm-up', () => receiver.receipts().size >= 100, 60_000);
    receiver.reset();

    // 1. Drain.
    await worker.stop();
    const backlog = await emitMany(db, organizationId, backlogEvents);
    const backlogIds = await eventIds(backlog);
    const drainStarted = performance.now();
    const drainCpu = process.cpuUsage();
    worker = await startWorker();
    await waitFor('the backlog', () => receiver.receipts().size >= backlogEvents, 300_000);
    const drainReceipts = [...receiver.receipts().values()];
    const drainSeconds = (Math.max(...drainReceipts) - drainStarted) / 1000;
    const drainRate = backlogEvents / drainSeconds;
    const { user, system } = process.cpuUsage(drainCpu);
    const firstReceiptMs = Math.min(...drainReceipts) - drainStarted;
    checkClean();
    receiver.reset();
    const drainPlain = await plainLoop(await payloads(backlogIds));
    const drainRatio = drainRate / drainPlain;
    console.log(
      `  drain: ${backlogEvents} deliveries at ${drainRate.toFixed(0)}/s (worker start → last receipt; first receipt after ${firstReceiptMs.toFixed(0)} ms; this process ${(((user + system) / 1000 / (drainSeconds * 1000)) * 100).toFixed(0)}% of a CPU); plain POST loop ${drainPlain.toFixed(0)}/s; ratio ${drainRatio.toFixed(2)}×`,
    );

    // 2. Live burst.
    receiver.reset();
    const burst = await emitMany(db, organizationId, burstEvents);
    const committed = burst.map((e) => e.committedAt);
    const firstCommit = Math.min(...committed);
    const emitSeconds = (Math.max(...committed) - firstCommit) / 1000;
    await waitFor('the burst', () => receiver.receipts().size >= burstEvents, 300_000);
    const burstIds = await eventIds(burst);
    const receipts = receiver.receipts();
    const burstRate = burstEvents / ((Math.max(...receipts.values()) - firstCommit) / 1000);
    const burstLatency = burst.map((e, i) => receipts.get(burstIds[i])! - e.committedAt);
    checkClean();
    console.log(
      `  live burst: ${burstEvents} commits at ${(burstEvents / emitSeconds).toFixed(0)}/s; deliveries at ${burstRate.toFixed(0)}/s (first commit → last receipt); commit-to-receipt ${latencyLine(burstLatency)}`,
    );

    // 3. Paced.
    receiver.reset();
    const paced: Emitted[] = [];
    const total = pacedRate * pacedSeconds;
    const started = performance.now();
    const inFlight: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const wait = started + (i * 1000) / pacedRate - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      inFlight.push(emitOne(db, organizationId, i).then((e) => void paced.push(e)));
    }
    await Promise.all(inFlight);
    await waitFor('the paced events', () => receiver.receipts().size >= total, 120_000);
    const pacedIds = await eventIds(paced);
    const pacedLatency = paced.map((e, i) => receiver.receipts().get(pacedIds[i])! - e.committedAt);
    checkClean();

    receiver.reset();
    const pacedBodies = await payloads(pacedIds);
    const plainLatency: number[] = [];
    const plainStart = performance.now();
    const plainInFlight: Promise<void>[] = [];
    for (let i = 0; i < pacedBodies.length; i++) {
      const wait = plainStart + (i * 1000) / pacedRate - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const sent = performance.now();
      plainInFlight.push(plainPost(pacedBodies[i]).then(() => void plainLatency.push(performance.now() - sent)));
    }
    await Promise.all(plainInFlight);
    const pacedSorted = [...pacedLatency].sort((a, b) => a - b);
    const plainSorted = [...plainLatency].sort((a, b) => a - b);
    console.log(
      `  paced ${pacedRate}/s: commit-to-receipt ${latencyLine(pacedLatency)}; plain POST ${latencyLine(plainLatency)}; p50 ratio ${(percentile(pacedSorted, 50) / percentile(plainSorted, 50)).toFixed(1)}×`,
    );

    console.log(`${clean ? 'PASS' : 'FAIL'} every event received once, every signature valid`);
    const drainOk = drainRatio >= targets.drainRatio;
    console.log(`${drainOk ? 'PASS' : 'FAIL'} drain ≥ ${targets.drainRatio}× the plain POST loop`);
    const pacedOk = percentile(pacedSorted, 99) < targets.pacedP99Ms;
    console.log(`${pacedOk ? 'PASS' : 'FAIL'} paced commit-to-receipt p99 < ${targets.pacedP99Ms} ms`);
    return clean && drainOk && pacedOk;
  } finally {
    await worker.stop();
    await boss.stop({ graceful: false, close: true, wait: true });
    await receiver.close();
    await database.close();
  }
}
