import type PgBoss from 'pg-boss';
import type { Database } from '@/db/client';
import { log } from '../log';
import { attemptDefaults, attemptDelivery, dueDeliveries, type AttemptSettings, type SweepCursor } from './attempt';
import { registerDeliveryNotifier } from './outbox';

// The webhook delivery worker (API.md "Webhooks"): a pg-boss queue of { deliveryId } jobs (one
// queued job per delivery: singletonKey), sent by the outbox's doorbell after the commit and by a
// sweep every few seconds that queues every pending delivery that is due — a lost job, a retry
// whose time has come, or a delivery whose worker was killed (its lease ran out). The jobs are only
// doorbells: the delivery row is the truth, and every attempt claims it first (attempt.ts), so a
// job worked twice, or by two processes, posts once.
//
// The worker fetches up to `concurrency` jobs (fewer while attempts are in flight), completes them
// at once and runs their attempts side by side; it fetches again when a slot frees, when the
// doorbell rings in this process, or every `pollMs`. pg-boss is the process's one instance (the
// evaluation engine's, server/evals/engine/boss.ts), handed in by the entry.

const webhookDeliveryQueue = 'webhook-delivery';
type DeliveryJob = { deliveryId: string };

export type WorkerSettings = AttemptSettings & {
  concurrency: number;
  pollMs: number;
  sweepMs: number;
  sweepLimit: number;
};

const workerDefaults = { concurrency: 16, pollMs: 1_000, sweepMs: 2_000, sweepLimit: 2_000 };

async function createDeliveryQueue(boss: PgBoss): Promise<void> {
  // `short`: at most one queued job per delivery, while any number may be active. No pg-boss retry:
  // the sweep queues anything still due.
  await boss.createQueue(webhookDeliveryQueue, {
    name: webhookDeliveryQueue,
    policy: 'short',
    expireInSeconds: 60,
    retryLimit: 0,
    retentionMinutes: 60,
  });
}

async function sendDeliveries(boss: PgBoss, deliveryIds: string[]): Promise<void> {
  if (!deliveryIds.length) return;
  await boss.insert(
    deliveryIds.map((deliveryId) => ({
      name: webhookDeliveryQueue,
      data: { deliveryId } satisfies DeliveryJob,
      singletonKey: deliveryId,
    })),
  );
}

// The outbox has one doorbell per process; a stop only takes down its own.
let doorbellOwner: object | null = null;
function ownDoorbell(owner: object, ring: ((ids: string[]) => void) | null): void {
  if (ring) {
    doorbellOwner = owner;
    registerDeliveryNotifier(ring);
  } else if (doorbellOwner === owner) {
    doorbellOwner = null;
    registerDeliveryNotifier(null);
  }
}

// The doorbell: deliveries committed in the same turn of the event loop go to pg-boss in one insert.
function doorbell(boss: PgBoss, then?: () => void): (ids: string[]) => void {
  let pending: string[] = [];
  const flush = () => {
    const ids = pending;
    pending = [];
    sendDeliveries(boss, ids).then(then, (error: unknown) =>
      log.error({ err: error, deliveries: ids.length }, 'could not queue webhook deliveries; the sweep will'),
    );
  };
  return (ids) => {
    if (!pending.length) setImmediate(flush);
    pending.push(...ids);
  };
}

/** A process that emits events but delivers none (the web role): its doorbell queues the jobs. */
export async function startWebhookSender(boss: PgBoss): Promise<{ stop(): Promise<void> }> {
  await createDeliveryQueue(boss);
  const owner = {};
  ownDoorbell(owner, doorbell(boss));
  return { stop: async () => ownDoorbell(owner, null) };
}

export async function startWebhookWorker(options: {
  database: Database;
  boss: PgBoss;
  raiseWarning: AttemptSettings['raiseWarning'];
  settings?: Partial<WorkerSettings>;
}): Promise<{ stop(): Promise<void> }> {
  const { boss } = options;
  const db = options.database.db;
  const s: WorkerSettings = {
    ...attemptDefaults,
    ...workerDefaults,
    raiseWarning: options.raiseWarning,
    ...options.settings,
  };
  await createDeliveryQueue(boss);

  let stopping = false;
  const active = new Map<string, Promise<void>>(); // delivery id → its attempt in flight here
  let rung = false;
  let wake: (() => void) | null = null;
  const ring = () => {
    rung = true;
    wake?.();
  };

  const attempt = (deliveryId: string) => {
    if (active.has(deliveryId)) return;
    const work = attemptDelivery(db, deliveryId, s)
      .then(
        (outcome) => log.debug({ deliveryId, outcome }, 'webhook delivery attempt'),
        (error: unknown) =>
          log.error({ err: error, deliveryId }, 'webhook delivery attempt failed; the sweep will retry it'),
      )
      .finally(() => {
        active.delete(deliveryId);
        ring();
      });
    active.set(deliveryId, work);
  };

  const loop = async () => {
    while (!stopping) {
      if (active.size < s.concurrency) {
        rung = false;
        try {
          const jobs = await boss.fetch<DeliveryJob>(webhookDeliveryQueue, {
            batchSize: s.concurrency - active.size,
          });
          if (jobs.length) {
            for (const job of jobs) if (!stopping) attempt(job.data.deliveryId);
            // Done with the doorbells (not awaited: the attempts need nothing from it).
            boss
              .complete(
                webhookDeliveryQueue,
                jobs.map((job) => job.id),
              )
              .catch((error: unknown) => log.warn({ err: error }, 'could not complete webhook delivery jobs'));
            continue;
          }
        } catch (error) {
          if (!stopping) log.error({ err: error }, 'could not fetch webhook delivery jobs');
        }
      }
      if (stopping) break;
      // Rung while fetching, and a slot is free: fetch again now. Otherwise wait for a ring (the
      // doorbell, the sweep, an attempt that ends) or the poll.
      if (rung && active.size < s.concurrency) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, s.pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
    }
  };

  // A backlog larger than a page is swept one page per round, each after the last (so a page is
  // not the same oldest rows again while they wait in the queue); a short page starts over.
  let sweeping = false;
  let cursor: SweepCursor | null = null;
  const sweep = async () => {
    if (sweeping || stopping) return;
    sweeping = true;
    try {
      const page = await dueDeliveries(db, s.now(), s.sweepLimit, cursor);
      cursor = page.length === s.sweepLimit ? page[page.length - 1] : null;
      const due = page.map((row) => row.id).filter((id) => !active.has(id));
      if (due.length) {
        await sendDeliveries(boss, due);
        ring();
      }
    } catch (error) {
      log.error({ err: error }, 'webhook delivery sweep failed');
    } finally {
      sweeping = false;
    }
  };

  const owner = {};
  ownDoorbell(owner, doorbell(boss, ring));
  const looping = loop();
  const sweepTimer = setInterval(() => void sweep(), s.sweepMs);
  void sweep();
  log.info({ concurrency: s.concurrency }, 'webhook delivery worker started');

  let stopped: Promise<void> | undefined;
  return {
    stop() {
      // No new attempts; those in flight finish (each is bounded by its timeout) or are left to
      // their lease. pg-boss itself is stopped by its owner.
      stopped ??= (async () => {
        stopping = true;
        clearInterval(sweepTimer);
        ownDoorbell(owner, null);
        ring();
        await looping;
        await Promise.race([
          Promise.allSettled([...active.values()]),
          new Promise((resolve) => setTimeout(resolve, s.timeoutMs + 5_000).unref()),
        ]);
        log.info('webhook delivery worker stopped');
      })();
      return stopped;
    },
  };
}
