import { openDatabase } from '@/db/client';
import { startBoss } from '@/server/evals/engine/boss';
import { raiseWarning } from '@/server/warnings/service';
import { startWebhookWorker } from '@/server/webhooks/worker';

// A process that runs only the webhook delivery worker (tests/integration/webhooks.kill.test.ts),
// on DATABASE_URL, with a short lease (WEBHOOK_TEST_LEASE_MS) so the test that kills it does not
// wait for the default one. Everything else is the production worker: pg-boss, sweep, attempts.

const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL is required');
const database = await openDatabase({ url, max: 4 });
const boss = await startBoss(database, url);
await startWebhookWorker({
  database,
  boss,
  raiseWarning,
  settings: {
    leaseMs: Number(process.env.WEBHOOK_TEST_LEASE_MS ?? 30_000),
    policy: () => ({ allowHttp: true, allowPrivate: true }),
  },
});
console.log('webhook worker ready');
