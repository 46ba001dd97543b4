import cluster from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { getDatabase, setPoolSize } from '@/db/client';
import { canSellPro, config } from './config';
import { log, logRequest, requestIdOf } from './log';
import { errorBody, newRequestId } from './api/http';
import { createGuardedServer } from './api/entry-socket';
import { AppError } from './errors';
import { purgeExpired } from './housekeeping';
import { endLapsedSubscriptions } from './billing/state';
import { startWarningChecks } from './warnings/checks';
import { ingestPath, serveIngest } from './api/ingest';
import { otlpTracesPath, serveOtlp } from './api/otlp';
import { loopbackRedirect } from './http/loopback';
import { isRetrievalPath, serveRetrieval } from './api/retrieval';
import { flushRetrievalActivity } from './retrieval/activity';
import { stopAnswerCache } from './retrieval/answer-cache';
import { startEvalSender, startEvalWorker } from './evals/engine/worker';
import { startWebhookSender, startWebhookWorker } from './webhooks/worker';
import { raiseWarning } from './warnings/service';
import { startOnlineEvaluation } from './online/worker';
import { exitAfterStop, onStop } from './stop';
import { checkRetrievalStandby } from './standby';
import { dropExpiredTracePartitions, prepareTraceStore } from './traces/retention';
import { stopWhenNpmExits } from '../scripts/launcher.mjs';
import { configuredRoutes } from './models/routes';

type Role = 'all' | 'web' | 'ingest' | 'retrieval' | 'worker';
type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function parseRole(argv: string[]): Role {
  const arg = argv.find((a) => a.startsWith('--role='));
  // `--role ingest` (a space, not `=`) would otherwise start the all-in-one process without a word.
  const spaced = argv.indexOf('--role');
  const role = (arg?.slice('--role='.length) ??
    (spaced >= 0 ? `--role ${argv[spaced + 1] ?? ''}`.trim() : 'all')) as Role;
  if (!['all', 'web', 'ingest', 'retrieval', 'worker'].includes(role)) {
    console.error(
      `Unknown role "${role}". Use --role=web, --role=ingest, --role=retrieval or --role=worker (default: all in one process).`,
    );
    process.exit(2);
  }
  return role;
}

// next-auth needs a stable secret; a fresh install gets one generated and kept under .data/.
function ensureAuthSecret(): void {
  process.env.NEXTAUTH_URL ??= config().appUrl;
  if (process.env.NEXTAUTH_SECRET) return;
  const dir = path.join(root, '.data');
  const file = path.join(dir, 'auth-secret');
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, randomBytes(32).toString('base64url'), { mode: 0o600 });
  }
  process.env.NEXTAUTH_SECRET = readFileSync(file, 'utf8').trim();
}

function requestPath(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

// Hot paths (DESIGN.md "Processes"): served straight from node:http, before Next's request
// pipeline. Each handler answers every method on its path itself (405 for the wrong one).
type HotPath = { role: 'ingest' | 'retrieval'; what: string; matches: (path: string) => boolean; serve: Handler };
const hotPaths: HotPath[] = [
  { role: 'ingest', what: 'POST /api/v1/traces', matches: (path) => path === ingestPath, serve: serveIngest },
  {
    role: 'ingest',
    what: 'POST /api/v1/otel/v1/traces',
    matches: (path) => path === otlpTracesPath,
    serve: serveOtlp,
  },
  { role: 'retrieval', what: 'GET /api/v1/prompts/{promptId}', matches: isRetrievalPath, serve: serveRetrieval },
];

function hotPathFor(req: IncomingMessage, table: HotPath[]): Handler | null {
  const path = requestPath(req);
  for (const hot of table) if (hot.matches(path)) return hot.serve;
  return null;
}

// What a role's own process serves: "POST /api/v1/traces and POST /api/v1/otel/v1/traces".
function servedBy(role: Role): string {
  return hotPaths
    .filter((hot) => hot.role === role)
    .map((hot) => hot.what)
    .join(' and ');
}

function notHere(role: Role): Handler {
  const what = servedBy(role);
  return (_req, res) => {
    const requestId = newRequestId();
    res.writeHead(404, { 'content-type': 'application/json', 'x-request-id': requestId, 'cache-control': 'no-store' });
    res.end(JSON.stringify(errorBody(new AppError('not_found', `This process serves ${what} only.`), requestId)));
  };
}

// The ingest and retrieval roles serve only their hot path and never load Next; web and all send
// the hot paths to their handlers and everything else to Next.
async function buildHandler(role: Role): Promise<Handler | null> {
  if (role === 'worker') return null;
  if (role === 'ingest' || role === 'retrieval') {
    const own = hotPaths.filter((hot) => hot.role === role);
    const refuse = notHere(role);
    return (req, res) => (hotPathFor(req, own) ?? refuse)(req, res);
  }
  const { default: next } = await import('next');
  const app = next({ dev: false, dir: root, port: config().port, hostname: 'localhost' });
  await app.prepare();
  const handle = app.getRequestHandler();
  const { answerBeforeNext } = await import('./api/entry-guard');
  return (req, res) => {
    const hot = hotPathFor(req, hotPaths);
    if (hot) return hot(req, res);
    if (answerBeforeNext(req, res)) return;
    const moved = loopbackRedirect(
      { method: req.method, url: req.url, host: req.headers.host, accept: req.headers.accept },
      config().appUrl,
    );
    if (moved) return void res.writeHead(307, { location: moved, 'cache-control': 'no-store' }).end();
    // Next's handlers learn the peer address only from this header (server/credentials/client-ip.ts);
    // a copy sent by the client is dropped first.
    delete req.headers['x-promptloop-client-ip'];
    if (req.socket.remoteAddress) req.headers['x-promptloop-client-ip'] = req.socket.remoteAddress;
    return handle(req, res);
  };
}

function withRequestLog(handler: Handler): Handler {
  return (req, res) => {
    const started = performance.now();
    res.on('finish', () => {
      const path = (req.url ?? '/').split('?')[0];
      if (path.startsWith('/_next/static')) return;
      logRequest(
        requestIdOf(res),
        req.method,
        path,
        res.statusCode,
        Math.round((performance.now() - started) * 10) / 10,
      );
    });
    // A synchronous answer (retrieval from memory) stays synchronous: no promise per request.
    try {
      const done = handler(req, res);
      if (done instanceof Promise) return done.catch((error: unknown) => unhandled(error, res));
    } catch (error) {
      unhandled(error, res);
    }
  };
}

function unhandled(error: unknown, res: ServerResponse): void {
  log.error({ err: error }, 'unhandled request error');
  if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
  res.end();
}

// Hourly, and once at start: expired idempotency records and deletion links are removed.
// Every minute: subscriptions cancelled for a period end that has passed end Pro (billing/state.ts).
// Trace retention rides along: partitions created ahead (at start main has just done it), and those
// whose week has passed dropped.
function startHousekeeping(database: Awaited<ReturnType<typeof getDatabase>>, keepAlive: boolean): void {
  const { db } = database;
  const run = (prepared = false) =>
    Promise.all([
      purgeExpired(db).then(
        (removed) => log.info({ job: 'purgeExpired', ...removed }, 'housekeeping'),
        (error: unknown) => log.error({ job: 'purgeExpired', err: error }, 'housekeeping failed'),
      ),
      (prepared ? Promise.resolve(0) : prepareTraceStore(db))
        .then(async (created) => ({ created, dropped: await dropExpiredTracePartitions(database) }))
        .then(
          ({ created, dropped }) => log.info({ job: 'traceRetention', created, dropped }, 'housekeeping'),
          (error: unknown) => log.error({ job: 'traceRetention', err: error }, 'housekeeping failed'),
        ),
    ]);
  void run(true);
  const timer = setInterval(run, 60 * 60 * 1000);
  // Every minute: organizations whose cancelled subscription reached its period end go to Free.
  const lapse = () =>
    endLapsedSubscriptions(db).then(
      (moved) => moved > 0 && log.info({ job: 'endLapsedSubscriptions', moved }, 'housekeeping'),
      (error: unknown) => log.error({ job: 'endLapsedSubscriptions', err: error }, 'housekeeping failed'),
    );
  void lapse();
  const lapseTimer = setInterval(lapse, 60 * 1000);
  // A worker has nothing else to keep it running; the web process has its server.
  if (!keepAlive) {
    timer.unref();
    lapseTimer.unref();
  }
}

// The ingest role on Postgres runs INGEST_PROCESSES copies of itself (node:cluster, one shared
// port): a batch is CPU work in JavaScript (parse, validate, digest) before its one database call.
async function forkIngestProcesses(count: number): Promise<void> {
  const database = await getDatabase(); // migrate once, before the copies start (each prepares the trace store)
  await database.close();
  // The copies run this file (also when `npm start` runs it inside scripts/start.mjs).
  cluster.setupPrimary({
    exec: fileURLToPath(import.meta.url),
    execArgv: process.execArgv.includes('tsx') ? process.execArgv : [...process.execArgv, '--import', 'tsx'],
  });
  for (let i = 0; i < count; i++) cluster.fork();
  let running = count;
  cluster.on('exit', () => {
    running -= 1;
    if (running === 0) process.exit(0);
  });
  onStop(() => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
  });
}

async function main(): Promise<void> {
  stopWhenNpmExits();
  const role = parseRole(process.argv.slice(2));
  ensureAuthSecret();
  const cfg = config();
  // A malformed MODEL_ROUTES stops the start with its reason, rather than every draft save and model
  // list answering 500 later (the table is read again on each lookup).
  if (role !== 'ingest' && role !== 'retrieval') {
    try {
      configuredRoutes();
    } catch (error) {
      console.error(`${(error as Error).message} See MODEL_ROUTES in the README.`);
      process.exit(2);
    }
  }
  // Ingest processes make one heavy call per batch: two connections each carried more batches than
  // ten on the 2-core machine (fewer busy backends contending), see docs/performance.md.
  if (role === 'ingest') setPoolSize(cfg.ingestDbConnections);
  if (role === 'ingest' && cluster.isPrimary && cfg.databaseUrl && cfg.ingestProcesses > 1) {
    await forkIngestProcesses(cfg.ingestProcesses);
    return;
  }
  console.log(
    cfg.databaseUrl
      ? 'Migrating the database (DATABASE_URL)…'
      : `Migrating the database (embedded PGlite in ${cfg.dataDir})…`,
  );
  const database = await getDatabase();
  // Retention days where ingestion reads them, and the partitions a trace stored now needs.
  await prepareTraceStore(database.db);
  // The roles that serve requests read retrieval's standby (retrieval) or wait for it (management
  // writes): a wrong RETRIEVAL_DATABASE_URL stops the process here, with the reason (docs/deploy.md).
  if (cfg.retrievalDatabaseUrl && (role === 'all' || role === 'web' || role === 'retrieval')) {
    const kind = await checkRetrievalStandby(database);
    if (kind === 'primary')
      log.warn('RETRIEVAL_DATABASE_URL is not a standby: retrieval reads it as it is, without waiting');
    else log.info({ role }, 'retrieval reads the standby of RETRIEVAL_DATABASE_URL');
  }
  // Checkout works with a key and a price, but only Stripe's events change a plan (API.md): without a
  // webhook secret every event is refused, so a customer could pay and never get Pro.
  if (canSellPro() && cfg.stripeWebhookSecrets.length === 0 && (role === 'all' || role === 'web'))
    log.warn(
      'STRIPE_SECRET_KEY and STRIPE_PRICE_PRO are set but STRIPE_WEBHOOK_SECRET is not: Stripe events are refused (503), so no checkout can ever change a plan. Set STRIPE_WEBHOOK_SECRET to the endpoint secret of POST /api/webhooks/stripe.',
    );
  if (role === 'all' || role === 'worker') startHousekeeping(database, role === 'worker');
  if (role === 'all' || role === 'worker') startWarningChecks(database.db, role === 'worker');
  // Evaluation runs: worked here in roles all and worker; the web role only queues them.
  const evals =
    role === 'all' || role === 'worker'
      ? await startEvalWorker({ database })
      : role === 'web'
        ? await startEvalSender(database)
        : null;
  // Webhook deliveries, on the same pg-boss: sent here in roles all and worker; the web role queues them.
  const hooks = !evals
    ? null
    : role === 'web'
      ? await startWebhookSender(evals.boss)
      : await startWebhookWorker({ database, boss: evals.boss, raiseWarning });
  // Online evaluation of production spans: sampled and scored here, never on the ingestion path.
  const online = role === 'all' || role === 'worker' ? startOnlineEvaluation(database.db) : null;
  const stopWorkers = () => Promise.all([evals?.stop(), hooks?.stop(), online?.stop()]);
  const handler = await buildHandler(role);
  if (!handler) {
    log.info({ role }, 'worker started');
    // Finish the cases, webhook attempts and online scores in flight, leave eval_workers, close the pool, exit.
    onStop(() => exitAfterStop(stopWorkers().finally(() => database.close())));
    return;
  }
  if (role === 'all' || role === 'web') console.log('Starting the web server…');
  const server = createGuardedServer(withRequestLog(handler));
  await new Promise<void>((resolve) => server.listen(cfg.port, resolve));
  const where = database.kind === 'postgres' ? 'Postgres (DATABASE_URL)' : `embedded PGlite in ${cfg.dataDir}`;
  log.info({ role, port: cfg.port, database: database.kind }, 'listening');
  const own = servedBy(role);
  const serves = own ? `Serves: ${own} only` : `API: ${cfg.appUrl}/api/v1/openapi.json`;
  console.log(`\n  Promptloop is ready (role: ${role}) → ${cfg.appUrl}\n  Database: ${where}\n  ${serves}\n`);

  // Stop accepting, let in-flight requests finish (idle keep-alive connections close at once, the
  // rest after 10 s), stop the worker, write retrieval's batched activity (key last use,
  // archived use), leave retrieval_caches (writers stop waiting for this process), close the pool, exit 0.
  onStop(() => {
    const evalsStopped = stopWorkers();
    const drained = new Promise<void>((resolve) => server.close(() => resolve()));
    const force = setTimeout(() => server.closeAllConnections(), 10_000);
    exitAfterStop(
      Promise.all([drained.finally(() => clearTimeout(force)), evalsStopped])
        .then(() =>
          flushRetrievalActivity().catch((error: unknown) =>
            log.error({ err: error }, 'retrieval activity flush failed at shutdown'),
          ),
        )
        .then(() => stopAnswerCache(database))
        .finally(() => database.close()),
    );
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
